// Between Boost.Beast's messages and the layer's (message.h): the parser set up with the limits,
// a parsed request turned into an HttpRequest (header count checked, target decoded), a parse
// error turned into its HTTP status, and an HttpResponse into a Beast response. Internal to
// src/http: the servers and clients of the project see only message.h.
#pragma once

#include <boost/beast/http.hpp>

#include <initializer_list>
#include <string_view>

#include "http/message.h"

namespace zeus::http::detail {

namespace bhttp = boost::beast::http;
using BeastRequest = bhttp::request<bhttp::string_body>;
using BeastResponse = bhttp::response<bhttp::string_body>;

// A request parser with the header and body byte limits of `limits`.
void apply_limits(const Limits& limits, bhttp::request_parser<bhttp::string_body>* parser);

// The status and message to answer a parse error `ec` of Beast's parser with (431 header limit,
// 413 body limit, 505 a well-formed version other than 1.x, 400 otherwise). Transfer codings
// (400/501) and Host are decided once the header is parsed, by header_checks.h.
// `received`: the bytes from the start of the request (to tell an unserved version, 505, from a
// malformed request line, 400).
std::pair<int, std::string> status_of_parse_error(const boost::system::error_code& ec,
                                                  std::string_view received, const Limits& limits);

// Moves a complete Beast request into *out. False (with *status, *why) when it has more header
// fields than the limit, a version other than 1.x, a target that is neither "/path?query", an
// http(s) URL nor "*" (OPTIONS only), or the method CONNECT.
bool from_beast(BeastRequest&& in, const Limits& limits, HttpRequest* out, int* status,
                std::string* why);

// The Beast response for `response`, for a request of HTTP version `version` (10/11) that
// asked for keep-alive (`keep_alive`); HEAD answers (`head`) keep Content-Length, lose the body;
// 204 and 304 answers have neither.
BeastResponse to_beast(HttpResponse&& response, int version, bool keep_alive, bool head);

// Fields that frame a message (Content-Length, Transfer-Encoding, Connection, Trailer,
// Keep-Alive, Upgrade): the layer sets them itself, whatever a header list says.
bool is_framing_field(std::string_view name);

// Adds `headers` to `fields` in order, every field kept (a repeated Set-Cookie stays two fields),
// but framing fields skipped and the fields named in `replaced` (set earlier by the layer: Server,
// Content-Type, Host, ...) replaced rather than repeated.
void add_fields(const Headers& headers, std::initializer_list<bhttp::field> replaced,
                bhttp::fields* fields);

}  // namespace zeus::http::detail
