// InstructionProfiler's arguments and file (perseus/server/profiler_scheduler.h).
#include "perseus/server/profiler_scheduler.h"

#include <array>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/strict_json.h"

namespace zeus::pfo {
namespace {

using nlohmann::json;

constexpr std::array kArgs = {"num_microbatches",    "frequencies",   "minimum_frequency",
                              "minimum_power_state", "warmup_rounds", "warmup_step_ratio",
                              "max_energy_rises",    "profile_path"};

tl::unexpected<Error> bad_arg(const std::string& name, const std::string& what) {
  return fail(ErrorCode::kInvalidArgument, "InstructionProfiler argument '" + name + "' " + what);
}

Result<int> int_arg(const json& value, const std::string& name) {
  if (!value.is_number_integer() || value.get<long long>() < 0 ||
      value.get<long long>() > 1000000) {
    return bad_arg(name, "must be a whole number in 0-1000000");
  }
  return static_cast<int>(value.get<long long>());
}

// Writes the profile after every clock the wrapped profiler measured.
class ProfileFileWriter final : public FrequencyScheduler {
 public:
  ProfileFileWriter(std::unique_ptr<InstructionProfiler> profiler, std::string path)
      : profiler_(std::move(profiler)), path_(std::move(path)) {}

  Result<std::vector<FrequencySchedule>> next_schedule() override {
    return profiler_->next_schedule();
  }

  Result<void> observe(const std::vector<ProfilingResult>& results) override {
    const int before = profiler_->profiled_clocks();
    ZEUS_TRY(profiler_->observe(results));
    if (profiler_->profiled_clocks() == before) return ok();
    Result<void> written = write_file_atomically(path_, profiler_->profile_csv());
    if (!written) {
      return fail(written.error().code, "InstructionProfiler: " + written.error().message +
                                            "; give a writable profile_path or --dump folder");
    }
    return ok();
  }

 private:
  std::unique_ptr<InstructionProfiler> profiler_;
  std::string path_;
};

}  // namespace

Result<InstructionProfilerOptions> parse_profiler_args(std::string_view args_json) {
  InstructionProfilerOptions o;
  if (args_json.empty()) return o;
  Result<json> args = parse_strict_json_object(args_json);
  if (!args) {
    return fail(ErrorCode::kInvalidArgument,
                "the InstructionProfiler arguments: " + args.error().message +
                    " (a JSON object such as {\"num_microbatches\": 8})");
  }
  Result<void> known = check_known_fields(*args, kArgs);
  if (!known) {
    return fail(ErrorCode::kInvalidArgument,
                "the InstructionProfiler arguments: " + known.error().message);
  }
  for (const auto& [name, value] : args->items()) {
    if (name == "frequencies") {
      if (!value.is_array()) return bad_arg(name, "must be a list of clocks in MHz");
      for (const json& mhz : value) {
        Result<int> clock = int_arg(mhz, name);
        if (!clock) return bad_arg(name, "must hold whole numbers of MHz in 0-1000000");
        o.frequencies_mhz.push_back(*clock);
      }
      if (o.frequencies_mhz.empty()) return bad_arg(name, "is empty; list the clocks to profile");
    } else if (name == "warmup_step_ratio") {
      if (!value.is_number()) return bad_arg(name, "must be a number in [0, 1)");
      o.warmup_step_ratio = value.get<double>();
    } else if (name == "profile_path") {
      if (!value.is_string() || value.get<std::string>().empty()) {
        return bad_arg(name, "must be a file path (a non-empty string)");
      }
      o.profile_path = value.get<std::string>();
    } else {
      Result<int> n = int_arg(value, name);
      if (!n) return fail(n.error());
      if (name == "num_microbatches") o.num_microbatches = *n;
      if (name == "minimum_frequency" || name == "minimum_power_state")
        o.minimum_frequency_mhz = *n;
      if (name == "warmup_rounds") o.warmup_rounds = *n;
      if (name == "max_energy_rises") o.max_energy_rises = *n;
    }
  }
  return o;
}

Result<SchedulerFactory> instruction_profiler_factory(std::string_view args_json,
                                                      const std::string& dump_dir) {
  Result<InstructionProfilerOptions> options = parse_profiler_args(args_json);
  if (!options) return fail(options.error());
  ZEUS_TRY(check_profiler_options(*options));  // at server start, not when a job comes
  if (options->profile_path.empty() && dump_dir.empty()) {
    return fail(ErrorCode::kInvalidArgument,
                "InstructionProfiler writes a stage profile: give a dump folder (--dump DIR) or "
                "profile_path in the scheduler arguments");
  }
  const InstructionProfilerOptions base = *options;
  return SchedulerFactory([base, dump_dir](const JobInfo& job, const std::vector<RankInfo>& ranks)
                              -> Result<std::unique_ptr<FrequencyScheduler>> {
    InstructionProfilerOptions o = base;
    if (o.profile_path.empty()) {
      o.profile_path =
          (std::filesystem::path(dump_dir) / job.job_id / "stage_profile.csv").string();
    } else if (size_t at = o.profile_path.find("{job_id}"); at != std::string::npos) {
      o.profile_path.replace(at, 8, job.job_id);
    }
    const std::string path = o.profile_path;
    Result<std::unique_ptr<InstructionProfiler>> profiler =
        InstructionProfiler::make(job, ranks, std::move(o));
    if (!profiler) return fail(profiler.error());
    return std::unique_ptr<FrequencyScheduler>(
        std::make_unique<ProfileFileWriter>(std::move(*profiler), path));
  });
}

}  // namespace zeus::pfo
