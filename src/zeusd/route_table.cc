#include "zeusd/route_table.h"

namespace zeus::zeusd {
namespace {

bool has_prefix(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// "/a/b" -> {"a", "b"}; "/" -> {""}.
std::vector<std::string_view> path_segments(std::string_view path) {
  std::vector<std::string_view> segments;
  size_t start = path.empty() || path[0] != '/' ? 0 : 1;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    segments.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return segments;
}

}  // namespace

RouteFamily route_family(std::string_view path) {
  if (path == "/time" || has_prefix(path, "/auth/")) return RouteFamily::kUpstream;
  for (std::string_view device : {std::string_view("/gpu/"), std::string_view("/cpu/")}) {
    if (has_prefix(path, device) && path.find('/', device.size()) == std::string_view::npos) {
      return RouteFamily::kUpstream;
    }
  }
  if (path == "/lease_session" || has_prefix(path, "/lease_session/"))
    return RouteFamily::kLeaseSession;
  return RouteFamily::kOurs;
}

std::optional<std::vector<std::string>> match_pattern(std::string_view pattern,
                                                      std::string_view path) {
  const std::vector<std::string_view> want = path_segments(pattern);
  const std::vector<std::string_view> have = path_segments(path);
  if (want.size() != have.size() || path.empty() || path[0] != '/') return std::nullopt;
  std::vector<std::string> captures;
  for (size_t i = 0; i < want.size(); ++i) {
    const bool capture = want[i].size() > 2 && want[i].front() == '{' && want[i].back() == '}';
    if (capture) {
      if (have[i].empty()) return std::nullopt;
      captures.emplace_back(have[i]);
    } else if (want[i] != have[i]) {
      return std::nullopt;
    }
  }
  return captures;
}

RouteMatch match_route(const std::vector<Route>& routes, std::string_view method,
                       std::string_view path) {
  RouteMatch match;
  for (size_t i = 0; i < routes.size(); ++i) {
    auto captures = match_pattern(routes[i].pattern, path);
    if (!captures) continue;
    if (routes[i].method == "*" || routes[i].method == method) {
      match.route = i;
      match.captures = std::move(*captures);
      return match;
    }
    if (!match.same_path) match.same_path = i;
  }
  return match;
}

}  // namespace zeus::zeusd
