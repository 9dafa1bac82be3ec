// FakePowercapTree: a fake /sys/class/powercap in a temp directory, for RAPL tests.
//
// Layout mirrors the kernel's: <root>/intel-rapl:N/{name,energy_uj,max_energy_range_uj} with
// name "package-N", sub-zones as directories <root>/intel-rapl:N/intel-rapl:N:M (name "dram",
// "core", ...) plus the kernel's top-level symlink <root>/intel-rapl:N:M pointing at them.
// Energies in microjoules (uJ). The directory is removed on destruction.
// Permission errors: root reads any file, so make_unreadable() (chmod 000) is only felt by a
// non-root process; run_unprivileged() runs code as such a process (as "nobody" when root).
// Thread-safety: one test thread.
//
//   zeus::testing::FakePowercapTree tree;
//   tree.add_package(0, 1000000);  tree.add_dram(0, 5000);
//   auto cpus = zeus::open_rapl_cpus(tree.root());
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace zeus::testing {

// The kernel's usual max_energy_range_uj (2^38 uJ-ish on Intel server parts).
inline constexpr uint64_t kDefaultRaplMaxEnergyRangeUj = 262143328850;

class FakePowercapTree {
 public:
  // An empty tree in a fresh temp directory (mode 0755, so an unprivileged child can enter it).
  FakePowercapTree();
  ~FakePowercapTree();
  FakePowercapTree(const FakePowercapTree&) = delete;
  FakePowercapTree& operator=(const FakePowercapTree&) = delete;

  // The directory to pass as powercap root.
  const std::string& root() const { return root_; }

  // Adds zone intel-rapl:<package> named "package-<package>".
  void add_package(int package, uint64_t energy_uj = 0,
                   uint64_t max_energy_range_uj = kDefaultRaplMaxEnergyRangeUj);
  // Adds sub-zone intel-rapl:<package>:<subzone> named `name` ("dram", "core", "uncore").
  void add_subzone(int package, int subzone, const std::string& name, uint64_t energy_uj = 0,
                   uint64_t max_energy_range_uj = kDefaultRaplMaxEnergyRangeUj);
  // Shorthand for the DRAM sub-zone intel-rapl:<package>:0.
  void add_dram(int package, uint64_t energy_uj = 0,
                uint64_t max_energy_range_uj = kDefaultRaplMaxEnergyRangeUj);
  // Adds a top-level zone that is not a package, e.g. intel-rapl:1 named "psys".
  void add_zone(const std::string& directory, const std::string& name, uint64_t energy_uj = 0,
                uint64_t max_energy_range_uj = kDefaultRaplMaxEnergyRangeUj);

  // Overwrites a zone's energy_uj.
  void set_package_energy_uj(int package, uint64_t energy_uj);
  void set_dram_energy_uj(int package, uint64_t energy_uj);

  // Zone directories.
  std::string package_dir(int package) const;
  std::string subzone_dir(int package, int subzone) const;

  // chmod 000 on `path` (e.g. package_dir(0) + "/energy_uj"): unreadable to non-root processes.
  static void make_unreadable(const std::string& path);

 private:
  void write_zone(const std::string& dir, const std::string& name, uint64_t energy_uj,
                  uint64_t max_energy_range_uj);
  std::string root_;
};

// Writes `text` to `path` (creating or truncating it). Aborts on failure.
void write_file(const std::string& path, const std::string& text);

// Runs `body` in a forked child that has no root privileges (setgid/setuid to nobody, 65534, when
// the test runs as root) and returns the child's exit code (the body's return value, 0..255), or
// -1 if it died from a signal. Use it to observe EACCES, which root never gets.
int run_unprivileged(const std::function<int()>& body);

}  // namespace zeus::testing
