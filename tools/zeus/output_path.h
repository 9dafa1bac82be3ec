// Checks on the paths a command writes its results to, before it writes (and, for long commands,
// before it starts): each refusal says what is at the path now and what to give instead.
//   - An output folder (`zeus pfo plan --out DIR`): new, or an empty folder; written as a
//     temporary sibling folder renamed into place. Refused: an empty name, a name ending in "."
//     or "..", the root, a symbolic link (dangling or not: renaming would replace the link, not
//     write where it points), anything that is not a folder, a folder that is not empty.
//   - An output file replaced by rename (`zeus pfo choose --out FILE`): new, or a regular file.
//     Refused: a folder, a device, a FIFO, a socket, a symbolic link.
// Both return the path to write (a trailing "/" of a folder dropped). Messages start with the
// option and the path as the user gave it. Failure: kInvalidArgument, or kPermissionDenied when
// the path cannot even be examined.
//
//   auto dir = zeus::cli::output_folder("--out", args.out);
//   if (!dir) die(dir.error().message);
#pragma once

#include <filesystem>
#include <string>

#include "zeus/common/result.h"

namespace zeus::cli {

// "a regular file", "a folder", "a character device", ... for messages.
std::string file_type_words(std::filesystem::file_type type);

// The folder to write for `option` = `path` (see above).
Result<std::filesystem::path> output_folder(const std::string& option,
                                            const std::filesystem::path& path);

// The file to write (by rename) for `option` = `path` (see above).
Result<std::filesystem::path> output_file(const std::string& option,
                                          const std::filesystem::path& path);

// Writes `text` to a temporary sibling of `path` and renames it into place (a reader never sees
// half a file). Failure: kUnavailable naming the path.
Result<void> write_file_replacing(const std::filesystem::path& path, const std::string& text);

}  // namespace zeus::cli
