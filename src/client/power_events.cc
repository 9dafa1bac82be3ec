#include "client/power_events.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

namespace zeus::client {

std::vector<std::string> SseSplitter::feed(std::string_view piece) {
  std::vector<std::string> out;
  buffer_.append(piece);
  size_t start = 0;
  while (true) {
    // An event ends at a blank line (LF LF; CR LF CR LF from other servers).
    size_t end = buffer_.find("\n\n", start);
    size_t skip = 2;
    const size_t crlf = buffer_.find("\r\n\r\n", start);
    if (crlf != std::string::npos && (end == std::string::npos || crlf < end)) {
      end = crlf;
      skip = 4;
    }
    if (end == std::string::npos) break;
    std::string data;
    bool any = false;
    bool comment = false;
    std::string_view event(buffer_.data() + start, end - start);
    while (!event.empty()) {
      const size_t eol = event.find('\n');
      std::string_view line = event.substr(0, eol);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.rfind("data:", 0) == 0) {
        line.remove_prefix(5);
        if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
        if (any) data.push_back('\n');
        data.append(line);
        any = true;
      } else if (!line.empty() && line.front() == ':') {
        comment = true;
      }
      if (eol == std::string_view::npos) break;
      event.remove_prefix(eol + 1);
    }
    if (any) {
      out.push_back(std::move(data));
    } else if (comment) {
      ++keepalives_;
    }
    start = end + skip;
  }
  buffer_.erase(0, start);
  if (buffer_.size() > max_) {
    buffer_.clear();
    overflowed_ = true;
  }
  return out;
}

Result<PowerEvent> parse_power_event(std::string_view data, bool gpu) {
  const auto json = nlohmann::json::parse(data, nullptr, false);
  const std::string shown(data.substr(0, 100));
  auto bad = [&](const std::string& why) -> Result<PowerEvent> {
    return fail(ErrorCode::kInvalidArgument,
                std::string(gpu ? "GPU" : "CPU") + " power event " + why + ": " + shown);
  };
  if (json.is_discarded() || !json.is_object()) return bad("is not a JSON object");
  auto number = [&](const char* key) -> std::optional<double> {
    auto it = json.find(key);
    if (it == json.end() || !it->is_number()) return std::nullopt;
    return it->get<double>();
  };
  auto id = json.find(gpu ? "gpu_id" : "cpu_id");
  const auto timestamp_ms = number("timestamp_ms");
  const auto power_mw = number(gpu ? "power_mw" : "cpu_mw");
  if (id == json.end() || !id->is_number_unsigned() || !timestamp_ms || !power_mw) {
    return bad(std::string("lacks timestamp_ms, ") +
               (gpu ? "gpu_id or power_mw" : "cpu_id or cpu_mw"));
  }
  // What one device can report: an id a machine can have, a time, and a power a device can draw
  // (a reading outside these would poison the node's and the cluster's sums).
  if (id->get<uint64_t>() > static_cast<uint64_t>(kMaxDeviceId)) {
    return bad("has a device id above " + std::to_string(kMaxDeviceId));
  }
  if (!std::isfinite(*timestamp_ms) || *timestamp_ms < 0) return bad("has a timestamp that is not a time");
  auto plausible_w = [](double mw) { return std::isfinite(mw) && mw >= 0 && mw <= kMaxDevicePowerW * 1000; };
  if (!plausible_w(*power_mw)) {
    return bad("has a power that no device draws (not in 0-" +
               std::to_string(static_cast<int>(kMaxDevicePowerW)) + " W)");
  }
  PowerEvent event;
  event.gpu = gpu;
  event.device_id = static_cast<int>(id->get<uint64_t>());
  event.timestamp_s = *timestamp_ms / 1000.0;
  event.power_w = *power_mw / 1000.0;
  if (!gpu) {
    if (auto dram = number("dram_mw")) {
      if (!plausible_w(*dram)) return bad("has a DRAM power that no device draws");
      event.dram_w = *dram / 1000.0;
    }
  }
  return event;
}

void PowerIntegrator::set(const std::string& name, double power_w, double time_s) {
  Device& d = devices_[name];
  if (d.active) {
    // A reading dated before the last one (the daemon's clock stepped back) takes effect at the
    // last one's time: the power is followed, and no reading stops the count.
    time_s = std::max(time_s, d.since_s);
    d.energy_j += d.power_w * (time_s - d.since_s);
  }
  d.power_w = power_w;
  d.since_s = time_s;
  d.active = true;
}

void PowerIntegrator::pause(const std::string& name, double time_s) {
  auto it = devices_.find(name);
  if (it == devices_.end() || !it->second.active) return;
  Device& d = it->second;
  if (time_s > d.since_s) d.energy_j += d.power_w * (time_s - d.since_s);
  d.since_s = std::max(d.since_s, time_s);
  d.active = false;
}

double PowerIntegrator::energy_j(const std::string& name, double now_s) const {
  auto it = devices_.find(name);
  if (it == devices_.end()) return 0;
  const Device& d = it->second;
  if (!d.active || now_s <= d.since_s) return d.energy_j;
  return d.energy_j + d.power_w * (now_s - d.since_s);
}

std::optional<double> PowerIntegrator::power_w(const std::string& name) const {
  auto it = devices_.find(name);
  if (it == devices_.end() || !it->second.active) return std::nullopt;
  return it->second.power_w;
}

std::vector<std::string> PowerIntegrator::names() const {
  std::vector<std::string> out;
  for (const auto& [name, device] : devices_) out.push_back(name);
  return out;
}

}  // namespace zeus::client
