#include "optimizer/pipeline_frequency/python_float.h"

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

}  // namespace zeus::pfo
