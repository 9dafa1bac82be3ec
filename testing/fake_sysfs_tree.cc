#include "fake_sysfs_tree.h"

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>

#include "fake_sysfs.h"
#include "zeus/common/result.h"

namespace zeus::testing {

FakeSysfsTree::FakeSysfsTree() {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "zeus_fake_sysfs_XXXXXX").string();
  ZEUS_CHECK(mkdtemp(pattern.data()) != nullptr, "FakeSysfsTree: mkdtemp failed");
  ZEUS_CHECK(chmod(pattern.c_str(), 0755) == 0, "FakeSysfsTree: chmod failed");
  root_ = pattern;
}

FakeSysfsTree::~FakeSysfsTree() {
  std::error_code ignored;
  std::filesystem::remove_all(root_, ignored);
}

void FakeSysfsTree::write(const std::string& relative, const std::string& text) const {
  const std::filesystem::path path = std::filesystem::path(root_) / relative;
  std::filesystem::create_directories(path.parent_path());
  write_file(path.string(), text);
}

void FakeSysfsTree::remove(const std::string& relative) const {
  std::error_code ignored;
  std::filesystem::remove_all(std::filesystem::path(root_) / relative, ignored);
}

void FakeSysfsTree::add_cpu(int cpu, int package, std::optional<int> die) const {
  const std::string topology = "devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
  write(topology + "physical_package_id", std::to_string(package));
  if (die) write(topology + "die_id", std::to_string(*die));
}

}  // namespace zeus::testing
