// Python's float floor division (`a // b`), which the published Perseus data was computed with.
// Plain floor(a / b) differs near exact multiples: Python gives 1.0 // 0.1 == 9.0 while
// floor(1.0 / 0.1) == 10.0 — the planner's quantisation and bound rounding need the former.
#pragma once

namespace zeus::pfo {

// a // b with CPython's semantics (fmod-based, then rounded to the nearest whole number).
double python_floordiv(double a, double b);

}  // namespace zeus::pfo
