#include "pfo_files.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <fstream>
#include <functional>
#include <system_error>

#include "cli_parse.h"
#include "output_path.h"
#include "perseus/planner/python_float.h"

#include "zeus/perseus/pfo_plan_choice.h"
#include "zeus/perseus/pfo_plan_store.h"

namespace zeus::cli {
namespace fs = std::filesystem;

std::string shortest_double(double value) { return pfo::python_float_repr(value); }

nlohmann::json plan_summary(const pfo::Frontier& frontier, const pfo::StageProfile& profile,
                            const std::string& profile_path) {
  const pfo::PlannerOptions& o = frontier.options();
  const auto& points = frontier.points();
  nlohmann::json s;
  s["profile"] = profile_path;
  s["stages"] = o.num_stages;
  s["microbatches"] = o.num_microbatches;
  s["p2p_power_w"] = o.p2p_power_w;
  s["unit_s"] = o.unit_time_s;
  s["noise_factor"] = o.noise_factor;
  s["pareto"] = o.pareto == pfo::ParetoEnergy::kEffective ? "effective" : "measured";
  s["plans"] = points.size();
  s["stop_reason"] = std::string(pfo::stop_reason_text(frontier.stop_reason()));
  s["t_max_s"] = static_cast<double>(frontier.max_quant_time()) * o.unit_time_s;
  s["t_min_s"] = static_cast<double>(frontier.min_quant_time()) * o.unit_time_s;
  // A candidate: its row of frontier.csv and plans.bin, or null for the T_max schedule.
  auto reference = [](const pfo::PlanChoice& choice) {
    return nlohmann::json{
        {"index", choice.plan ? nlohmann::json(*choice.plan) : nlohmann::json(nullptr)},
        {"time_s", choice.point.time_s},
        {"energy_j", choice.point.energy_j}};
  };
  const pfo::PlanCandidates candidates = pfo::plan_candidates(frontier);
  s["t_max_plan"] = reference({std::nullopt, frontier.all_slowest()});
  if (!points.empty()) {
    const pfo::PlanChoice fastest = pfo::fastest_plan(candidates);
    const double baseline = pfo::all_max_clock_energy_j(profile, frontier.schedule(), o.p2p_power_w,
                                                        fastest.point.time_s);
    s["slowest_plan"] = reference({0, points.front()});
    s["fastest_plan"] = reference(fastest);
    s["t_star_plan"] = reference(pfo::min_energy_plan(candidates));
    s["all_max_clock_energy_j"] = baseline;
    // Like with like: the fastest plan's clocks priced as the baseline is (measured rows), so the
    // all-max schedule saves exactly 0 %; the fitted energy only when a clock has no row.
    const double measured =
        fastest.plan ? pfo::measured_plan_energy_j(profile, frontier.schedule(),
                                                   frontier.clocks_mhz(*fastest.plan),
                                                   o.p2p_power_w, fastest.point.time_s)
                     : std::nan("");
    s["fastest_plan_measured_energy_j"] =
        std::isnan(measured) ? nlohmann::json(nullptr) : nlohmann::json(measured);
    // The paper's figure compares the plan's fitted energy with the measured baseline (Table 6
    // reproduces with it); the schedule that is the baseline itself saves exactly nothing.
    const bool is_baseline = measured == baseline;
    s["fastest_plan_saving"] = is_baseline ? 0.0 : 1.0 - fastest.point.energy_j / baseline;
    s["fastest_plan_measured_saving"] =
        std::isnan(measured) ? nlohmann::json(nullptr) : nlohmann::json(1.0 - measured / baseline);
  }
  nlohmann::json schedule = nlohmann::json::array();
  for (const auto& stage : frontier.schedule()) {
    nlohmann::json names = nlohmann::json::array();
    for (const auto& inst : stage) names.push_back(std::string(pfo::instruction_name(inst.kind)));
    schedule.push_back(names);
  }
  s["schedule"] = schedule;
  s["t_max_frequencies"] = frontier.all_slowest_clocks_mhz();
  nlohmann::json models = nlohmann::json::array();
  for (const pfo::OperationModel& m : frontier.models()) {
    nlohmann::json clocks = nlohmann::json::array();
    for (const auto& option : m.options) {
      clocks.push_back({{"frequency_mhz", option.frequency_mhz},
                        {"time_s", option.time_s},
                        {"energy_j", option.energy_j},
                        {"quant_time", option.quant_time}});
    }
    models.push_back({{"stage", m.stage},
                      {"instruction", std::string(pfo::instruction_name(m.instruction))},
                      {"fit", {{"a", m.cost.a}, {"b", m.cost.b}, {"c", m.cost.c}}},
                      {"fit_mse", m.fit_mse},
                      {"fit_injected", m.cost_injected},
                      {"options", clocks}});
  }
  s["operations"] = models;
  return s;
}

namespace {

// Why the last file operation failed: a stream leaves errno as the system call that failed set it
// (callers clear errno first, so that a failure the system gave no reason for does not read as
// an older error, or as "Success").
std::string last_error() {
  if (errno == 0) return "no reason given by the system";
  return std::error_code(errno, std::generic_category()).message();
}

// Writes `path` with `fill`; the failure, with the reason, or "" when it was written.
std::string write_file(const fs::path& path, const std::function<void(std::ostream&)>& fill) {
  errno = 0;
  std::ofstream file(path);
  if (file) fill(file);
  if (file) file.close();
  return file ? std::string() : "cannot write " + path.string() + ": " + last_error();
}

}  // namespace

nlohmann::json plan_line(std::size_t index, const PlanRecord& plan) {
  return {{"index", index},
          {"time", plan.time_s},
          {"energy", plan.energy_j},
          {"frequencies", plan.frequencies}};
}

Result<void> write_plan_files(const fs::path& dir, const pfo::Frontier& frontier,
                              std::span<const pfo::GlobalClockPlan> global_clocks,
                              const nlohmann::json& summary) {
  auto target = output_folder("--out", dir);
  if (!target) return fail(target.error());
  const fs::path temp =
      target->parent_path() / (target->filename().string() + ".tmp-" + std::to_string(getpid()));
  std::error_code ec;
  fs::remove_all(temp, ec);
  if (ec) {
    return fail(ErrorCode::kPermissionDenied,
                "cannot remove the leftover " + temp.string() + ": " + ec.message());
  }
  fs::create_directories(temp, ec);
  if (ec) {
    return fail(
        ErrorCode::kPermissionDenied,
        "cannot create " + temp.string() + " (the plans are written there first): " + ec.message());
  }
  auto cleanup = [&temp] {
    std::error_code ignored;
    fs::remove_all(temp, ignored);
  };
  std::string failure = write_file(temp / "frontier.csv", [&](std::ostream& csv) {
    csv << "time,energy\n";
    for (const auto& p : frontier.points())
      csv << shortest_double(p.time_s) << ',' << shortest_double(p.energy_j) << '\n';
  });
  if (failure.empty()) {
    if (Result<void> store = pfo::write_plan_store(temp / "plans.bin", frontier, global_clocks);
        !store) {
      failure = store.error().message;
    }
  }
  if (failure.empty()) {
    failure = write_file(temp / "summary.json",
                         [&](std::ostream& out) { out << summary.dump(2) << '\n'; });
  }
  if (!failure.empty()) {
    cleanup();
    return fail(ErrorCode::kUnavailable, failure + " (nothing was written to --out)");
  }
  // Renaming over an empty folder replaces it.
  fs::rename(temp, *target, ec);
  if (ec) {
    const std::string reason = ec.message();
    cleanup();
    return fail(ErrorCode::kPermissionDenied, "cannot move the plans from " + temp.string() +
                                                  " into " + target->string() + ": " + reason);
  }
  return ok();
}

Result<void> write_schedule_file(const fs::path& path, const nlohmann::json& schedule) {
  auto target = output_file("--out", path);
  if (!target) return fail(target.error());
  const fs::path temp = target->string() + ".tmp-" + std::to_string(getpid());
  const std::string failure =
      write_file(temp, [&](std::ostream& file) { file << schedule.dump() << '\n'; });
  std::error_code ec;
  if (failure.empty()) fs::rename(temp, *target, ec);
  if (!failure.empty() || ec) {
    const std::string reason = failure.empty() ? "cannot move " + temp.string() + " to " +
                                                     target->string() + ": " + ec.message()
                                               : failure;
    fs::remove(temp, ec);
    return fail(ErrorCode::kPermissionDenied, reason);
  }
  return ok();
}

Result<std::vector<PlanRecord>> read_plans(const fs::path& dir, long keep) {
  std::error_code ec;
  if (fs::exists(dir / "plans.bin", ec)) {
    auto store = pfo::PlanStore::open(dir / "plans.bin");
    if (!store) return fail(store.error());
    std::vector<PlanRecord> plans;
    for (const pfo::FrontierPoint& p : store->points()) plans.push_back({p.time_s, p.energy_j, {}});
    if (keep >= 0 && static_cast<std::size_t>(keep) < plans.size()) {
      auto clocks = store->clocks_mhz(static_cast<std::size_t>(keep));
      if (!clocks) return fail(clocks.error());
      plans[static_cast<std::size_t>(keep)].frequencies = std::move(*clocks);
    }
    if (plans.empty())
      return fail(ErrorCode::kInvalidArgument, (dir / "plans.bin").string() + " holds no plans");
    return plans;
  }
  // A folder of an older `zeus pfo plan`: one JSON object per line.
  errno = 0;
  std::ifstream in(dir / "plans.jsonl");
  if (!in) {
    return fail(ErrorCode::kNotFound, "cannot read " + (dir / "plans.bin").string() + " or " +
                                          (dir / "plans.jsonl").string() + ": " + last_error() +
                                          " (pass the --out folder of `zeus pfo plan`)");
  }
  std::vector<PlanRecord> plans;
  std::string line;
  long number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    auto json = nlohmann::json::parse(line, nullptr, false);
    if (json.is_discarded() || !json.is_object() || !json.contains("time") ||
        !json.contains("energy") || !json["time"].is_number() || !json["energy"].is_number() ||
        !json.contains("frequencies")) {
      return fail(ErrorCode::kInvalidArgument,
                  (dir / "plans.jsonl").string() + " line " + std::to_string(number) +
                      ": not a plan object {\"time\", \"energy\", \"frequencies\"}");
    }
    PlanRecord record{json["time"].get<double>(), json["energy"].get<double>(), {}};
    if (static_cast<long>(plans.size()) == keep) {
      try {
        record.frequencies = json["frequencies"].get<std::vector<std::vector<int>>>();
      } catch (const nlohmann::json::exception&) {
        return fail(ErrorCode::kInvalidArgument, (dir / "plans.jsonl").string() + " line " +
                                                     std::to_string(number) +
                                                     ": frequencies must be lists of MHz");
      }
    }
    plans.push_back(std::move(record));
  }
  if (plans.empty())
    return fail(ErrorCode::kInvalidArgument, (dir / "plans.jsonl").string() + " holds no plans");
  return plans;
}

Result<PlanFolder> read_plan_folder(const fs::path& dir) {
  std::error_code ec;
  const fs::file_status status = fs::status(dir, ec);
  if (status.type() != fs::file_type::directory) {
    const std::string what = status.type() == fs::file_type::not_found ? "does not exist"
                             : status.type() == fs::file_type::none
                                 ? "cannot be examined (" + ec.message() + ")"
                                 : "is " + file_type_words(status.type()) + ", not a folder";
    return fail(ErrorCode::kNotFound, "--plans '" + echo_value(dir.string()) + "' " + what +
                                          "; pass the --out folder of `zeus pfo plan`");
  }
  const fs::path path = dir / "summary.json";
  errno = 0;
  std::ifstream in(path);
  if (!in.is_open()) {
    return fail(ErrorCode::kNotFound, "cannot read " + path.string() + ": " + last_error() +
                                          " (pass the --out folder of `zeus pfo plan`)");
  }
  auto summary = nlohmann::json::parse(in, nullptr, false);
  if (summary.is_discarded() || !summary.is_object()) {
    return fail(ErrorCode::kInvalidArgument,
                path.string() + " is not a JSON object (pass the --out folder of `zeus pfo plan`)");
  }
  if (!summary.contains("t_max_plan") || !summary.contains("t_max_frequencies")) {
    return fail(ErrorCode::kInvalidArgument,
                path.string() +
                    " has no t_max_plan: it was written by an older `zeus pfo plan`, which left "
                    "out the schedule with every instruction at its slowest clock; plan again");
  }
  PlanFolder folder;
  try {
    folder.stages = summary.at("stages");
    folder.microbatches = summary.at("microbatches");
    folder.schedule = summary.at("schedule").get<std::vector<std::vector<std::string>>>();
    const nlohmann::json& t_max = summary.at("t_max_plan");
    folder.t_max.time_s = t_max.at("time_s").get<double>();
    folder.t_max.energy_j = t_max.at("energy_j").get<double>();
    folder.t_max.frequencies = summary.at("t_max_frequencies").get<std::vector<std::vector<int>>>();
  } catch (const nlohmann::json::exception& e) {
    return fail(ErrorCode::kInvalidArgument,
                path.string() + " is damaged (" + e.what() + "); plan again");
  }
  return folder;
}

}  // namespace zeus::cli
