#include "zeusd/http_message.h"

#include <cstdint>
#include <optional>

namespace zeus::zeusd {
namespace {

constexpr size_t kMaxTargetBytes = 2048;
constexpr size_t kMaxMethodBytes = 16;

ParseResult error(int status, std::string message) {
  ParseResult result;
  result.status = ParseStatus::kError;
  result.error_status = status;
  result.error_message = std::move(message);
  return result;
}

ParseResult head_too_large(const HttpLimits& limits) {
  return error(
      431, "the message head is larger than " + std::to_string(limits.max_header_bytes) + " bytes");
}

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::string to_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = lower(c);
  return out;
}

bool is_tchar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// True when the comma-separated token list `value` contains `token` (case-insensitive).
bool has_token(std::string_view value, std::string_view token) {
  size_t start = 0;
  while (start <= value.size()) {
    size_t comma = value.find(',', start);
    if (comma == std::string_view::npos) comma = value.size();
    if (to_lower(trim(value.substr(start, comma - start))) == token) return true;
    start = comma + 1;
  }
  return false;
}

// What both parsers share: the start line, the headers and where the body begins.
struct Head {
  std::string start_line;
  std::vector<std::pair<std::string, std::string>> headers;
  size_t body_offset = 0;
  std::optional<uint64_t> content_length;
  bool transfer_encoding = false;
};

// Parses the head of a message. kComplete in `status` with *head filled, or incomplete/error.
ParseResult parse_head(std::string_view data, const HttpLimits& limits, Head* head) {
  size_t pos = 0;
  bool have_start_line = false;
  while (true) {
    const size_t newline = data.find('\n', pos);
    if (newline == std::string_view::npos) {
      if (data.size() > limits.max_header_bytes) return head_too_large(limits);
      return ParseResult{};
    }
    if (newline + 1 > limits.max_header_bytes) return head_too_large(limits);
    std::string_view line = data.substr(pos, newline - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos = newline + 1;
    if (!have_start_line) {
      if (line.empty()) continue;  // RFC 9112: ignore empty lines before the start line
      head->start_line = std::string(line);
      have_start_line = true;
      continue;
    }
    if (line.empty()) break;  // end of the head
    if (line.front() == ' ' || line.front() == '\t') {
      return error(400, "obsolete header line folding is not accepted");
    }
    if (head->headers.size() >= limits.max_headers) {
      return error(431, "more than " + std::to_string(limits.max_headers) + " headers");
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) {
      return error(400, "a header line lacks 'Name: value'");
    }
    const std::string_view name = line.substr(0, colon);
    for (char c : name) {
      if (!is_tchar(c)) return error(400, "a header name contains an invalid character");
    }
    const std::string_view value = trim(line.substr(colon + 1));
    for (char c : value) {
      const auto u = static_cast<unsigned char>(c);
      if ((u < 0x20 && c != '\t') || u == 0x7f)
        return error(400, "a header value contains a control character");
    }
    std::string lower_name = to_lower(name);
    if (lower_name == "content-length") {
      if (value.empty() || value.size() > 19)
        return error(400, "Content-Length is not a decimal number");
      uint64_t length = 0;
      for (char c : value) {
        if (c < '0' || c > '9') return error(400, "Content-Length is not a decimal number");
        length = length * 10 + static_cast<uint64_t>(c - '0');
      }
      if (head->content_length && *head->content_length != length) {
        return error(400, "two different Content-Length headers");
      }
      head->content_length = length;
    } else if (lower_name == "transfer-encoding") {
      head->transfer_encoding = true;
    }
    head->headers.emplace_back(std::move(lower_name), std::string(value));
  }
  head->body_offset = pos;
  ParseResult done;
  done.status = ParseStatus::kComplete;
  return done;
}

// Reads "HTTP/1.<d>" into *minor; false when it is not HTTP/<digit>.<digit>.
std::optional<int> http_version_minor(std::string_view text, bool* other_major) {
  *other_major = false;
  if (text.size() != 8 || text.substr(0, 5) != "HTTP/" || text[6] != '.') return std::nullopt;
  if (text[5] < '0' || text[5] > '9' || text[7] < '0' || text[7] > '9') return std::nullopt;
  if (text[5] != '1') {
    *other_major = true;
    return std::nullopt;
  }
  return text[7] - '0';
}

// Checks the body's length against the limit and the buffer; fills *body when complete.
ParseResult take_body(std::string_view data, const Head& head, const HttpLimits& limits,
                      std::string* body) {
  const uint64_t length = head.content_length.value_or(0);
  if (length > limits.max_body_bytes) {
    return error(413, "the body has " + std::to_string(length) + " bytes; the limit is " +
                          std::to_string(limits.max_body_bytes));
  }
  if (data.size() - head.body_offset < length) return ParseResult{};
  *body = std::string(data.substr(head.body_offset, static_cast<size_t>(length)));
  ParseResult done;
  done.status = ParseStatus::kComplete;
  done.consumed_bytes = head.body_offset + static_cast<size_t>(length);
  return done;
}

}  // namespace

const std::string* HttpRequest::header(std::string_view lower_case_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_case_name) return &value;
  }
  return nullptr;
}

ParseResult parse_http_request(std::string_view data, const HttpLimits& limits, HttpRequest* out) {
  *out = HttpRequest{};
  Head head;
  ParseResult parsed = parse_head(data, limits, &head);
  if (parsed.status != ParseStatus::kComplete) return parsed;

  const std::string_view line = head.start_line;
  const size_t first_space = line.find(' ');
  const size_t second_space =
      first_space == std::string_view::npos ? first_space : line.find(' ', first_space + 1);
  if (second_space == std::string_view::npos ||
      line.find(' ', second_space + 1) != std::string_view::npos) {
    return error(400, "the request line is not 'METHOD /path HTTP/1.1'");
  }
  const std::string_view method = line.substr(0, first_space);
  const std::string_view target = line.substr(first_space + 1, second_space - first_space - 1);
  const std::string_view version = line.substr(second_space + 1);
  if (method.empty() || method.size() > kMaxMethodBytes)
    return error(400, "the method is missing or too long");
  for (char c : method) {
    if (c < 'A' || c > 'Z') return error(400, "the method is not an upper-case token");
  }
  if (target.empty() || target.front() != '/')
    return error(400, "the request target must start with '/'");
  if (target.size() > kMaxTargetBytes)
    return error(400, "the request target is longer than 2048 bytes");
  for (char c : target) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f)
      return error(400, "the request target contains a control or non-ASCII byte");
  }
  bool other_major = false;
  const auto minor = http_version_minor(version, &other_major);
  if (other_major) return error(505, "only HTTP/1.x is supported");
  if (!minor) return error(400, "the request line does not end in HTTP/1.x");
  if (head.transfer_encoding)
    return error(501, "Transfer-Encoding is not supported; send Content-Length");

  out->method = std::string(method);
  out->target = std::string(target);
  const size_t question = target.find('?');
  out->path = std::string(target.substr(0, question));
  out->query = question == std::string_view::npos ? "" : std::string(target.substr(question + 1));
  out->version_minor = *minor;
  out->headers = std::move(head.headers);
  const std::string* connection = out->header("connection");
  out->keep_alive = *minor >= 1 ? !(connection && has_token(*connection, "close"))
                                : (connection && has_token(*connection, "keep-alive"));
  return take_body(data, head, limits, &out->body);
}

ParseResult parse_http_response(std::string_view data, const HttpLimits& limits,
                                ParsedResponse* out) {
  *out = ParsedResponse{};
  Head head;
  ParseResult parsed = parse_head(data, limits, &head);
  if (parsed.status != ParseStatus::kComplete) return parsed;
  const std::string_view line = head.start_line;
  bool other_major = false;
  const auto minor = http_version_minor(line.substr(0, 8), &other_major);
  if (!minor || line.size() < 12 || line[8] != ' ')
    return error(400, "the status line is not 'HTTP/1.1 <code> <reason>'");
  int status = 0;
  for (size_t i = 9; i < 12; ++i) {
    if (line[i] < '0' || line[i] > '9') return error(400, "the status code is not three digits");
    status = status * 10 + (line[i] - '0');
  }
  if (line.size() > 12 && line[12] != ' ') return error(400, "the status code is not three digits");
  if (head.transfer_encoding) return error(501, "Transfer-Encoding is not supported");
  if (!head.content_length && status != 204 && status != 304) {
    return error(400, "the response has no Content-Length");
  }
  out->status = status;
  bool close = false;
  for (const auto& [name, value] : head.headers) {
    if (name == "connection" && has_token(value, "close")) close = true;
  }
  out->keep_alive = *minor >= 1 && !close;
  return take_body(data, head, limits, &out->body);
}

std::string_view http_reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 413:
      return "Content Too Large";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

std::string serialize_http_response(const HttpResponse& response) {
  std::string out = "HTTP/1.1 " + std::to_string(response.status) + " " +
                    std::string(http_reason(response.status)) + "\r\n";
  if (!response.body.empty()) out += "Content-Type: " + response.content_type + "\r\n";
  out += "Content-Length: " + std::to_string(response.body.size()) + "\r\n";
  if (response.close) out += "Connection: close\r\n";
  out += "\r\n";
  out += response.body;
  return out;
}

std::string serialize_http_request(std::string_view method, std::string_view target,
                                   std::string_view body) {
  std::string out =
      std::string(method) + " " + std::string(target) + " HTTP/1.1\r\nHost: zeusd\r\n";
  if (!body.empty()) out += "Content-Type: application/json\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  out += body;
  return out;
}

}  // namespace zeus::zeusd
