#include "fake_rocm_smi_state.h"

#include <cstdlib>
#include <filesystem>

#include "fake_rocm_smi/fake_state.h"
#include "zeus/common/result.h"

namespace zeus::testing {
namespace {

namespace model = zeus::fake_rocm_smi;
using model::json;

constexpr uint64_t kStartTimeNs = 1700000000ull * 1000000000ull;

json& device_at(json& state, int index) {
  ZEUS_CHECK(state.contains("devices") && index >= 0 &&
                 static_cast<size_t>(index) < state["devices"].size(),
             "FakeRocmSmiState: no device " + std::to_string(index));
  return state["devices"][static_cast<size_t>(index)];
}

}  // namespace

FakeRocmSmiState::FakeRocmSmiState(int num_devices) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "zeus_fake_rocm_smi_XXXXXX").string();
  ZEUS_CHECK(mkdtemp(pattern.data()) != nullptr, "FakeRocmSmiState: mkdtemp failed");
  dir_ = pattern;
  path_ = dir_ + "/state.json";
  json state = model::default_state(num_devices);
  state["time_ns"] = kStartTimeNs;
  for (auto& device : state["devices"]) device["energy_time_ns"] = kStartTimeNs;
  ZEUS_CHECK(model::write_state_unlocked(path_, state), "FakeRocmSmiState: cannot write " + path_);
  if (const char* previous = std::getenv("ZEUS_FAKE_ROCM_SMI_STATE")) previous_env_ = previous;
  setenv("ZEUS_FAKE_ROCM_SMI_STATE", path_.c_str(), 1);
}

FakeRocmSmiState::~FakeRocmSmiState() {
  if (previous_env_) {
    setenv("ZEUS_FAKE_ROCM_SMI_STATE", previous_env_->c_str(), 1);
  } else {
    unsetenv("ZEUS_FAKE_ROCM_SMI_STATE");
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

void FakeRocmSmiState::patch_device(int index, const std::string& json_object) {
  json patch = json::parse(json_object, nullptr, /*allow_exceptions=*/false);
  ZEUS_CHECK(patch.is_object(), "FakeRocmSmiState::patch_device needs a JSON object");
  bool written = model::update_state(path_, [&](json& state) {
    json& device = device_at(state, index);
    model::settle_energy(device, model::now_ns(state));
    device.update(patch);
  });
  ZEUS_CHECK(written, "FakeRocmSmiState: cannot update " + path_);
}

void FakeRocmSmiState::set_power_w(int index, double power_w, std::optional<double> average_w) {
  json patch{{"power_uw", static_cast<uint64_t>(power_w * 1e6)}};
  if (average_w) patch["average_power_uw"] = static_cast<uint64_t>(*average_w * 1e6);
  patch_device(index, patch.dump());
}

void FakeRocmSmiState::set_energy_count(int index, uint64_t count, double resolution_uj) {
  patch_device(index,
               json{{"energy_count", count}, {"energy_resolution_uj", resolution_uj}}.dump());
}

void FakeRocmSmiState::set_field(const std::string& key, const std::string& json_value) {
  json value = json::parse(json_value, nullptr, /*allow_exceptions=*/false);
  ZEUS_CHECK(!value.is_discarded(), "FakeRocmSmiState::set_field needs a JSON value");
  ZEUS_CHECK(model::update_state(path_, [&](json& state) { state[key] = value; }),
             "FakeRocmSmiState: cannot update " + path_);
}

void FakeRocmSmiState::remove_device(int index) {
  ZEUS_CHECK(model::update_state(path_,
                                 [&](json& state) {
                                   device_at(state, index);  // checks the index
                                   state["devices"].erase(static_cast<size_t>(index));
                                 }),
             "FakeRocmSmiState: cannot update " + path_);
}

void FakeRocmSmiState::set_error(const std::string& function, uint32_t status) {
  ZEUS_CHECK(model::update_state(path_, [&](json& state) { state["errors"][function] = status; }),
             "FakeRocmSmiState: cannot update " + path_);
}

void FakeRocmSmiState::clear_errors() {
  ZEUS_CHECK(model::update_state(path_, [&](json& state) { state["errors"] = json::object(); }),
             "FakeRocmSmiState: cannot update " + path_);
}

void FakeRocmSmiState::advance_time_s(double duration_s) {
  ZEUS_CHECK(duration_s >= 0, "FakeRocmSmiState: time moves forward only");
  ZEUS_CHECK(model::update_state(path_,
                                 [&](json& state) {
                                   state["time_ns"] = model::now_ns(state) +
                                                      static_cast<uint64_t>(duration_s * 1e9);
                                 }),
             "FakeRocmSmiState: cannot update " + path_);
}

double FakeRocmSmiState::device_number(int index, const std::string& key) const {
  json state;
  ZEUS_CHECK(model::read_state(path_, &state), "FakeRocmSmiState: cannot read " + path_);
  const json& value = device_at(state, index)[key];
  ZEUS_CHECK(value.is_number(), "FakeRocmSmiState: device field " + key + " is not a number");
  return value.get<double>();
}

std::string FakeRocmSmiState::device_json(int index) const {
  json state;
  ZEUS_CHECK(model::read_state(path_, &state), "FakeRocmSmiState: cannot read " + path_);
  return device_at(state, index).dump();
}

void FakeRocmSmiClock::sleep_until_s(double t_s) {
  double before_s = clock_.now_s();
  clock_.sleep_until_s(t_s);
  double moved_s = clock_.now_s() - before_s;
  if (moved_s > 0) state_.advance_time_s(moved_s);
}

}  // namespace zeus::testing
