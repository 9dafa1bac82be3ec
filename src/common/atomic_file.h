// Writing a whole file so that a reader never sees half of it: the text goes to a temporary file
// beside the target (its name ends in ".tmp.<pid>"), which is then renamed over the target.
// Missing parent folders are created.
// Thread-safety: safe for distinct paths; two writers of one path leave one of the two texts.
// Failure: kPermissionDenied naming the file and the reason; no temporary file is left behind.
//
//   ZEUS_TRY(zeus::write_file_atomically("dump/stage_profile.csv", csv_text));
#pragma once

#include <filesystem>
#include <string_view>

#include "zeus/common/result.h"

namespace zeus {

Result<void> write_file_atomically(const std::filesystem::path& path, std::string_view text);

}  // namespace zeus
