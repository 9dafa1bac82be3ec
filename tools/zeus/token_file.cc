#include "token_file.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "cli_util.h"
#include "zeus/log.h"

namespace zeus::cli {

std::string read_token_file_or_die(const std::string& path) {
  // A directory opens as a stream that reads nothing: say what it is (probe item C1).
  die_if_directory(path, "the token file", "give the file that holds the token");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    die("cannot read the token file '" + echo_value(path) + "' (check the path and permissions)");
  }
  std::ostringstream content;
  content << in.rdbuf();
  std::string token = content.str();
  const size_t begin = token.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) {
    die("the token file '" + echo_value(path) + "' is empty; put a token in it");
  }
  const size_t end = token.find_last_not_of(" \t\r\n");
  token = token.substr(begin, end - begin + 1);
  if (token.find_first_of("\r\n") != std::string::npos) {
    die("the token file '" + echo_value(path) +
        "' holds more than one line; put only the token in it");
  }
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && (st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    log_warning("token file '" + echo_value(path) + "' is readable by others; chmod 600 it");
  }
  return token;
}

}  // namespace zeus::cli
