// Upstream zeusd's query strings: every parameter of Zeus's daemon API (the routes of
// upstream_routes.h) is a query parameter, decoded by the HTTP layer into name/value pairs; this
// file checks them against one route's QuerySpec. Rules, as upstream's daemon applies them:
// `gpu_ids`/`cpu_ids` is a comma list of decimal indices, each trimmed, then sorted and
// de-duplicated; omitted on a read it means every device, writes need it; a device index at or
// above the device count is "GPU 3 not found"; booleans are exactly `true` or `false`; numbers
// are unsigned 32-bit decimals; an unknown or repeated parameter is refused.
// Pure: no I/O. Failure: kInvalidArgument (malformed) or kNotFound (unknown device), each with a
// message for the client's {"error": ...}.
//
//   QuerySpec spec{"GPU", /*ids_required=*/true, /*block=*/true, {"power_limit_mw"}, {}};
//   Result<ParsedQuery> q = parse_query(request.query, spec, gpu_count);
//   q->ids;  q->numbers.at("power_limit_mw");  q->block;
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "zeus/common/result.h"

namespace zeus::zeusd {

using QueryPairs = std::vector<std::pair<std::string, std::string>>;

struct QuerySpec {
  std::string device = "GPU";        // "GPU" (parameter gpu_ids) or "CPU" (cpu_ids)
  bool ids_required = false;         // writes: true
  bool block = false;                // writes: the required `block` flag
  std::vector<std::string> numbers;  // required unsigned 32-bit parameters
  std::vector<std::string> flags;    // required boolean parameters
};

struct ParsedQuery {
  std::vector<int> ids;  // sorted, unique, each below the device count
  bool block = true;
  std::map<std::string, uint32_t> numbers;
  std::map<std::string, bool> flags;
};

// "2, 0,2" -> {0, 2}; InvalidArgument for an empty list, an empty item or a non-number.
Result<std::vector<int>> parse_device_ids(std::string_view raw, std::string_view device);

// Checks `query` against `spec` for a machine with `device_count` devices of spec.device.
Result<ParsedQuery> parse_query(const QueryPairs& query, const QuerySpec& spec,
                                size_t device_count);

}  // namespace zeus::zeusd
