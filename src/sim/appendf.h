// appendf: printf-style formatting appended to a string, for the simulator's text tables
// (no line-length limit, formats checked by the compiler).
//
//   std::string out;
//   appendf(out, "%-14s %7.3f\n", name.c_str(), ratio);
#pragma once

#include <string>

namespace zeus::sim {

__attribute__((format(printf, 2, 3))) void appendf(std::string& out, const char* format, ...);

}  // namespace zeus::sim
