// median(): the middle of a sample (the mean of the middle two for an even count); 0 when empty.
// Pure. Used by the Perseus straggler detector and the power stream's clock-offset estimate.
#pragma once

#include <vector>

namespace zeus {

double median(std::vector<double> values);

}  // namespace zeus
