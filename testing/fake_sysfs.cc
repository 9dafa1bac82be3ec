#include "fake_sysfs.h"

#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "zeus/common/result.h"

namespace zeus::testing {

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  ZEUS_CHECK(static_cast<bool>(out), "cannot create " + path);
  out << text << "\n";
  ZEUS_CHECK(static_cast<bool>(out), "cannot write " + path);
}

FakePowercapTree::FakePowercapTree() {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "zeus_fake_powercap_XXXXXX").string();
  ZEUS_CHECK(mkdtemp(pattern.data()) != nullptr, "FakePowercapTree: mkdtemp failed");
  ZEUS_CHECK(chmod(pattern.c_str(), 0755) == 0, "FakePowercapTree: chmod failed");
  root_ = pattern;
}

FakePowercapTree::~FakePowercapTree() {
  std::error_code ignored;
  std::filesystem::remove_all(root_, ignored);
}

void FakePowercapTree::write_zone(const std::string& dir, const std::string& name,
                                  uint64_t energy_uj, uint64_t max_energy_range_uj) {
  std::filesystem::create_directories(dir);
  ZEUS_CHECK(chmod(dir.c_str(), 0755) == 0, "FakePowercapTree: chmod failed on " + dir);
  write_file(dir + "/name", name);
  write_file(dir + "/energy_uj", std::to_string(energy_uj));
  write_file(dir + "/max_energy_range_uj", std::to_string(max_energy_range_uj));
  write_file(dir + "/enabled", "1");
}

std::string FakePowercapTree::package_dir(int package) const {
  return root_ + "/intel-rapl:" + std::to_string(package);
}

std::string FakePowercapTree::subzone_dir(int package, int subzone) const {
  return package_dir(package) + "/intel-rapl:" + std::to_string(package) + ":" +
         std::to_string(subzone);
}

void FakePowercapTree::add_package(int package, uint64_t energy_uj, uint64_t max_energy_range_uj) {
  write_zone(package_dir(package), "package-" + std::to_string(package), energy_uj,
             max_energy_range_uj);
}

void FakePowercapTree::add_subzone(int package, int subzone, const std::string& name,
                                   uint64_t energy_uj, uint64_t max_energy_range_uj) {
  std::string dir = subzone_dir(package, subzone);
  write_zone(dir, name, energy_uj, max_energy_range_uj);
  std::string link =
      root_ + "/intel-rapl:" + std::to_string(package) + ":" + std::to_string(subzone);
  std::error_code ignored;
  std::filesystem::create_directory_symlink(dir, link, ignored);
}

void FakePowercapTree::add_dram(int package, uint64_t energy_uj, uint64_t max_energy_range_uj) {
  add_subzone(package, 0, "dram", energy_uj, max_energy_range_uj);
}

void FakePowercapTree::add_zone(const std::string& directory, const std::string& name,
                                uint64_t energy_uj, uint64_t max_energy_range_uj) {
  write_zone(root_ + "/" + directory, name, energy_uj, max_energy_range_uj);
}

void FakePowercapTree::set_package_energy_uj(int package, uint64_t energy_uj) {
  write_file(package_dir(package) + "/energy_uj", std::to_string(energy_uj));
}

void FakePowercapTree::set_dram_energy_uj(int package, uint64_t energy_uj) {
  write_file(subzone_dir(package, 0) + "/energy_uj", std::to_string(energy_uj));
}

void FakePowercapTree::make_unreadable(const std::string& path) {
  ZEUS_CHECK(chmod(path.c_str(), 0) == 0, "FakePowercapTree: chmod failed on " + path);
}

int run_unprivileged(const std::function<int()>& body) {
  pid_t pid = fork();
  ZEUS_CHECK(pid >= 0, "run_unprivileged: fork failed");
  if (pid == 0) {
    if (geteuid() == 0) {
      constexpr uid_t kNobody = 65534;
      if (setgroups(0, nullptr) != 0 || setgid(kNobody) != 0 || setuid(kNobody) != 0) _exit(254);
    }
    _exit(body() & 0xff);
  }
  int status = 0;
  pid_t waited = -1;
  do {
    waited = waitpid(pid, &status, 0);
  } while (waited < 0 && errno == EINTR);
  ZEUS_CHECK(waited == pid, "run_unprivileged: waitpid failed");
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return -1;
}

}  // namespace zeus::testing
