// ZeusdGpu and ZeusdCpu: Gpu/Cpu implementations whose privileged calls go to zeusd.
//
// ZeusdGpu forwards set/reset power limit, persistence mode and lock/reset clocks to zeusd (the
// GPU zeusd knows by the same UUID) as GpuCommands (wire/zeusd_command.h) on upstream Zeus's
// routes (/gpu/set_power_limit?gpu_ids=i&power_limit_mw=N&block=true, ...; reset = set the
// default limit) and answers everything else from the local Gpu it wraps — or, when NVML could not
// open the GPU locally, from upstream's read routes (/gpu/get_power_limit, ...) and /discover (the
// average power from zeusd's /gpu/get_average_power, which upstream lacks). ZeusdCpu reads
// /cpu/get_cumulative_energy.
// ZeusdCpu reads RAPL counters through zeusd; its counters start at 0 when it is created, like
// RaplCpu's. Units: the Gpu/Cpu interface's. Thread-safety: as ZeusdClient (shared, serialised).
// Failure: zeusd's answers as Errors (see zeus/zeusd_client/zeusd_client.h); NotFound for a local
// GPU that
// zeusd does not manage.
//
//   auto client = std::make_shared<zeus::ZeusdClient>("/run/zeusd/zeusd.sock");
//   auto inventory = zeus::zeusd::fetch_inventory(*client);
//   zeus::zeusd::ZeusdGpu gpu(client, inventory->gpus[0], nullptr);
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "wire/zeusd_command.h"
#include "zeus/device/device.h"
#include "zeus/zeusd_client/zeusd_client.h"

namespace zeus::zeusd {

// One GPU as GET /discover describes it.
struct RemoteGpuInfo {
  int index = -1;  // zeusd's index; -1: zeusd does not manage this GPU
  std::string name;
  std::string uuid;
  GpuArchitecture architecture = GpuArchitecture::kUnknown;
  bool has_energy_counter = false;
  std::optional<PowerLimitRangeMw> power_limit_range_mw;
  std::optional<uint32_t> default_power_limit_mw;
  std::optional<std::vector<uint32_t>> supported_sm_clocks_mhz;
  std::optional<std::vector<uint32_t>> supported_memory_clocks_mhz;
};

struct RemoteCpuInfo {
  int index = 0;    // zeusd's index
  int package = 0;  // the N of intel-rapl:N
  std::string name;
  bool has_dram = false;
};

// What GET /discover answered.
struct ZeusdInventory {
  std::vector<RemoteGpuInfo> gpus;
  std::vector<RemoteCpuInfo> cpus;
  std::vector<std::string> capabilities;  // what the caller may do: "gpu-control", ...
};

// GET /discover, decoded. Internal when the answer is not the expected JSON.
Result<ZeusdInventory> fetch_inventory(ZeusdClient& client);

class ZeusdGpu final : public Gpu {
 public:
  // `local` may be null (reads then go to zeusd too).
  ZeusdGpu(std::shared_ptr<ZeusdClient> client, RemoteGpuInfo info, std::unique_ptr<Gpu> local);

  GpuVendor vendor() const override;
  // The local GPU's backend plus " via zeusd", or "zeusd" without a local GPU.
  std::string backend() const override;
  std::string name() const override;
  std::string uuid() const override;
  GpuArchitecture architecture() const override;
  int physical_index() const override;

  Result<PowerLimitRangeMw> power_limit_range_mw() override;
  Result<uint32_t> default_power_limit_mw() override;
  Result<uint32_t> power_limit_mw() override;
  Result<void> set_power_limit_mw(uint32_t limit_mw) override;
  Result<void> reset_power_limit() override;
  Result<uint32_t> instant_power_mw() override;
  Result<uint32_t> average_power_mw() override;
  // The local GPU's scope (zeusd's wire has none: kGpu without a local GPU).
  PowerScope power_scope() override { return local_ ? local_->power_scope() : PowerScope::kGpu; }
  bool has_energy_counter() override;
  Result<uint64_t> total_energy_mj() override;
  Result<bool> persistence_mode() override;
  Result<void> set_persistence_mode(bool enabled) override;
  Result<std::vector<uint32_t>> supported_memory_clocks_mhz() override;
  Result<std::vector<uint32_t>> supported_sm_clocks_mhz() override;
  Result<void> lock_sm_clocks_mhz(uint32_t min_mhz, uint32_t max_mhz) override;
  Result<void> reset_sm_clocks() override;
  Result<void> lock_memory_clocks_mhz(uint32_t min_mhz, uint32_t max_mhz) override;
  Result<void> reset_memory_clocks() override;

 private:
  // "/gpu/<route>?gpu_ids=<index>" (a read route).
  std::string target(std::string_view route) const;
  // POSTs `command`'s write route for this GPU with block=true.
  Result<void> change(const GpuCommand& command);
  // GETs the read `route` for this GPU and returns this GPU's entry of the answer.
  Result<nlohmann::json> read_remote(std::string_view route);
  // read_remote()'s unsigned field `field` (nullptr: the entry itself).
  Result<uint64_t> read_number(std::string_view route, const char* field);
  std::shared_ptr<ZeusdClient> client_;
  RemoteGpuInfo info_;
  std::unique_ptr<Gpu> local_;
};

class ZeusdCpu final : public Cpu {
 public:
  ZeusdCpu(std::shared_ptr<ZeusdClient> client, RemoteCpuInfo info);

  int index() const override { return info_.package; }
  std::string name() const override { return info_.name; }
  Result<uint64_t> package_energy_uj() override;
  bool has_dram() const override { return info_.has_dram; }
  Result<uint64_t> dram_energy_uj() override;

 private:
  // GET /cpu/get_cumulative_energy: the package's or DRAM's energy since the first read.
  Result<uint64_t> read(bool dram);
  std::shared_ptr<ZeusdClient> client_;
  RemoteCpuInfo info_;
  struct Counter {
    std::optional<uint64_t> last_raw_uj;  // zeusd's value at the previous read
    uint64_t total_uj = 0;                // since the first read
  };
  std::mutex mutex_;
  Counter package_;  // guarded by mutex_
  Counter dram_;     // guarded by mutex_
};

}  // namespace zeus::zeusd
