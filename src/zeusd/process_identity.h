// Process identity across a zeusd restart: a pid alone is not a process, since the kernel reuses
// pids. A process is its pid plus its start time (field 22 of /proc/<pid>/stat, clock ticks since
// boot), which no later process with the same pid can share within one boot; the boot is named
// by /proc/sys/kernel/random/boot_id. zeusd's lease journal records both, so a restarted zeusd
// can tell "the job still runs" from "the job is gone and its pid now belongs to another".
// Thread-safety: pure functions over the file system. Failure: nullopt / "" when unreadable.
//
//   auto ticks = zeus::zeusd::process_start_ticks(pid);   // nullopt: no such process
//   bool same = ticks && *ticks == lease.pid_start_ticks;
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace zeus::zeusd {

// The start time of process `pid` in clock ticks since boot; nullopt when there is no such
// process (or its stat cannot be read). `proc_root` is a seam for tests.
std::optional<uint64_t> process_start_ticks(int pid, const std::string& proc_root = "/proc");

// The start time from the text of a /proc/<pid>/stat file; nullopt when it is malformed. The
// command name (field 2) may hold spaces and parentheses, so fields are counted after the last ')'.
std::optional<uint64_t> parse_stat_start_ticks(std::string_view stat_text);

// This boot's id (e.g. "1ee3e5ae-6afb-45f9-8884-55666ed4c411"); "" when unknown.
std::string current_boot_id(const std::string& proc_root = "/proc");

}  // namespace zeus::zeusd
