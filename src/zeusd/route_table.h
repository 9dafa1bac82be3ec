// zeusd's route table: each route as one declarative entry — method, path pattern, the
// capability the allow-list must grant, the query it takes, and its handler (a GPU write's
// handler applies the commands its parameters decode to, wire/zeusd_command.h). ZeusdService
// builds the table (zeusd_routes.cc) and dispatches every request through match_route(); what a
// request that no route takes gets depends on the path's family:
//   upstream      /time, /auth/..., /gpu/<op>, /cpu/<op>: upstream zeusd's API and zeusd's
//                 additions in its style; errors {"error"}, an unknown route or method an empty 404
//   lease session /lease_session and below: ours, behind the session's own checks
//   ours          everything else (/discover, /leases, the removed /gpu/{i}/<knob> routes):
//                 errors {"message"}, 405 naming the methods for a known path
// A pattern's segments are literal, or "{name}" for any one non-empty segment (its value is a
// capture); method "*" takes any method.
// Pure: matching looks at strings only. Thread-safety: const functions.
//
//   RouteMatch m = match_route(table, "DELETE", "/lease_session/3f9c");
//   if (m.route) table[*m.route].handler({request, peer, m.captures, {}});
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/message.h"
#include "zeusd/allow_list.h"
#include "zeusd/upstream_query.h"

namespace zeus::zeusd {

enum class RouteFamily { kUpstream, kLeaseSession, kOurs };

// The family of `path`, whether or not a route takes it.
RouteFamily route_family(std::string_view path);

// What a handler gets: the request, its peer (token, lease session and persistence decided), the
// pattern's captures in order, and the decoded query (routes with a QuerySpec).
struct RouteCall {
  const http::HttpRequest& request;
  const Peer& peer;
  std::vector<std::string> captures;
  ParsedQuery query;
};

struct Route {
  std::string method;                    // "GET", "POST", "DELETE", or "*"
  std::string pattern;                   // "/gpu/get_power", "/lease_session/{id}/heartbeat"
  std::optional<Capability> capability;  // nullopt: none (/discover, /time, /auth/whoami)
  std::optional<QuerySpec> query;        // checked (400) before the handler; nullopt: ignored
  std::string wrong_method;              // ours: the 405's message for another method
  std::function<http::HttpResponse(const RouteCall&)> handler;
};

struct RouteMatch {
  std::optional<size_t> route;      // the route whose pattern and method match
  std::optional<size_t> same_path;  // else the first whose pattern matches, with another method
  std::vector<std::string> captures;
};

RouteMatch match_route(const std::vector<Route>& routes, std::string_view method,
                       std::string_view path);

// The segments' values `pattern` captures from `path`, or nullopt when it does not match.
std::optional<std::vector<std::string>> match_pattern(std::string_view pattern,
                                                      std::string_view path);

}  // namespace zeus::zeusd
