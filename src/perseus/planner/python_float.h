// Python's float floor division (`a // b`), which the published Perseus data was computed with.
// Plain floor(a / b) differs near exact multiples: Python gives 1.0 // 0.1 == 9.0 while
// floor(1.0 / 0.1) == 10.0 — the planner's quantisation and bound rounding need the former.
#pragma once

#include <string>

namespace zeus::pfo {

// a // b with CPython's semantics (fmod-based, then rounded to the nearest whole number).
double python_floordiv(double a, double b);

// Python's repr() of a float: the shortest text that reads back to the same double, whole
// numbers with ".0" (what pandas and Python's csv write; the files of `zeus pfo plan`).
std::string python_float_repr(double value);

}  // namespace zeus::pfo
