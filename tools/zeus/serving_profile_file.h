// The serving profile file of `zeus proxy calibrate` (written) and `zeus proxy --govern
// --serving-profile` (read): JSON with "format": "zeus-serving-profile/1", the GPU, the synthetic
// load, the measured points and the fitted profile (docs/proxy.md, "Calibration").
#pragma once

#include <filesystem>
#include <string>

#include "serving/live/calibrate.h"
#include "zeus/common/result.h"
#include "zeus/serving/serving_governor.h"

namespace zeus::cli {

// The file's text.
std::string serving_profile_json(const proxy::CalibrationRun& run,
                                 const proxy::CalibrateOptions& options,
                                 const ServingProfile& profile);
// The fitted profile of a file; errors name the file and what is wrong.
Result<ServingProfile> read_serving_profile(const std::filesystem::path& path);

}  // namespace zeus::cli
