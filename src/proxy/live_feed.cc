#include "proxy/live_feed.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace zeus::proxy {
namespace {

using nlohmann::json;

json request_json(int source, const LiveRequest& r) {
  return {{"source", source},          {"id", r.id},        {"model", r.model},
          {"start_s", r.start_s},      {"end_s", r.end_s},  {"energy_j", r.energy_j},
          {"tokens", r.output_tokens}, {"status", r.status}};
}

std::string dump_compact(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

std::string LiveFeed::gpus_label(const std::vector<int>& indices) {
  if (indices.empty()) return "all GPUs";
  std::string out = "GPU ";
  for (size_t i = 0; i < indices.size(); ++i) out += (i ? "," : "") + std::to_string(indices[i]);
  return out;
}

int LiveFeed::add_source(const std::string& name, const std::string& gpus) {
  std::lock_guard<std::mutex> lock(mu_);
  sources_.push_back(Source{name, gpus, {}, false, 0, 0, {}, {}});
  return static_cast<int>(sources_.size()) - 1;
}

std::string LiveFeed::model_key_locked(const std::string& model) {
  const std::string key = model.empty() ? "(unnamed)" : model;
  if (models_.count(key) || models_.size() < limits_.max_models) return key;
  return "(other)";
}

void LiveFeed::started(int source, uint64_t id, const std::string& model, double time_s) {
  std::lock_guard<std::mutex> lock(mu_);
  LiveRequest r;
  r.id = id;
  r.model = model;
  r.start_s = time_s;
  sources_.at(source).in_flight[id] = r;
  if (!listeners_.empty()) broadcast_locked(dump_compact(request_json(source, r)), "start");
}

void LiveFeed::finished(int source, const LiveRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
  Source& s = sources_.at(source);
  s.in_flight.erase(request.id);
  s.done.push_back(request);
  while (s.done.size() > limits_.max_requests) s.done.pop_front();
  ModelTotals& totals = models_[model_key_locked(request.model)];
  ++totals.requests;
  totals.energy_j += request.energy_j;
  totals.output_tokens += request.output_tokens;
  if (!listeners_.empty()) broadcast_locked(dump_compact(request_json(source, request)), "end");
}

void LiveFeed::energy(int source, double time_s, double energy_j) {
  std::lock_guard<std::mutex> lock(mu_);
  Source& s = sources_.at(source);
  if (!s.read || energy_j < s.last_energy_j || time_s < s.last_time_s) {
    s.read = true;  // the first reading, or the counter or clock went back: start over
    s.last_time_s = time_s;
    s.last_energy_j = energy_j;
    return;
  }
  const double period_s = time_s - s.last_time_s;
  if (period_s < limits_.min_power_period_s) return;
  const PowerPoint point{time_s, (energy_j - s.last_energy_j) / period_s};
  s.last_time_s = time_s;
  s.last_energy_j = energy_j;
  s.power.push_back(point);
  while (s.power.size() > limits_.max_power_points) s.power.pop_front();
  if (listeners_.empty()) return;  // nobody to tell: no event formatted
  broadcast_locked(dump_compact({{"source", source}, {"t", point.time_s}, {"w", point.watts}}),
                   "power");
}

void LiveFeed::clock(int source, double time_s, double clock_mhz, double slo_attainment) {
  std::lock_guard<std::mutex> lock(mu_);
  Source& s = sources_.at(source);
  s.clock.push_back({time_s, clock_mhz, slo_attainment});
  while (s.clock.size() > limits_.max_power_points) s.clock.pop_front();
  if (listeners_.empty()) return;
  broadcast_locked(dump_compact({{"source", source},
                                 {"t", time_s},
                                 {"mhz", clock_mhz},
                                 {"attainment", slo_attainment}}),
                   "clock");
}

std::string LiveFeed::snapshot_json() const {
  std::lock_guard<std::mutex> lock(mu_);
  return snapshot_locked();
}

std::string LiveFeed::snapshot_locked() const {
  json sources = json::array();
  json requests = json::array();
  for (size_t i = 0; i < sources_.size(); ++i) {
    const Source& s = sources_[i];
    json power = json::array();
    for (const PowerPoint& p : s.power) power.push_back({p.time_s, p.watts});
    json clock = json::array();
    for (const ClockPoint& c : s.clock) clock.push_back({c.time_s, c.mhz, c.attainment});
    sources.push_back({{"name", s.name},
                       {"gpus", s.gpus},
                       {"power", std::move(power)},
                       {"clock", std::move(clock)}});
    for (const LiveRequest& r : s.done) requests.push_back(request_json(static_cast<int>(i), r));
    for (const auto& [id, r] : s.in_flight) {
      requests.push_back(request_json(static_cast<int>(i), r));
    }
  }
  json models = json::object();
  for (const auto& [name, t] : models_) {
    models[name] = {
        {"requests", t.requests}, {"energy_j", t.energy_j}, {"tokens", t.output_tokens}};
  }
  return dump_compact({{"sources", std::move(sources)},
                       {"requests", std::move(requests)},
                       {"models", std::move(models)}});
}

bool LiveFeed::subscribe(std::shared_ptr<http::EventStream> listener) {
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(listeners_, [](const auto& l) { return !l->open(); });
  if (listeners_.size() >= limits_.max_listeners) return false;
  // Under the lock: no event falls between the snapshot and the first live event.
  if (!listener->send(snapshot_locked(), "snapshot")) return true;
  listeners_.push_back(std::move(listener));
  return true;
}

size_t LiveFeed::listeners() const {
  std::lock_guard<std::mutex> lock(mu_);
  return std::count_if(listeners_.begin(), listeners_.end(),
                       [](const auto& l) { return l->open(); });
}

void LiveFeed::broadcast_locked(const std::string& data, const char* name) {
  std::erase_if(listeners_, [&](const auto& l) { return !l->send(data, name); });
}

}  // namespace zeus::proxy
