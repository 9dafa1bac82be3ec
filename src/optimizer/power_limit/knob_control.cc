#include "optimizer/power_limit/knob_control.h"

#include <algorithm>
#include <functional>

namespace zeus {
namespace {

std::string describe_range(const PowerLimitRangeMw& r) {
  return std::to_string(r.min_mw / 1000) + "-" + std::to_string(r.max_mw / 1000) + " W";
}

Error with_context(Error error, const std::string& context) {
  // A refusal by zeusd already names its own fix (the operator's --allow); the hint about root
  // and zeusd is for a job that changes the GPU itself.
  const bool from_zeusd = error.message.rfind("zeusd: ", 0) == 0;
  error.message = context + ": " + error.message;
  if (error.code == ErrorCode::kPermissionDenied && !from_zeusd &&
      error.message.find("CAP_SYS_ADMIN") == std::string::npos) {
    error.message +=
        " (changing GPU power limits or clocks needs root or CAP_SYS_ADMIN: run as root, "
        "use `docker run --cap-add SYS_ADMIN`, or let the zeusd daemon do it)";
  }
  return error;
}

}  // namespace

Result<KnobControl> KnobControl::create(std::vector<Gpu*> gpus, OptimizerKnob knob) {
  if (gpus.empty()) {
    return fail(ErrorCode::kInvalidArgument,
                "the power-limit optimizer needs at least one GPU (the monitor measures none)");
  }
  PowerLimitRangeMw range{};
  std::vector<uint32_t> clocks;
  for (size_t i = 0; i < gpus.size(); ++i) {
    auto r = gpus[i]->power_limit_range_mw();
    if (!r) return fail(with_context(r.error(), "reading the power limit range of GPU " +
                                                    std::to_string(i)));
    if (i == 0) {
      range = *r;
    } else if (r->min_mw != range.min_mw || r->max_mw != range.max_mw) {
      return fail(ErrorCode::kInvalidArgument,
                  "all optimized GPUs must share one power limit range, but GPU 0 has " +
                      describe_range(range) + " and GPU " + std::to_string(i) + " has " +
                      describe_range(*r) + " (optimize each GPU model in its own job)");
    }
    if (knob != OptimizerKnob::kSmClock) continue;
    auto c = gpus[i]->supported_sm_clocks_mhz();
    if (!c) return fail(with_context(c.error(), "reading the SM clocks of GPU " +
                                                    std::to_string(i)));
    std::vector<uint32_t> sorted = *c;
    std::sort(sorted.rbegin(), sorted.rend());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    if (sorted.empty()) {
      return fail(ErrorCode::kNotSupported,
                  "GPU " + std::to_string(i) + " lists no SM clocks (use the power-limit knob)");
    }
    if (i == 0) {
      clocks = sorted;
    } else if (sorted != clocks) {
      return fail(ErrorCode::kInvalidArgument,
                  "all optimized GPUs must support the same SM clocks, but GPU " +
                      std::to_string(i) + " differs from GPU 0");
    }
  }
  if (range.max_mw < range.min_mw || range.max_mw < 1000) {
    return fail(ErrorCode::kInternal, "GPU 0 reports an empty power limit range " +
                                          describe_range(range));
  }
  return KnobControl(std::move(gpus), knob, range, std::move(clocks));
}

std::string KnobControl::gpu_model() const { return gpus_.front()->name(); }

double KnobControl::max_power_w() const {
  return static_cast<double>(range_mw_.max_mw) / 1000.0 * static_cast<double>(gpus_.size());
}

Result<std::vector<uint32_t>> KnobControl::candidates(
    uint32_t step, std::vector<uint32_t> explicit_settings) const {
  std::vector<uint32_t> out;
  if (!explicit_settings.empty()) {
    for (uint32_t s : explicit_settings) {
      if (knob_ == OptimizerKnob::kPowerLimit) {
        if (static_cast<uint64_t>(s) * 1000 < range_mw_.min_mw ||
            static_cast<uint64_t>(s) * 1000 > range_mw_.max_mw) {
          return fail(ErrorCode::kInvalidArgument,
                      "candidate power limit " + std::to_string(s) + " W is outside the GPUs' " +
                          describe_range(range_mw_) + " range");
        }
      } else if (std::find(sm_clocks_mhz_.begin(), sm_clocks_mhz_.end(), s) ==
                 sm_clocks_mhz_.end()) {
        return fail(ErrorCode::kInvalidArgument,
                    "candidate SM clock " + std::to_string(s) +
                        " MHz is not one the GPUs support (see `zeus devices`)");
      }
      out.push_back(s);
    }
  } else if (knob_ == OptimizerKnob::kPowerLimit) {
    if (step == 0) {
      return fail(ErrorCode::kInvalidArgument, "the power limit step must be > 0 W (e.g. 25)");
    }
    const uint32_t min_w = (range_mw_.min_mw + 999) / 1000;
    for (int64_t w = range_mw_.max_mw / 1000; w >= min_w; w -= step) {
      out.push_back(static_cast<uint32_t>(w));
    }
  } else if (step == 0) {
    out = sm_clocks_mhz_;
  } else {
    for (int64_t target = sm_clocks_mhz_.front(); target >= sm_clocks_mhz_.back();
         target -= step) {
      auto it = std::find_if(sm_clocks_mhz_.begin(), sm_clocks_mhz_.end(),
                             [&](uint32_t c) { return c <= target; });
      if (it != sm_clocks_mhz_.end()) out.push_back(*it);
    }
  }
  std::sort(out.rbegin(), out.rend());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Result<void> KnobControl::set_all(uint32_t value, bool maximum) {
  if (last_set_ == value) return ok();
  last_set_.reset();  // unknown until every GPU took it
  for (size_t i = 0; i < gpus_.size(); ++i) {
    Result<void> r;
    std::string what;
    if (knob_ == OptimizerKnob::kPowerLimit) {
      what = "setting the power limit of GPU " + std::to_string(i) + " to " +
             std::to_string(value / 1000) + " W";
      r = gpus_[i]->set_power_limit_mw(value);
    } else if (maximum) {
      what = "unlocking the SM clocks of GPU " + std::to_string(i);
      r = gpus_[i]->reset_sm_clocks();
    } else {
      what = "locking the SM clocks of GPU " + std::to_string(i) + " to at most " +
             std::to_string(value) + " MHz";
      r = gpus_[i]->lock_sm_clocks_mhz(sm_clocks_mhz_.back(), value);
    }
    if (!r) return fail(with_context(r.error(), what));
  }
  last_set_ = value;
  return ok();
}

Result<void> KnobControl::apply(uint32_t setting) {
  return set_all(knob_ == OptimizerKnob::kPowerLimit ? setting * 1000 : setting, false);
}

Result<void> KnobControl::apply_maximum() {
  return set_all(knob_ == OptimizerKnob::kPowerLimit ? range_mw_.max_mw : 0, true);
}

}  // namespace zeus
