// FakeSysfsTree: a fake sysfs root (what ZEUS_SYSFS_ROOT / DiscoverOptions::sysfs_root name) in
// a temp directory: CPU topology files, and any file by its path under the root (hwmon power
// monitors are written with it, see fake_jetson.h). Removed on destruction.
// Thread-safety: one test thread.
//
//   zeus::testing::FakeSysfsTree sysfs;
//   sysfs.add_cpu(0, /*package=*/0);  sysfs.add_cpu(8, /*package=*/1, /*die=*/0);
//   RaplZoneLookup where{.sysfs_root = sysfs.root(), ...};
#pragma once

#include <optional>
#include <string>

namespace zeus::testing {

class FakeSysfsTree {
 public:
  FakeSysfsTree();
  ~FakeSysfsTree();
  FakeSysfsTree(const FakeSysfsTree&) = delete;
  FakeSysfsTree& operator=(const FakeSysfsTree&) = delete;

  const std::string& root() const { return root_; }
  // <root>/<relative> holding `text`, creating its directories.
  void write(const std::string& relative, const std::string& text) const;
  // Removes <root>/<relative> (a file or a whole directory).
  void remove(const std::string& relative) const;
  // devices/system/cpu/cpu<cpu>/topology/{physical_package_id,die_id} (die_id only when given).
  void add_cpu(int cpu, int package, std::optional<int> die = std::nullopt) const;

 private:
  std::string root_;
};

}  // namespace zeus::testing
