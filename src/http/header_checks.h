// The checks a message's header must pass before its body is read (internal to src/http): the
// framing decision of RFC 9112 §6 and the request's Host (§3.2), made in one place for every
// server (session.cc, parse_request) and for the client (client.cc), on top of what Boost.Beast's
// parser already refuses (malformed Content-Length, Content-Length twice with different values,
// chunked next to Content-Length, chunked twice).
//
// Framing — the one rule that stops request smuggling: a message whose length two parsers could
// read differently is refused and its connection closed, never guessed at.
//   - Transfer-Encoding must be exactly `chunked` (one coding, no parameters, any case, once);
//   - a list ending in chunked with codings before it (`gzip, chunked`): 501 for a registered
//     coding the server does not implement (gzip, deflate, compress), 400 for anything else;
//   - a list not ending in chunked (`gzip`, `chunked, gzip`, `identity`): 400 — its length
//     cannot be determined (§6.3), so its body is never read as the next request;
//   - Transfer-Encoding next to Content-Length: 400 (§6.3 allows refusing; we always do);
//   - Transfer-Encoding on an HTTP/1.0 message: 400 (§6.1: its framing is faulty).
// Responses get the same rule (a client refuses what a server would), with status 0: the client
// turns the reason into an error of its own.
// Host (requests): HTTP/1.1 needs exactly one Host field (none or two: 400); its value must be a
// host with an optional port, or empty. Versions other than 1.0 and 1.1: 505.
// Line folding (obs-fold) is replaced by a space by Beast, as §5.2 allows.
// Thread-safety: stateless functions.
#pragma once

#include <optional>
#include <string>

#include <boost/beast/http/message.hpp>

namespace zeus::http::detail {

struct HeaderProblem {
  int status = 400;  // 400, 501 or 505 (requests); responses: the same codes, for the message
  std::string why;   // for {"message": ...} or the client's error
};

// What is wrong with a request's header, or nothing.
std::optional<HeaderProblem> check_request_header(
    const boost::beast::http::request_header<>& header);

// What is wrong with a response's framing, or nothing.
std::optional<HeaderProblem> check_response_header(
    const boost::beast::http::response_header<>& header);

}  // namespace zeus::http::detail
