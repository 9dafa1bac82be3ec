// Schedule files of the PointSolution scheduler, read without running anything.
//
// Upstream's lowtime writes `freqs_pipeline_%05d.py`: one Python literal, a list per rank of
// lists of (instruction name, MHz) tuples, and upstream's server eval()s it — any code in the file
// would run in the server. Here the file is parsed by a small grammar that knows only lists,
// tuples, strings ('...' or "..." with simple escapes), integers, comments (#...), trailing commas
// and whitespace; a name, call, attribute, operator, f-string or anything else is an error naming
// its line and column ("line 3, column 7: a name ('__import__') is not allowed: ...").
// The JSON forms are accepted too: [[["forward", 1980], ...], ...] (a list per rank),
// the file `zeus pfo choose` writes ({"frequencies": [[["forward", 1980], ...], ...], ...}: a list
// per stage), and a dumped N.sched.json ([{"rank": 0, "frequencies": [...]}, ...]).
// Units: MHz. Thread-safety: pure functions (read_schedule_file reads one file).
// Failure: kInvalidArgument with the place and the reason; kNotFound for a missing file.
//
//   Result<RankSchedules> s = parse_schedule_literal("[[('forward', 1980), ('backward', 1980)]]");
//   (*s)[0][1] == std::pair{"backward", 1980}
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "zeus/common/result.h"

namespace zeus::pfo {

// One iteration's clocks per rank (or per stage): (instruction name, MHz) in execution order.
using RankSchedules = std::vector<std::vector<std::pair<std::string, int>>>;

// Parses upstream's Python-literal schedule (never evaluated).
Result<RankSchedules> parse_schedule_literal(std::string_view text);

// Parses a JSON schedule in any of the three forms above.
Result<RankSchedules> parse_schedule_json(std::string_view text);

// Reads a schedule file: ".py" as the Python literal, anything else as JSON; messages name it.
Result<RankSchedules> read_schedule_file(const std::string& path);

}  // namespace zeus::pfo
