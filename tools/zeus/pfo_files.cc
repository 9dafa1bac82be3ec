#include "pfo_files.h"

#include <unistd.h>

#include <charconv>
#include <fstream>
#include <system_error>

#include "zeus/pfo_plan_choice.h"

namespace zeus::cli {
namespace fs = std::filesystem;

std::string shortest_double(double value) {
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  std::string text(buffer, end);
  // Python writes whole floats with ".0".
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}

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
  // A candidate: its row of frontier.csv and plans.jsonl, or null for the T_max schedule.
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
    s["fastest_plan_saving"] = 1.0 - fastest.point.energy_j / baseline;
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

Result<void> write_plan_files(const fs::path& dir, const pfo::Frontier& frontier,
                              const nlohmann::json& summary) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_empty(dir, ec)) {
    return fail(ErrorCode::kInvalidArgument,
                "--out " + dir.string() +
                    " exists and is not empty (choose a new folder; nothing was written)");
  }
  const fs::path temp =
      dir.parent_path() / (dir.filename().string() + ".tmp-" + std::to_string(getpid()));
  fs::remove_all(temp, ec);
  if (!fs::create_directories(temp, ec) || ec) {
    return fail(ErrorCode::kPermissionDenied,
                "cannot create " + temp.string() + ": " + ec.message());
  }
  auto cleanup = [&] { fs::remove_all(temp, ec); };
  {
    std::ofstream csv(temp / "frontier.csv");
    csv << "time,energy\n";
    for (const auto& p : frontier.points())
      csv << shortest_double(p.time_s) << ',' << shortest_double(p.energy_j) << '\n';
    std::ofstream plans(temp / "plans.jsonl");
    frontier.for_each_plan([&](std::size_t i, const std::vector<std::vector<int>>& clocks) {
      const auto& p = frontier.points()[i];
      plans << nlohmann::json{{"index", i},
                              {"time", p.time_s},
                              {"energy", p.energy_j},
                              {"frequencies", clocks}}
                   .dump()
            << '\n';
    });
    std::ofstream out(temp / "summary.json");
    out << summary.dump(2) << '\n';
    if (!csv || !plans || !out) {
      cleanup();
      return fail(ErrorCode::kUnavailable,
                  "cannot write the plan files under " + temp.string() + " (disk full?)");
    }
  }
  if (fs::exists(dir, ec)) fs::remove(dir, ec);  // an empty folder
  fs::rename(temp, dir, ec);
  if (ec) {
    cleanup();
    return fail(ErrorCode::kPermissionDenied,
                "cannot move the plans into " + dir.string() + ": " + ec.message());
  }
  return ok();
}

Result<std::vector<PlanRecord>> read_plans(const fs::path& dir, long keep) {
  std::ifstream in(dir / "plans.jsonl");
  if (!in) {
    return fail(ErrorCode::kNotFound, "cannot read " + (dir / "plans.jsonl").string() +
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
  const fs::path path = dir / "summary.json";
  std::ifstream in(path);
  auto summary = nlohmann::json::parse(in, nullptr, false);
  if (!in.is_open() || summary.is_discarded() || !summary.is_object()) {
    return fail(ErrorCode::kNotFound,
                "cannot read " + path.string() + " (pass the --out folder of `zeus pfo plan`)");
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
