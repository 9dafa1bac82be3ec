#include "proxy/meter.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "proxy/request_fields.h"
#include "zeus/common/log.h"

namespace zeus::proxy {

Meter::Meter(GpuEnergyReader reader, double interval_s, std::string log_path,
             size_t steady_state_window)
    : reader_(std::move(reader)),
      interval_s_(interval_s),
      log_path_(std::move(log_path)),
      window_(steady_state_window) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    sample_locked();
  }
  thread_ = std::thread([this] { run(); });
}

Meter::~Meter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

Result<void> Meter::open_log() {
  if (log_path_.empty()) return ok();
  log_.open(log_path_, std::ios::app);
  if (!log_) return fail(ErrorCode::kUnavailable, "cannot open the log '" + log_path_ + "'");
  return ok();
}

double Meter::now_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_).count();
}

void Meter::publish_to(LiveFeed* feed, int source) {
  std::lock_guard<std::mutex> lock(mu_);
  feed_ = feed;
  feed_source_ = source;
}

void Meter::run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    wake_.wait_for(lock, std::chrono::duration<double>(interval_s_));
    if (!stopping_) sample_locked();
  }
}

void Meter::sample_locked() {
  Result<std::vector<double>> each_j = reader_.read_each_j();
  if (!each_j) {
    if (!read_failed_)
      log_warning("zeus proxy: cannot read the GPUs' energy: " + each_j.error().message);
    read_failed_ = true;
    last_read_ok_ = false;
    return;  // the interval stretches to the next good reading
  }
  last_read_ok_ = true;
  const double t = now_s();
  const std::vector<double>& fed = follower_.follow(t, *each_j);  // counter_follower.h
  double energy_j = 0;
  for (double j : fed) energy_j += j;
  ledger_.sample(t, energy_j);
  window_.reading(t, energy_j);
  if (feed_) feed_->energy(feed_source_, epoch_unix_s_ + t, energy_j);
  update_power_locked(t, fed);
  for (RequestEnergy& r : ledger_.take_finished()) settled_[r.id] = std::move(r);
}

// Each GPU's mean power since the last mark, a mark at least one interval old (readings at
// requests' ends come closer together than the counters' millijoule steps allow).
void Meter::update_power_locked(double time_s, const std::vector<double>& each_j) {
  if (power_mark_s_ < 0) {
    gpu_power_w_.assign(each_j.size(), 0.0);
  } else if (time_s - power_mark_s_ >= 0.9 * interval_s_) {
    for (size_t i = 0; i < each_j.size(); ++i) {
      gpu_power_w_[i] = std::max(0.0, (each_j[i] - power_mark_j_[i]) / (time_s - power_mark_s_));
    }
  } else {
    return;
  }
  power_mark_s_ = time_s;
  power_mark_j_ = each_j;
}

RequestId Meter::begin(bool streamed, const std::string& given_model, size_t body_bytes) {
  const std::string model = clip_label(given_model);  // client-chosen: kept at a bounded size
  std::lock_guard<std::mutex> lock(mu_);
  const RequestId id = next_id_++;
  const double t = now_s();
  ledger_.start(id, t, streamed);
  window_.begin(id, t);
  load_.started(id, t, streamed, body_bytes);
  if (feed_) feed_->started(feed_source_, id, model, epoch_unix_s_ + t);
  return id;
}

void Meter::tokens(RequestId id, int64_t count) {
  if (count <= 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  const double t = now_s();
  ledger_.tokens(id, t, count);
  window_.tokens(id, t, count);
  load_.tokens(id, t, count);
}

void Meter::usage(RequestId id, int64_t prompt_tokens, int64_t completion_tokens) {
  std::lock_guard<std::mutex> lock(mu_);
  ledger_.prompt_tokens(id, prompt_tokens);
  ledger_.output_tokens(id, completion_tokens);
  load_.prompt_tokens(id, prompt_tokens);
}

RequestEnergy Meter::end(RequestId id, const RequestRecord& given) {
  // Client-chosen strings are kept (feed, window, log) at a bounded size.
  RequestRecord record = given;
  record.model = clip_label(given.model);
  record.request_id = clip_label(given.request_id);
  record.response_id = clip_label(given.response_id);
  RequestEnergy out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const double t = now_s();
    ledger_.end(id, t);
    window_.end(id, t);
    load_.finished(id, t);
    sample_locked();  // closes the request's last interval: its energy is settled now
    if (auto it = settled_.find(id); it != settled_.end()) {
      out = std::move(it->second);
      settled_.erase(it);
    } else {
      out.id = id;
      out.method = "none";
    }
    if (feed_) {
      feed_->finished(feed_source_,
                      {id, record.model, epoch_unix_s_ + window_.start_s(id), epoch_unix_s_ + t,
                       out.energy_j, out.output_tokens, record.status});
    }
    window_.finish({id, record.model, out.output_tokens, out.energy_j, out.method});
    ++requests_;
    output_tokens_ += out.output_tokens;
    if (log_.is_open()) {
      const double start_unix_s =
          std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
              .count() -
          record.latency_s;
      nlohmann::json row = {{"id", id},
                            {"request_id", record.request_id},
                            {"response_id", record.response_id},
                            {"time_unix_s", start_unix_s},
                            {"model", record.model},
                            {"streamed", record.streamed},
                            {"status", record.status},
                            {"prompt_tokens", out.prompt_tokens},
                            {"output_tokens", out.output_tokens},
                            {"ttft_s", record.ttft_s},
                            {"latency_s", record.latency_s},
                            {"energy_j", out.energy_j},
                            {"method", out.method}};
      log_ << row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      log_.flush();
    }
  }
  return out;
}

RunReport Meter::report() {
  std::lock_guard<std::mutex> lock(mu_);
  sample_locked();
  RunReport report;
  ProxySummary& s = report.summary;
  s.requests = requests_;
  s.output_tokens = output_tokens_;
  s.attributed_j = ledger_.attributed_j();
  s.idle_j = ledger_.idle_j();
  s.measured_j = ledger_.measured_j();
  report.steady = window_.steady_state();
  s.steady_state_found = report.steady.found;
  s.steady_state_why = report.steady.why;
  s.steady_state_j_per_token = report.steady.j_per_token;
  report.requests = window_.results();
  report.results_dropped = window_.dropped();
  return report;
}

ProxySummary Meter::summary() { return report().summary; }

ProxyStatus Meter::status() {
  std::lock_guard<std::mutex> lock(mu_);
  ProxyStatus s;
  s.requests = requests_;
  s.output_tokens = output_tokens_;
  s.in_flight = static_cast<int64_t>(ledger_.in_flight());
  s.attributed_j = ledger_.attributed_j();
  s.idle_j = ledger_.idle_j();
  s.measured_j = ledger_.measured_j();
  s.gpu_indices = reader_.indices();
  s.gpu_power_w = gpu_power_w_;
  return s;
}

}  // namespace zeus::proxy

namespace zeus::proxy {

ServingObservation Meter::serving_observation() {
  std::lock_guard<std::mutex> lock(mu_);
  ServingObservation o = load_.observe(now_s());
  o.readings_ok = last_read_ok_;
  return o;
}

void Meter::set_slos(double ttft_slo_s, double tpot_slo_s) {
  std::lock_guard<std::mutex> lock(mu_);
  load_.set_slos(ttft_slo_s, tpot_slo_s);
}

SloAttainment Meter::attainment() {
  std::lock_guard<std::mutex> lock(mu_);
  return load_.attainment();
}

void Meter::log_line(const std::string& line) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!log_.is_open()) return;
  log_ << line << "\n";
  log_.flush();
}

}  // namespace zeus::proxy
