// ZeusdService's route table (route_table.h) and handle(): every route zeusd answers, as one
// list, and the one dispatch through it — the gate, the lease-session header, the path family's
// own checks, the route (or the family's 404/405), the allow-list, the query, the handler.
#include <ctime>
#include <string>
#include <string_view>
#include <vector>

#include "zeusd/json_answer.h"
#include "zeusd/zeusd_service.h"

namespace zeus::zeusd {
namespace {

// The routes this release removed (zeusd's own /gpu/{i}/<knob> and /cpu/{i}/energy, deprecated
// since zeusd served upstream's API): each answers 404 naming what replaces it ("{i}" is the
// index the request named).
struct RemovedRoute {
  const char* method;
  const char* pattern;
  const char* replacement;
};
constexpr RemovedRoute kRemovedRoutes[] = {
    {"GET", "/gpu/{i}/power_limit", "GET /gpu/get_power_limit?gpu_ids={i}"},
    {"POST", "/gpu/{i}/power_limit",
     "POST /gpu/set_power_limit?gpu_ids={i}&power_limit_mw=N&block=true"},
    {"DELETE", "/gpu/{i}/power_limit", "POST /gpu/reset_power_limit?gpu_ids={i}&block=true"},
    {"GET", "/gpu/{i}/power",
     "GET /gpu/get_power?gpu_ids={i} (instant) or GET /gpu/get_average_power?gpu_ids={i}"},
    {"GET", "/gpu/{i}/energy", "GET /gpu/get_cumulative_energy?gpu_ids={i}"},
    {"GET", "/gpu/{i}/persistence_mode", "GET /gpu/get_persistence_mode?gpu_ids={i}"},
    {"POST", "/gpu/{i}/persistence_mode",
     "POST /gpu/set_persistence_mode?gpu_ids={i}&enabled=true|false&block=true"},
    {"POST", "/gpu/{i}/sm_clocks",
     "POST /gpu/set_gpu_locked_clocks?gpu_ids={i}&min_clock_mhz=N&max_clock_mhz=M&block=true"},
    {"DELETE", "/gpu/{i}/sm_clocks", "POST /gpu/reset_gpu_locked_clocks?gpu_ids={i}&block=true"},
    {"POST", "/gpu/{i}/memory_clocks",
     "POST /gpu/set_mem_locked_clocks?gpu_ids={i}&min_clock_mhz=N&max_clock_mhz=M&block=true"},
    {"DELETE", "/gpu/{i}/memory_clocks",
     "POST /gpu/reset_mem_locked_clocks?gpu_ids={i}&block=true"},
    {"GET", "/cpu/{i}/energy", "GET /cpu/get_cumulative_energy?cpu_ids={i}&cpu=true&dram=true"},
};

std::string with_index(std::string text, const std::string& index) {
  for (size_t at = text.find("{i}"); at != std::string::npos; at = text.find("{i}", at)) {
    text.replace(at, 3, index);
    at += index.size();
  }
  return text;
}

HttpResponse removed_route(const RemovedRoute& removed, const RouteCall& call) {
  const std::string index = call.captures.at(0).substr(0, 32);
  return message_answer(
      404, std::string(removed.method) + " " + with_index(removed.pattern, index) +
               " was removed (zeusd's own /gpu/{i}/<knob> and /cpu/{i}/energy routes, deprecated "
               "since zeusd serves Zeus's daemon API); use " +
               with_index(removed.replacement, index) +
               " (docs/operators.md, \"Zeus's own daemon API\")");
}

}  // namespace

std::vector<Route> ZeusdService::route_table() {
  const Capability control = Capability::kGpuControl, gpu_read = Capability::kGpuRead,
                   cpu_read = Capability::kCpuRead;
  const QuerySpec gpus{"GPU", false, false, {}, {}};
  auto each_gpu = [this](GpuReader reader, bool power_map = false) {
    return [this, reader, power_map](const RouteCall& call) {
      return upstream_.gpu_read(call.query.ids, reader, power_map);
    };
  };
  std::vector<Route> table = {
      // Ours.
      {"GET", "/discover", std::nullopt, std::nullopt, "/discover answers GET only",
       [this](const RouteCall& call) { return discover(call.peer); }},
      {"GET", "/leases", gpu_read, std::nullopt, "/leases answers GET only",
       [this](const RouteCall&) { return list_leases(); }},
      {"POST", "/lease_session", control, std::nullopt, "/lease_session answers POST only",
       [this](const RouteCall& call) { return open_session(call.peer); }},
      {"POST", "/lease_session/{id}/heartbeat", control, std::nullopt, "heartbeats are POSTs",
       [this](const RouteCall& call) { return heartbeat_session(call.peer, call.captures[0]); }},
      {"DELETE", "/lease_session/{id}", control, std::nullopt,
       "/lease_session/{id} answers DELETE only",
       [this](const RouteCall& call) { return close_session(call.peer, call.captures[0]); }},
      // Upstream's API, and ours in its style (get_average_power, get_state, reset_power_limit).
      {"GET", "/time", std::nullopt, std::nullopt, "",
       [](const RouteCall&) { return UpstreamRoutes::time(); }},
      {"GET", "/auth/whoami", std::nullopt, std::nullopt, "",
       [](const RouteCall& call) { return UpstreamRoutes::whoami(call.peer); }},
      {"GET", "/gpu/get_power_limit", gpu_read, gpus, "", each_gpu(power_limit_entry)},
      {"GET", "/gpu/get_power_limit_constraints", gpu_read, gpus, "",
       each_gpu(power_limit_range_entry)},
      {"GET", "/gpu/get_persistence_mode", gpu_read, gpus, "", each_gpu(persistence_mode_entry)},
      {"GET", "/gpu/get_cumulative_energy", gpu_read, gpus, "", each_gpu(energy_entry)},
      {"GET", "/gpu/get_power", gpu_read, gpus, "", each_gpu(power_entry, true)},
      {"GET", "/gpu/get_average_power", gpu_read, gpus, "", each_gpu(average_power_entry, true)},
      {"GET", "/gpu/get_state", gpu_read, gpus, "", each_gpu(state_entry)},
      {"GET", "/cpu/get_cumulative_energy", cpu_read,
       QuerySpec{"CPU", false, false, {}, {"cpu", "dram"}}, "",
       [this](const RouteCall& call) { return upstream_.cpu_energy(call.query); }},
      {"GET", "/cpu/get_power", cpu_read, QuerySpec{"CPU", false, false, {}, {}}, "",
       [this](const RouteCall& call) { return upstream_.cpu_power(call.query.ids); }},
  };
  // The GPU writes: each decodes its parameters into the commands it makes on every GPU named.
  for (const GpuWriteRoute& write : gpu_write_routes()) {
    table.push_back({"POST", "/gpu/" + std::string(write.op), control,
                     QuerySpec{"GPU", true, true, write.numbers, write.flags}, "",
                     [this, &write](const RouteCall& call) {
                       return upstream_.gpu_write(
                           write.op, write.decode(call.query.numbers, call.query.flags), call.query,
                           call.peer);
                     }});
  }
  for (const RemovedRoute& removed : kRemovedRoutes) {
    table.push_back({removed.method, removed.pattern, std::nullopt, std::nullopt, "",
                     [&removed](const RouteCall& call) { return removed_route(removed, call); }});
  }
  return table;
}

HttpResponse ZeusdService::handle(const HttpRequest& request, const Peer& caller) {
  // API groups and bearer tokens, before any route (request_gate.h).
  GateDecision gate = check_access(request, access_, static_cast<int64_t>(std::time(nullptr)));
  if (gate.refusal) return std::move(*gate.refusal);
  Peer peer = caller;
  peer.token = std::move(gate.token);
  if (auto refused = attach_session(request, peer)) return std::move(*refused);
  const RouteFamily family = route_family(request.path);
  if (auto refused = family_checks(family, request, peer)) return std::move(*refused);
  RouteMatch match = match_route(routes_, request.method, request.path);
  if (!match.route) {
    return no_route(family, request, match.same_path ? &routes_[*match.same_path] : nullptr);
  }
  const Route& route = routes_[*match.route];
  auto refuse = [&](int status, const std::string& message) {
    return family == RouteFamily::kUpstream ? error_answer(status, message)
                                            : message_answer(status, message);
  };
  // Over TCP no allow-list entry can grant a change, so that is what a TCP peer is told.
  if (route.capability) {
    if (auto refused = allow_.refusal(*route.capability, peer); !refused.empty())
      return refuse(403, refused);
  }
  RouteCall call{request, peer, std::move(match.captures), {}};
  if (route.query) {
    const size_t devices =
        route.query->device == "GPU" ? devices_.gpus.size() : devices_.cpus.size();
    auto query = parse_query(request.query, *route.query, devices);
    if (!query) return refuse(400, query.error().message);
    call.query = std::move(*query);
  }
  return route.handler(call);
}

std::optional<HttpResponse> ZeusdService::family_checks(RouteFamily family,
                                                        const HttpRequest& request, Peer& peer) {
  switch (family) {
    case RouteFamily::kUpstream: {
      auto persist = upstream_change_persists(request, peer);
      if (!persist) return std::move(persist.error());
      peer.persist_change = *persist;
      // Only with a signing key (whose gate then verified the token); else the allow-list decides.
      if (request.path.rfind("/auth/", 0) == 0 && !peer.token)
        return error_answer(404, "Authentication is not enabled on this server.");
      return std::nullopt;
    }
    case RouteFamily::kLeaseSession:
      if (peer.unix_socket) {
        return message_answer(400,
                              "lease sessions are for clients over TCP: on the Unix socket zeusd "
                              "ties your changes to your process already");
      }
      if (!peer.token) {
        return message_answer(403,
                              "lease sessions need a bearer token (the operator starts zeusd with "
                              "--signing-key-path and issues one with `zeusd token issue`)");
      }
      return std::nullopt;
    case RouteFamily::kOurs:
      break;
  }
  return std::nullopt;
}

HttpResponse ZeusdService::no_route(RouteFamily family, const HttpRequest& request,
                                    const Route* same_path) {
  if (family == RouteFamily::kUpstream) return empty_answer(404);
  if (same_path != nullptr && !same_path->wrong_method.empty())
    return message_answer(405, same_path->wrong_method);
  const std::string what = "no route " + request.method + " " + request.path;
  if (family == RouteFamily::kLeaseSession) {
    return message_answer(404, what +
                                   " (lease sessions: POST /lease_session, POST "
                                   "/lease_session/{id}/heartbeat, DELETE /lease_session/{id})");
  }
  return message_answer(404, what +
                                 " (GET /discover lists the devices; zeusd serves /discover, "
                                 "/leases, /lease_session and Zeus's daemon API: /gpu/get_power, "
                                 "/gpu/set_power_limit, ...; see docs/operators.md)");
}

}  // namespace zeus::zeusd
