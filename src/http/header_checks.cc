#include "http/header_checks.h"

#include <boost/beast/core/string.hpp>

#include <cctype>
#include <string_view>
#include <vector>

#include "http/uri.h"

namespace zeus::http::detail {
namespace {

namespace bhttp = boost::beast::http;

bool is_tchar(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (std::isalnum(u)) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

struct Coding {
  std::string name;  // lower-cased
  bool has_parameters = false;
};

// The codings of every Transfer-Encoding field, in order; false when an element is not
// `token *(; parameter)` (a quoted string, a stray character) or a field lists no coding at all
// (an empty `Transfer-Encoding:` beside another is read differently by different parsers).
bool split_codings(const bhttp::fields& fields, std::vector<Coding>* out) {
  for (const auto& field : fields) {
    if (field.name() != bhttp::field::transfer_encoding) continue;
    const size_t before = out->size();
    std::string_view rest(field.value().data(), field.value().size());
    while (true) {
      const size_t comma = rest.find(',');
      std::string_view element = trim(rest.substr(0, comma));
      if (!element.empty()) {  // empty list elements are ignored (RFC 9110 §5.6.1)
        Coding coding;
        const size_t semicolon = element.find(';');
        const std::string_view name = trim(element.substr(0, semicolon));
        if (name.empty()) return false;
        for (char c : name) {
          if (!is_tchar(c)) return false;
          coding.name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
        coding.has_parameters = semicolon != std::string_view::npos;
        if (coding.has_parameters && element.find('"') != std::string_view::npos) return false;
        out->push_back(std::move(coding));
      }
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    if (out->size() == before) return false;
  }
  return true;
}

std::string listed(const std::vector<Coding>& codings) {
  std::string text;
  for (const auto& c : codings) text += (text.empty() ? "" : ", ") + c.name;
  return text;
}

bool registered_but_unimplemented(const std::string& name) {
  return name == "gzip" || name == "x-gzip" || name == "deflate" || name == "compress" ||
         name == "x-compress";
}

std::optional<HeaderProblem> framing_problem(const bhttp::fields& fields, unsigned version,
                                             const char* message) {
  if (fields.count(bhttp::field::transfer_encoding) == 0) return std::nullopt;
  const std::string kind = message;
  const std::string fix = " (send the body with Content-Length, or with Transfer-Encoding: chunked alone)";
  if (version < 11) {
    return HeaderProblem{400, "malformed HTTP " + kind + ": Transfer-Encoding on an HTTP/1.0 " +
                                  kind + " (its length cannot be trusted)" + fix};
  }
  if (fields.count(bhttp::field::content_length) > 0) {
    return HeaderProblem{400, "malformed HTTP " + kind +
                                  ": both Transfer-Encoding and Content-Length (two readings of "
                                  "its length)" + fix};
  }
  std::vector<Coding> codings;
  if (!split_codings(fields, &codings) || codings.empty()) {
    return HeaderProblem{400, "malformed HTTP " + kind + ": the Transfer-Encoding header is not a "
                                  "list of transfer codings" + fix};
  }
  if (codings.size() == 1 && codings[0].name == "chunked" && !codings[0].has_parameters) {
    return std::nullopt;
  }
  if (codings.back().name != "chunked") {
    return HeaderProblem{400, "malformed HTTP " + kind + ": Transfer-Encoding '" +
                                  listed(codings) +
                                  "' does not end in chunked, so the body's length cannot be "
                                  "determined" + fix};
  }
  bool supportable = !codings.back().has_parameters;
  for (size_t i = 0; i + 1 < codings.size(); ++i) {
    supportable = supportable && registered_but_unimplemented(codings[i].name);
  }
  if (supportable) {
    return HeaderProblem{501, "transfer coding '" + listed(codings) + "' is not implemented" + fix};
  }
  return HeaderProblem{400, "malformed HTTP " + kind + ": Transfer-Encoding '" + listed(codings) +
                                "' (only chunked is understood, once and without parameters)" +
                                fix};
}

}  // namespace

std::optional<HeaderProblem> check_request_header(const bhttp::request_header<>& header) {
  const unsigned version = header.version();
  if (version != 10 && version != 11) {
    return HeaderProblem{505, "only HTTP/1.0 and HTTP/1.1 are served"};
  }
  const size_t hosts = header.count(bhttp::field::host);
  if (version == 11 && hosts != 1) {
    return HeaderProblem{400, hosts == 0 ? "malformed HTTP request: HTTP/1.1 needs a Host header"
                                         : "malformed HTTP request: more than one Host header"};
  }
  if (hosts > 1) return HeaderProblem{400, "malformed HTTP request: more than one Host header"};
  if (hosts == 1) {
    const auto value = header[bhttp::field::host];
    if (!is_host_and_port(std::string_view(value.data(), value.size()))) {
      return HeaderProblem{400, "malformed HTTP request: the Host header is not a host[:port]"};
    }
  }
  return framing_problem(header, version, "request");
}

std::optional<HeaderProblem> check_response_header(const bhttp::response_header<>& header) {
  return framing_problem(header, header.version(), "answer");
}

}  // namespace zeus::http::detail
