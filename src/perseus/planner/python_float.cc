#include "perseus/planner/python_float.h"

#include <charconv>
#include <cmath>

namespace zeus::pfo {

double python_floordiv(double a, double b) {
  // The steps of CPython's float_floor_div (Objects/floatobject.c), written from its semantics.
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0.0 && ((b < 0) != (mod < 0))) div -= 1.0;
  if (div == 0.0) return std::copysign(0.0, a / b);
  double floored = std::floor(div);
  if (div - floored > 0.5) floored += 1.0;
  return floored;
}

std::string python_float_repr(double value) {
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  std::string text(buffer, end);
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}

}  // namespace zeus::pfo
