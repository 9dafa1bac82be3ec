// How many connections a server can promise to serve with the descriptors it has (internal to
// src/http). Every connection is a descriptor; when the process runs out (EMFILE), accept fails
// while the server still counts itself below its cap, and the "idle and slow connections make
// room" promise breaks: nobody new gets in. So the cap is clamped, at start, to the descriptor
// limit minus those already in use, those promised to other servers of the process, and a
// reserve for the rest of the program (stores, logs, vendor libraries). The privileged reserve
// shrinks with it, to at most a quarter of what is left.
// Pure: the caller reads the limit and the count in use (server.cc).
#pragma once

#include <cstddef>

namespace zeus::http::detail {

struct ConnectionBudget {
  size_t max_connections = 0;     // the cap to serve with (at least 1)
  size_t privileged_reserve = 0;  // slots above it for privileged peers
  bool clamped = false;           // below what was asked
  size_t reserve = 0;             // descriptors kept for the rest of the program
};

// descriptor_limit: RLIMIT_NOFILE (soft, after raising it); in_use: descriptors open now plus
// those other servers of this process were promised; wanted_*: the options asked for.
ConnectionBudget connection_budget(size_t descriptor_limit, size_t in_use,
                                   size_t wanted_connections, size_t wanted_privileged_reserve);

}  // namespace zeus::http::detail
