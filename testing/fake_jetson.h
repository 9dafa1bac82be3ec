// FakeJetsonBoard: the power monitors of an NVIDIA Jetson in a FakeSysfsTree, in the layouts of
// two board families, for the Jetson SoC backend's tests.
//
//   kOrin (AGX Orin, L4T r35+): ina3221 driver, hwmon layout
//     bus/i2c/drivers/ina3221/1-0040/hwmon/hwmon3/in{1,2,3}_label = VDD_GPU_SOC, VDD_CPU_CV,
//     VIN_SYS_5V0 with in<N>_input (mV) and curr<N>_input (mA); 1-0041/hwmon/hwmon4 holds NC and
//     VDDQ_VDD2_1V8AO (not used). Rails: gpu, cpu, total.
//   kXavier (AGX Xavier, L4T r32): ina3221x driver, iio layout
//     bus/i2c/drivers/ina3221x/1-0040/iio:device0/rail_name_{0,1,2} = GPU, CPU, SOC with
//     in_power<N>_input (mW); 1-0041/iio:device1 holds CV, VDDRQ, SYS5V (not used). Rails: gpu,
//     cpu (SYS5V is not a name upstream Zeus takes for the total).
//   kOrinWithIna238: kOrin plus an ina238 monitor (hwmon power1_input in uW) named VDD_IN,
//     which replaces VIN_SYS_5V0 as the total rail.
// Every rail starts at 1000 mW. Thread-safety: one test thread.
#pragma once

#include <map>
#include <string>

#include "fake_sysfs_tree.h"

namespace zeus::testing {

class FakeJetsonBoard {
 public:
  enum class Family { kOrin, kXavier, kOrinWithIna238 };
  FakeJetsonBoard(const FakeSysfsTree& sysfs, Family family);

  // Sets rail `label`'s power (a multiple of 5 mW keeps the files integral).
  void set_rail_mw(const std::string& label, double mw);
  // The file a reading of the rail reads first (power, or voltage), relative to the root.
  std::string rail_file(const std::string& label) const;
  // Removes the rail's reading files, as when the monitor is unbound.
  void remove_rail(const std::string& label);

 private:
  struct Rail {
    std::string dir;  // relative to the sysfs root
    std::string channel;
    bool hwmon = true;
    bool power_file = false;  // else voltage and current
  };
  void add(const std::string& dir, const std::string& channel, bool hwmon, bool power_file,
           const std::string& label);
  const FakeSysfsTree& sysfs_;
  std::map<std::string, Rail> rails_;
};

}  // namespace zeus::testing
