// Jetson power rails: the INA3221 (and INA238) power monitors of NVIDIA Jetson boards, found by
// name in sysfs, as upstream Zeus's zeus/device/soc/jetson.py finds them.
//
// Where: <sysfs_root>/bus/i2c/drivers/{ina3221x,ina3221,ina238}/<device>/ and its hwmon*/
// children. Two layouts:
//   hwmon (Orin, newer kernels): in<N>_label names rail N; power<N>_input (uW, the hwmon ABI:
//     INA238) or in<N>_input (mV) x curr<N>_input (mA) / 1000 gives mW.
//   ina3221x (Xavier, L4T r32): rail_name_<N> names it; in_power<N>_input (mW) or
//     in_voltage<N>_input (mV) x in_current<N>_input (mA) / 1000.
// Rail names vary by board (VDD_GPU_SOC, VDD_CPU_CV, VIN_SYS_5V0, VDD_IN, GPU, CPU, ...); they
// are classified case-insensitively as upstream does: "cpu" -> cpu, else "gpu" -> gpu, else
// "system", "_in" or "total" -> total; we also take a name starting "vin" (AGX Orin's
// VIN_SYS_5V0, the module's input) as total. Other rails (SOC, CV, VDDRQ, ...) are not used. Per
// kind the rail found last wins (directories in sorted order), as upstream.
// Thread-safety: stateless. Failure: NotFound (no power monitor, a rail that disappeared),
// PermissionDenied (an unreadable file), Internal (a value that is not a number).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "zeus/common/result.h"

namespace zeus {

enum class JetsonRailKind { kCpu, kGpu, kTotal };

// "cpu", "gpu", "total".
std::string jetson_rail_kind_name(JetsonRailKind kind);

// The kind of a rail named `label`; nullopt for rails Zeus does not use.
std::optional<JetsonRailKind> classify_jetson_rail(const std::string& label);

struct JetsonRail {
  JetsonRailKind kind = JetsonRailKind::kTotal;
  std::string label;  // as the board names it, e.g. "VDD_GPU_SOC"
  // Either a power file (power_scale_mw converts its unit to mW) or voltage and current files.
  std::string power_path;
  double power_scale_mw = 1.0;
  std::string voltage_path;  // mV
  std::string current_path;  // mA
};

// Every usable rail under `sysfs_root`, one per kind, in kind order. NotFound when there is no
// power monitor or it has no usable rail.
Result<std::vector<JetsonRail>> find_jetson_rails(const std::string& sysfs_root);

// The rail's power now, in mW.
Result<double> read_jetson_rail_mw(const JetsonRail& rail);

}  // namespace zeus
