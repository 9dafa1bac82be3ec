#include "token_file.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "cli_util.h"
#include "zeus/common/log.h"

namespace zeus::cli {

std::string read_secret_file_or_die(const std::string& path, const std::string& what,
                                   const std::string& secret) {
  // A directory opens as a stream that reads nothing: say what it is (not "is empty").
  die_if_directory(path, what, "give the file that holds the " + secret);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    die("cannot read " + what + " '" + echo_value(path) + "' (check the path and permissions)");
  }
  std::ostringstream content;
  content << in.rdbuf();
  std::string text = content.str();
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) {
    die(what + " '" + echo_value(path) + "' is empty; put the " + secret + " in it");
  }
  const size_t end = text.find_last_not_of(" \t\r\n");
  text = text.substr(begin, end - begin + 1);
  if (text.find_first_of("\r\n") != std::string::npos) {
    die(what + " '" + echo_value(path) + "' holds more than one line; put only the " + secret +
        " in it");
  }
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && (st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    log_warning(what + " '" + echo_value(path) + "' is readable by others; chmod 600 it");
  }
  return text;
}

std::string read_token_file_or_die(const std::string& path) {
  return read_secret_file_or_die(path, "the token file", "token");
}

}  // namespace zeus::cli
