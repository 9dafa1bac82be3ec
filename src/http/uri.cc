#include "http/uri.h"

#include <uriparser/Uri.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <memory>

namespace zeus::http {
namespace {

// Owns what uriparser allocated for one parse.
struct ParsedUri {
  UriUriA uri{};
  bool filled = false;
  ~ParsedUri() {
    if (filled) uriFreeUriMembersA(&uri);
  }
};

std::string text_of(const UriTextRangeA& range) {
  return range.first == nullptr ? std::string() : std::string(range.first, range.afterLast);
}

std::string decoded(const UriTextRangeA& range) {
  std::string out = text_of(range);
  if (out.empty()) return out;
  // uriparser decodes in place up to a NUL terminator and returns the new end, so decoded NULs
  // (%00) are kept by measuring with that end rather than with strlen.
  const char* end = uriUnescapeInPlaceExA(out.data(), URI_FALSE, URI_BR_DONT_TOUCH);
  out.resize(static_cast<size_t>(end - out.data()));
  return out;
}

std::string syntax_error(std::string_view text, const char* error_pos, size_t offset) {
  if (error_pos == nullptr) return "it cannot be read as a URI";
  const size_t at = static_cast<size_t>(error_pos - text.data()) - offset;
  // uriparser points at the end when the last part (a port, an IP literal) is malformed.
  if (at >= text.size() - offset) return "it is malformed near its end";
  const unsigned char c = static_cast<unsigned char>(text[at + offset]);
  char shown[8];
  if (std::isprint(c)) {
    std::snprintf(shown, sizeof(shown), "'%c'", c);
  } else {
    std::snprintf(shown, sizeof(shown), "0x%02X", c);
  }
  return std::string("unexpected ") + shown + " at character " + std::to_string(at + 1);
}

// Parses `text`, whose first `offset` characters are a prefix added by the caller (error
// positions are reported without it).
Result<UriParts> parse(std::string_view text, size_t offset) {
  ParsedUri parsed;
  const char* error_pos = nullptr;
  if (uriParseSingleUriExA(&parsed.uri, text.data(), text.data() + text.size(), &error_pos) !=
      URI_SUCCESS) {
    return fail(ErrorCode::kInvalidArgument, syntax_error(text, error_pos, offset));
  }
  parsed.filled = true;
  const UriUriA& u = parsed.uri;
  UriParts out;
  out.scheme = text_of(u.scheme);
  out.has_authority = u.hostText.first != nullptr;
  out.has_userinfo = u.userInfo.first != nullptr;
  const bool literal = u.hostData.ip6 != nullptr || u.hostData.ipFuture.first != nullptr;
  out.host = literal ? text_of(u.hostText) : decoded(u.hostText);
  out.has_port = u.portText.first != nullptr;
  out.port = text_of(u.portText);
  if (out.has_authority) {
    // hostText of an IP literal lies inside its brackets; the brackets are kept.
    const char* first = u.hostText.first - (literal ? 1 : 0);
    const char* last = out.has_port ? u.portText.afterLast : u.hostText.afterLast + (literal ? 1 : 0);
    // An empty host is a pointer to a static "", not into `text`.
    if (first >= text.data() && last <= text.data() + text.size()) out.host_and_port.assign(first, last);
  }
  // Segments hold the text between slashes (an empty segment points outside `text`).
  if (u.pathHead != nullptr) {
    bool first_segment = true;
    for (const UriPathSegmentA* s = u.pathHead; s != nullptr; s = s->next) {
      if (!first_segment || u.absolutePath || out.has_authority) out.path += "/";
      out.path += decoded(s->text);
      first_segment = false;
    }
  } else if (u.absolutePath) {
    out.path = "/";
  }
  out.has_query = u.query.first != nullptr;
  out.has_fragment = u.fragment.first != nullptr;
  if (out.has_query && std::string_view(u.query.first, u.query.afterLast - u.query.first).find("%00") !=
                           std::string_view::npos) {
    // uriparser splits queries into C strings, which would cut a value at the NUL.
    return fail(ErrorCode::kInvalidArgument, "its query holds %00 (a NUL byte), which no parameter may hold");
  }
  if (out.has_query && u.query.first != u.query.afterLast) {
    UriQueryListA* list = nullptr;
    int count = 0;
    // plusToSpace: a '+' in a query is a space (HTML forms; Python's parse_qsl, as upstream).
    if (uriDissectQueryMallocExA(&list, &count, u.query.first, u.query.afterLast, URI_TRUE,
                                 URI_BR_DONT_TOUCH) != URI_SUCCESS) {
      return fail(ErrorCode::kInvalidArgument, "its query cannot be split into parameters");
    }
    std::unique_ptr<UriQueryListA, void (*)(UriQueryListA*)> owned(list, uriFreeQueryListA);
    for (const UriQueryListA* q = list; q != nullptr; q = q->next) {
      out.query.emplace_back(q->key == nullptr ? "" : q->key, q->value == nullptr ? "" : q->value);
    }
  }
  return out;
}

}  // namespace

Result<UriParts> parse_uri(std::string_view text) { return parse(text, 0); }

Result<UriParts> parse_origin_form(std::string_view target) {
  if (target.empty() || target.front() != '/') {
    return fail(ErrorCode::kInvalidArgument, "it does not start with '/'");
  }
  // Behind an authority, "//a/b" can only be a path: its first segment is empty.
  constexpr std::string_view kPrefix = "http://h";
  const std::string text = std::string(kPrefix) + std::string(target);
  Result<UriParts> parts = parse(text, kPrefix.size());
  if (!parts) return parts;
  if (parts->has_fragment) {
    return fail(ErrorCode::kInvalidArgument,
                "unexpected '#' at character " + std::to_string(target.find('#') + 1));
  }
  parts->scheme.clear();
  parts->has_authority = false;
  parts->host.clear();
  parts->host_and_port.clear();
  return parts;
}

Result<std::string> normalized_origin_form(std::string_view target) {
  std::string text;
  if (!target.empty() && target.front() == '/') {
    text = "http://h" + std::string(target);  // behind an authority "//a" stays a path
  } else {
    Result<UriParts> absolute = parse_uri(target);
    std::string scheme = absolute ? absolute->scheme : "";
    std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (!absolute || !absolute->has_authority || absolute->has_fragment ||
        !(scheme == "http" || scheme == "https")) {
      return fail(ErrorCode::kInvalidArgument,
                  "the request target is neither a path (\"/path?query\") nor an http:// URL");
    }
    text = std::string(target);
  }
  ParsedUri parsed;
  const char* error_pos = nullptr;
  if (uriParseSingleUriExA(&parsed.uri, text.data(), text.data() + text.size(), &error_pos) !=
      URI_SUCCESS) {
    return fail(ErrorCode::kInvalidArgument, "the request target is malformed: " +
                                                 syntax_error(text, error_pos, 0));
  }
  parsed.filled = true;
  if (parsed.uri.fragment.first != nullptr) {
    return fail(ErrorCode::kInvalidArgument, "the request target holds a fragment ('#')");
  }
  // Unreserved %XX decoded, hex upper-cased, dot segments (plain and encoded) removed.
  if (uriNormalizeSyntaxExA(&parsed.uri, URI_NORMALIZE_PATH) != URI_SUCCESS) {
    return fail(ErrorCode::kInvalidArgument, "the request target's path cannot be normalised");
  }
  std::string out;
  for (const UriPathSegmentA* s = parsed.uri.pathHead; s != nullptr; s = s->next) {
    const std::string segment = text_of(s->text);
    const std::string_view bare = std::string_view(segment).substr(0, segment.find(';'));
    if (bare == "." || bare == "..") {
      return fail(ErrorCode::kInvalidArgument,
                  "the request target's segment '" + segment +
                      "' may be read as a dot segment by the next server; remove it");
    }
    for (const std::string_view bad : {"%2F", "%5C", "%00", "\\"}) {
      if (segment.find(bad) != std::string::npos) {
        return fail(ErrorCode::kInvalidArgument,
                    "the request target's path holds " + std::string(bad) +
                        ", which the next server may read as another path; send it as it is "
                        "meant, without encoded slashes, backslashes or NULs");
      }
    }
    out += "/";
    out += segment;
  }
  if (out.empty()) out = "/";
  if (parsed.uri.query.first != nullptr) {
    const std::string query = text_of(parsed.uri.query);
    std::string upper = query;
    std::transform(upper.begin(), upper.end(), upper.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    if (upper.find("%00") != std::string::npos) {  // as parse_origin_form: no server reads it
      return fail(ErrorCode::kInvalidArgument, "the request target's query holds %00 (a NUL byte)");
    }
    out += "?" + query;
  }
  return out;
}

bool is_host_and_port(std::string_view text) {
  if (text.find_first_of("/?#") != std::string_view::npos) return false;
  Result<UriParts> parts = parse_uri("//" + std::string(text));
  return parts && parts->has_authority && !parts->has_userinfo && parts->path.empty();
}

std::string percent_encode(std::string_view text) {
  // uriparser stops at a NUL byte, so each NUL-free run is escaped by it and NULs are put between.
  std::string out;
  std::string run;
  size_t start = 0;
  while (true) {
    const size_t nul = std::min(text.find('\0', start), text.size());
    run.assign((nul - start) * 3 + 1, '\0');
    const char* end =
        uriEscapeExA(text.data() + start, text.data() + nul, run.data(), URI_FALSE, URI_FALSE);
    out.append(static_cast<const char*>(run.data()), end);
    if (nul == text.size()) return out;
    out += "%00";
    start = nul + 1;
  }
}

}  // namespace zeus::http
