// The compiled parts of Boost.Asio and Boost.Beast, built once for the whole project (each is
// header-only; with *_SEPARATE_COMPILATION the other files see declarations only).
#include <boost/asio/impl/src.hpp>
#include <boost/beast/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
