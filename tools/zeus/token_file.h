// Reading the bearer token of the batch-size service from a file (`zeus serve --token-file`,
// `zeus bso --token-file`), or another one-line secret (`zeus serve --db-file`): the file's
// content without surrounding whitespace.
#pragma once

#include <string>

namespace zeus::cli {

// The token in `path`; die() when the file cannot be read, is empty, or holds a line break
// inside the token. Warns when the file is readable by group or others.
std::string read_token_file_or_die(const std::string& path);

// The same for any one-line secret (`zeus serve --db-file`): `what` names the file in messages
// ("the database URL file"), `secret` what it holds ("database URL").
std::string read_secret_file_or_die(const std::string& path, const std::string& what,
                                   const std::string& secret);

}  // namespace zeus::cli
