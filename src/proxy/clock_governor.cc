#include "proxy/clock_governor.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "proxy/live_feed.h"
#include "proxy/meter.h"
#include "zeus/common/log.h"

namespace zeus::proxy {
namespace {

// The profile's energy of one iteration at `clock_mhz` for the load in `o`.
double iteration_j(const ServingProfile& p, double clock_mhz, const ServingObservation& o) {
  const double batch = std::max(1.0, o.running);
  const double context = batch * o.mean_context_tokens;
  const double decode_s = p.iteration_s(clock_mhz, 0, batch, context);
  const double prefill = std::min(p.prefill_chunk_tokens, o.prompt_tokens_per_s * decode_s);
  return p.iteration_w(clock_mhz, prefill, batch, context) *
         p.iteration_s(clock_mhz, prefill, batch, context);
}

double unix_now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The start-up line's source when the engine's metrics answer.
std::string engine_source(const EngineSignals& s) {
  return "the engine's /metrics (" + s.engine + ": " + s.families +
         ") beside the proxy's own view, the larger of the two";
}

}  // namespace

Result<std::unique_ptr<ClockGovernorLoop>> ClockGovernorLoop::start(
    const std::vector<Gpu*>& gpus, Meter& meter, GovernOptions options, LiveFeed* feed,
    int feed_source, std::unique_ptr<EngineScraper> scraper) {
  if (gpus.empty()) return fail(ErrorCode::kInvalidArgument, "--govern: no GPU to govern");
  if (!(options.period_s > 0)) {
    return fail(ErrorCode::kInvalidArgument, "--govern: the control period must be > 0 s");
  }
  std::vector<std::unique_ptr<FrequencyController>> controllers;
  for (Gpu* gpu : gpus) {
    auto controller = FrequencyController::start(*gpu, {});
    if (!controller) {
      return fail(controller.error().code, "--govern: cannot set the clocks of GPU " +
                                               std::to_string(gpu->physical_index()) + ": " +
                                               controller.error().message);
    }
    controllers.push_back(std::move(*controller));
  }
  ServingProfile profile =
      options.has_profile ? options.profile : ServingProfile::parametric_h100();
  const double profiled_max = profile.max_clock();
  profile.clocks_mhz = serving_clock_ladder(controllers.front()->supported_sm_clocks_mhz());
  if (options.has_profile && profiled_max != profile.max_clock()) {
    log_warning("zeus proxy --govern: the serving profile was measured with a highest clock of " +
                std::to_string(static_cast<int>(profiled_max)) + " MHz, this GPU's is " +
                std::to_string(static_cast<int>(profile.max_clock())) +
                " MHz: calibrate on this GPU (zeus proxy calibrate)");
  }
  auto governor = ServingGovernor::create(profile, options.governor);
  if (!governor) return fail(governor.error().code, "--govern: " + governor.error().message);
  meter.set_slos(options.governor.ttft_slo_s, options.governor.tpot_slo_s);
  return std::unique_ptr<ClockGovernorLoop>(
      new ClockGovernorLoop(std::move(controllers), std::move(*governor), std::move(profile), meter,
                            options, feed, feed_source, std::move(scraper)));
}

ClockGovernorLoop::ClockGovernorLoop(std::vector<std::unique_ptr<FrequencyController>> controllers,
                                     std::unique_ptr<ServingGovernor> governor,
                                     ServingProfile profile, Meter& meter, GovernOptions options,
                                     LiveFeed* feed, int feed_source,
                                     std::unique_ptr<EngineScraper> scraper)
    : controllers_(std::move(controllers)),
      governor_(std::move(governor)),
      profile_(std::move(profile)),
      meter_(meter),
      options_(options),
      feed_(feed),
      feed_source_(feed_source),
      scraper_(std::move(scraper)) {
  last_.clock_mhz = profile_.max_clock();
  // The first read decides the start-up line; the thread starts after it (no race on scraper_).
  if (!scraper_) {
    load_source_ = "the proxy's own view (--engine-metrics off)";
  } else if (Result<EngineSignals> s = scraper_->scrape(); s) {
    engine_ok_ = true;
    load_source_ = engine_source(*s);
  } else {
    load_source_ = "the proxy's own view only (requests that do not pass through it are not "
                   "seen): " + s.error().message;
  }
  thread_ = std::thread([this] { run(); });
}

std::string ClockGovernorLoop::load_source() {
  std::lock_guard<std::mutex> lock(mu_);
  return load_source_;
}

void ClockGovernorLoop::merge_engine_load(ServingObservation& o, nlohmann::json& row) {
  if (!scraper_) return;
  Result<EngineSignals> s = scraper_->scrape();
  if (!s) {
    if (engine_ok_) {
      log_warning("zeus proxy --govern: the engine's metrics stopped answering (" +
                  s.error().message + "): the governor sees only the requests through the proxy");
      std::lock_guard<std::mutex> lock(mu_);
      load_source_ = "the proxy's own view only (the engine's metrics stopped answering)";
    }
    engine_ok_ = false;
    row["load_source"] = "proxy";
    return;
  }
  if (!engine_ok_) {
    log_info("zeus proxy --govern: reading the engine's own load from its metrics (" + s->engine +
             ")");
    std::lock_guard<std::mutex> lock(mu_);
    load_source_ = engine_source(*s);
  }
  engine_ok_ = true;
  row["load_source"] = s->engine;
  if (s->running >= 0) {
    row["engine_running"] = s->running;
    o.running = std::max(o.running, s->running);
  }
  if (s->waiting >= 0) {
    row["engine_waiting"] = s->waiting;
    o.waiting = std::max(o.waiting, s->waiting);
  }
  if (s->kv_cache_usage >= 0) row["kv_cache_usage"] = s->kv_cache_usage;
}

ClockGovernorLoop::~ClockGovernorLoop() { stop(); }

void ClockGovernorLoop::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  for (auto& controller : controllers_) {
    if (Result<void> done = controller->stop(); !done) {
      log_error("zeus proxy --govern: restoring the clocks: " + done.error().message);
    }
  }
}

void ClockGovernorLoop::run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    wake_.wait_for(lock, std::chrono::duration<double>(options_.period_s));
    if (stopping_) break;
    lock.unlock();
    step();
    lock.lock();
  }
}

// One decision: observe, decide, apply, account, log.
void ClockGovernorLoop::step() {
  ServingObservation o = meter_.serving_observation();
  nlohmann::json engine = nlohmann::json::object();
  merge_engine_load(o, engine);
  const ClockDecision d = governor_->decide(o);
  for (auto& controller : controllers_) controller->request(static_cast<uint32_t>(d.clock_mhz));
  const double measured_j = meter_.status().measured_j;
  const SloAttainment attainment = meter_.attainment();
  bool log_it = false;
  ClockDecision before;
  {
    std::lock_guard<std::mutex> lock(mu_);
    before = last_;
    if (measured_mark_j_ >= 0 && o.running > 0 && d.clock_mhz < profile_.max_clock()) {
      const double ratio = iteration_j(profile_, profile_.max_clock(), o) /
                           iteration_j(profile_, before.clock_mhz, o);
      saved_j_ += std::max(0.0, measured_j - measured_mark_j_) * std::max(0.0, ratio - 1);
    }
    measured_mark_j_ = measured_j;
    if (d.clock_mhz != before.clock_mhz) ++changes_;
    log_it = !decided_ || d.clock_mhz != before.clock_mhz || d.reason != before.reason;
    last_ = d;
    decided_ = true;
    if (d.reason == GovernorReason::kSloUnreachable) {
      if (!warned_unreachable_) {
        log_warning(
            "zeus proxy --govern: the latencies are over their SLO even at the maximum "
            "clock (TTFT p" +
            std::to_string(static_cast<int>(options_.governor.quantile * 100)) + " " +
            std::to_string(d.ttft_quantile_s) + " s, TPOT " + std::to_string(d.tpot_quantile_s) +
            " s): the SLOs cannot be met at this "
            "load; the clock stays at the maximum. Raise --ttft-slo/--tpot-slo or add GPUs.");
      }
      warned_unreachable_ = true;
    } else if (d.reason != GovernorReason::kRaisedOnLatency) {
      warned_unreachable_ = false;
    }
  }
  if (feed_) feed_->clock(feed_source_, unix_now_s(), d.clock_mhz, attainment.rate());
  if (!log_it) return;
  nlohmann::json row = {{"type", "governor"},
                              {"time_unix_s", unix_now_s()},
                              {"clock_mhz", d.clock_mhz},
                              {"previous_mhz", before.clock_mhz},
                              {"reason", governor_reason_name(d.reason)},
                              {"running", o.running},
                              {"waiting", o.waiting},
                              {"prompt_tokens_per_s", o.prompt_tokens_per_s},
                              {"ttft_quantile_s", d.ttft_quantile_s},
                              {"tpot_quantile_s", d.tpot_quantile_s},
                              {"predicted_ttft_s", d.predicted_ttft_s},
                              {"predicted_tpot_s", d.predicted_tpot_s},
                              {"headroom", d.headroom},
                              {"slo_attainment", attainment.rate()}};
  for (auto& [key, value] : engine.items()) row[key] = value;
  meter_.log_line(row.dump());
}

void ClockGovernorLoop::add_status(ProxyStatus& status) {
  const SloAttainment attainment = meter_.attainment();
  std::lock_guard<std::mutex> lock(mu_);
  status.governing = true;
  status.clock_mhz = last_.clock_mhz;
  status.max_clock_mhz = profile_.max_clock();
  status.governor_reason = decided_ ? governor_reason_name(last_.reason) : "blind";
  status.governor_load = load_source_;
  status.clock_changes = changes_;
  status.energy_saved_j = saved_j_;
  status.energy_saved_source =
      options_.has_profile
          ? "the serving profile " + options_.profile_source + " (zeus proxy calibrate)"
          : "the built-in parametric model of an 8B model on an H100 (no --serving-profile; "
            "not this server)";
  status.slo_attainment = attainment.rate();
  status.slo_requests = attainment.finished;
}

}  // namespace zeus::proxy
