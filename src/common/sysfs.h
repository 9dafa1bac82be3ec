// Small readers for sysfs/procfs-style files (one value per file), with errno mapped to Error.
//
// EACCES/EPERM -> PermissionDenied (the message names the file and that reading it needs root),
// ENOENT -> NotFound, a value that does not parse -> Internal. Thread-safety: stateless.
//
//   auto uj = read_uint64_file("/sys/class/powercap/intel-rapl:0/energy_uj");
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zeus/common/result.h"

namespace zeus {

// The whole file, trailing whitespace removed.
Result<std::string> read_text_file(const std::string& path);
// The file's content as an unsigned decimal integer.
Result<uint64_t> read_uint64_file(const std::string& path);
// Names of the entries of a directory (not "." or ".."), sorted.
Result<std::vector<std::string>> list_directory(const std::string& path);

}  // namespace zeus
