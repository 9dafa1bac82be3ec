#include "fake_jetson.h"

#include <cmath>
#include <sstream>

#include "zeus/common/result.h"

namespace zeus::testing {
namespace {

constexpr double kRailVoltageMv = 5000.0;

std::string number(double value) {
  if (value == std::floor(value)) return std::to_string(static_cast<long long>(value));
  std::ostringstream out;
  out.precision(17);
  out << value;
  return out.str();
}

}  // namespace

FakeJetsonBoard::FakeJetsonBoard(const FakeSysfsTree& sysfs, Family family) : sysfs_(sysfs) {
  if (family == Family::kXavier) {
    const std::string a = "bus/i2c/drivers/ina3221x/1-0040/iio:device0";
    const std::string b = "bus/i2c/drivers/ina3221x/1-0041/iio:device1";
    add(a, "0", false, true, "GPU");
    add(a, "1", false, true, "CPU");
    add(a, "2", false, true, "SOC");
    add(b, "0", false, true, "CV");
    add(b, "1", false, true, "VDDRQ");
    add(b, "2", false, true, "SYS5V");
    sysfs_.write("bus/i2c/drivers/ina3221x/uevent", "");
    return;
  }
  const std::string a = "bus/i2c/drivers/ina3221/1-0040/hwmon/hwmon3";
  const std::string b = "bus/i2c/drivers/ina3221/1-0041/hwmon/hwmon4";
  add(a, "1", true, false, "VDD_GPU_SOC");
  add(a, "2", true, false, "VDD_CPU_CV");
  add(a, "3", true, false, "VIN_SYS_5V0");
  add(b, "1", true, false, "NC");
  add(b, "2", true, false, "VDDQ_VDD2_1V8AO");
  sysfs_.write("bus/i2c/drivers/ina3221/bind", "");
  if (family == Family::kOrinWithIna238) {
    add("bus/i2c/drivers/ina238/2-0044/hwmon/hwmon5", "1", true, true, "VDD_IN");
  }
}

void FakeJetsonBoard::add(const std::string& dir, const std::string& channel, bool hwmon,
                          bool power_file, const std::string& label) {
  rails_[label] = Rail{dir, channel, hwmon, power_file};
  sysfs_.write(dir + (hwmon ? "/in" + channel + "_label" : "/rail_name_" + channel), label);
  set_rail_mw(label, 1000.0);
}

void FakeJetsonBoard::set_rail_mw(const std::string& label, double mw) {
  auto it = rails_.find(label);
  ZEUS_CHECK(it != rails_.end(), "FakeJetsonBoard: no rail " + label);
  const Rail& rail = it->second;
  if (rail.power_file) {
    // hwmon power is in uW, the iio driver's in mW.
    sysfs_.write(rail_file(label), number(rail.hwmon ? mw * 1000.0 : mw));
    return;
  }
  const std::string prefix = rail.dir + (rail.hwmon ? "/" : "/in_");
  sysfs_.write(rail_file(label), number(kRailVoltageMv));
  sysfs_.write(prefix + (rail.hwmon ? "curr" : "current") + rail.channel + "_input",
               number(mw * 1000.0 / kRailVoltageMv));
}

std::string FakeJetsonBoard::rail_file(const std::string& label) const {
  const Rail& rail = rails_.at(label);
  if (rail.power_file) {
    return rail.dir + (rail.hwmon ? "/power" : "/in_power") + rail.channel + "_input";
  }
  return rail.dir + (rail.hwmon ? "/in" : "/in_voltage") + rail.channel + "_input";
}

void FakeJetsonBoard::remove_rail(const std::string& label) {
  const Rail& rail = rails_.at(label);
  sysfs_.remove(rail_file(label));
  if (!rail.power_file) {
    sysfs_.remove(rail.dir + (rail.hwmon ? "/curr" : "/in_current") + rail.channel + "_input");
  }
}

}  // namespace zeus::testing
