#include "simulate_json.h"

#include <cmath>

namespace zeus::cli {

using Json = nlohmann::ordered_json;

namespace {

// The keys every multi-seed run starts with, in this order.
template <typename Result>
Json run_header(const char* experiment, const Result& r) {
  return Json{{"experiment", experiment},
              {"gpu", r.gpu},
              {"eta", r.eta},
              {"beta", r.beta},
              {"seeds", r.seeds}};
}

// A policy's total under a provider: {"unit", "total", "stddev"} or, unknown,
// {"unit", "total": null, "unknown_reason"}.
Json accounted(const sim::AccountedStat& a, const char* unit) {
  if (!a.complete) return Json{{"unit", unit}, {"total", nullptr}, {"unknown_reason", a.unknown_reason}};
  return Json{{"unit", unit}, {"total", a.amount.mean}, {"stddev", a.amount.stddev}};
}

}  // namespace

Json headline_json(const sim::HeadlineResult& r) {
  Json out = run_header("headline", r);
  if (r.accounted()) {
    out["accounting"] = Json{{"schedule", r.schedule},
                             {"carbon", r.carbon_source.empty() ? Json(nullptr) : Json(r.carbon_source)},
                             {"price", r.price_source.empty() ? Json(nullptr) : Json(r.price_source)}};
  }
  out["workloads"] = Json::array();
  for (const sim::WorkloadHeadline& w : r.workloads) {
    Json jw;
    jw["name"] = w.name;
    jw["recurrences"] = w.recurrences;
    Json policies = Json::object();
    for (const sim::PolicyHeadline& p : w.policies) {
      Json jp;
      jp["last5_energy_ratio"] = p.last5_energy_ratio.mean;
      jp["last5_time_ratio"] = p.last5_time_ratio.mean;
      jp["cum_energy_ratio"] = p.cum_energy_ratio.mean;
      jp["cum_time_ratio"] = p.cum_time_ratio.mean;
      jp["cum_regret"] = p.cum_regret_j.mean;
      jp["cum_regret_vs_oracle"] = p.cum_regret_vs_oracle_j.mean;
      if (r.accounted()) {
        jp["cum_energy_j"] = p.cum_energy_j.mean;
        if (p.carbon) jp["carbon"] = accounted(*p.carbon, "gCO2eq");
        if (p.cost) jp["cost"] = accounted(*p.cost, "$");
      }
      policies[std::string(sim::policy_name(p.policy))] = jp;
    }
    jw["oracle"] = Json{{"batch_size", w.oracle_all_paths_batch_size},
                        {"power_limit", w.oracle_all_paths_power_limit_w},
                        {"cost_j", w.oracle_all_paths.cost_j}};
    jw["oracle_expected"] = Json{{"batch_size", w.oracle_batch_size},
                                 {"power_limit", w.oracle_power_limit_w},
                                 {"cost_j", w.oracle.cost_j}};
    jw["policies"] = policies;
    out["workloads"].push_back(jw);
  }
  return out;
}

Json compare_json(const sim::CompareResult& r) {
  Json out = run_header("compare", r);
  out["a"] = Json{{"label", r.a_label}, {"rules", r.a_rules}};
  out["b"] = Json{{"label", r.b_label}, {"rules", r.b_rules}};
  auto paired = [](const sim::PairedStat& s) {
    return Json{{"mean_a", s.mean_a}, {"se_a", s.se_a},           {"mean_b", s.mean_b},
                {"se_b", s.se_b},     {"mean_diff", s.mean_diff}, {"se_diff", s.se_diff}};
  };
  out["workloads"] = Json::array();
  for (const sim::WorkloadComparison& w : r.workloads) {
    out["workloads"].push_back(Json{{"name", w.name},
                                    {"recurrences", w.recurrences},
                                    {"cum_energy_ratio", paired(w.cum_energy_ratio)},
                                    {"cum_regret", paired(w.cum_regret_j)},
                                    {"last5_energy_ratio", paired(w.last5_energy_ratio)}});
  }
  out["mean_relative_regret_diff"] = r.mean_relative_regret_diff;
  return out;
}

Json pareto_json(const sim::ParetoResult& r) {
  Json out;
  out["experiment"] = "pareto";
  out["gpu"] = r.gpu;
  out["eta"] = r.eta;
  out["workloads"] = Json::array();
  for (const sim::WorkloadPareto& w : r.workloads) {
    Json jw;
    jw["name"] = w.name;
    jw["points"] = Json::array();
    for (const sim::ParetoPoint& p : w.points) {
      Json jp;
      jp["batch_size"] = p.batch_size;
      jp["power_limit"] = p.power_limit_w;
      jp["tta_s"] = p.tta_s;
      jp["eta_j"] = p.eta_j;
      jp["cost_j"] = p.cost_j;
      jp["reach_probability"] = p.reach_probability;
      jp["on_frontier"] = p.on_frontier;
      jp["is_default"] = p.is_default;
      jp["is_optimum"] = p.is_optimum;
      jw["points"].push_back(jp);
    }
    out["workloads"].push_back(jw);
  }
  return out;
}

Json sweep_json(const sim::SweepResult& r) {
  Json out;
  out["experiment"] = r.experiment;
  out["parameter"] = r.parameter;
  out["gpu"] = r.gpu;
  out["eta"] = r.eta;
  out["beta"] = r.beta;
  out["seeds"] = r.seeds;
  out["variants"] = r.variants;
  out["workloads"] = Json::array();
  for (const sim::SweepWorkload& w : r.workloads) {
    Json jw;
    jw["name"] = w.name;
    jw["results"] = Json::array();
    for (const sim::SweepCell& c : w.cells) {
      Json jc;
      jc["variant"] = c.variant;
      jc["value"] = c.value;
      jc["cum_energy_ratio"] = c.cum_energy_ratio.mean;
      jc["cum_time_ratio"] = c.cum_time_ratio.mean;
      jc["last5_energy_ratio"] = c.last5_energy_ratio.mean;
      jc["last5_time_ratio"] = c.last5_time_ratio.mean;
      jc["cum_regret"] = c.cum_regret_j.mean;
      jc["grid_cum_regret"] = c.grid_cum_regret_j.mean;
      jc["last5_eta_j"] = c.last5_eta_j.mean;
      jc["last5_tta_s"] = c.last5_tta_s.mean;
      jc["oracle_eta_j"] = c.oracle_eta_j;
      jc["oracle_tta_s"] = c.oracle_tta_s;
      jc["converged_batch_size"] = c.converged_batch_size;
      jc["converged_power_limit"] = c.converged_power_limit_w;
      jw["results"].push_back(jc);
    }
    out["workloads"].push_back(jw);
  }
  return out;
}

Json search_path_json(const sim::SearchPathResult& r) {
  Json out;
  out["experiment"] = "search-path";
  out["gpu"] = r.gpu;
  out["eta"] = r.eta;
  out["beta"] = r.beta;
  out["seed"] = r.seed;
  out["workloads"] = Json::array();
  for (const sim::WorkloadSearchPath& w : r.workloads) {
    Json jw;
    jw["name"] = w.name;
    jw["batch_sizes"] = w.batch_sizes;
    jw["power_limits"] = w.power_limits_w;
    Json matrix = Json::array();
    for (const std::vector<double>& row : w.regret_ratio) {
      Json jrow = Json::array();
      for (double v : row) jrow.push_back(std::isfinite(v) ? Json(v) : Json(nullptr));
      matrix.push_back(jrow);
    }
    jw["cost_over_oracle"] = matrix;
    jw["oracle"] =
        Json{{"batch_size", w.oracle_batch_size}, {"power_limit", w.oracle_power_limit_w}};
    jw["default_batch_size"] = w.default_batch_size;
    Json paths = Json::object();
    for (const sim::PolicyPath& path : w.paths) {
      Json steps = Json::array();
      for (const sim::PathStep& s : path.steps) {
        Json js;
        js["recurrence"] = s.recurrence;
        js["batch_size"] = s.batch_size;
        js["power_limit"] = s.power_limit_w;
        js["cost_j"] = s.cost_j;
        js["reached"] = s.reached;
        js["early_stopped"] = s.early_stopped;
        js["profiled"] = s.profiled;
        steps.push_back(js);
      }
      paths[std::string(sim::policy_name(path.policy))] = steps;
    }
    jw["paths"] = paths;
    out["workloads"].push_back(jw);
  }
  return out;
}

Json drift_json(const sim::DriftResult& r) {
  Json out;
  out["experiment"] = "drift";
  out["gpu"] = r.gpu;
  out["workload"] = r.workload;
  out["eta"] = r.eta;
  out["beta"] = r.beta;
  out["seeds"] = r.seeds;
  out["window_size"] = r.window_size;
  out["phases"] = Json::array();
  for (const sim::DriftPhase& p : r.phases) {
    out["phases"].push_back(Json{{"target_metric", p.target_metric},
                                 {"first_recurrence", p.first_recurrence},
                                 {"recurrences", p.recurrences},
                                 {"oracle_batch_size", p.oracle_batch_size},
                                 {"oracle_power_limit", p.oracle_power_limit_w},
                                 {"oracle_cost_j", p.oracle_cost_j}});
  }
  Json policies = Json::object();
  for (const sim::DriftPolicy& p : r.policies) {
    policies[p.name] = Json{{"cum_regret", p.cum_regret_j.mean},
                            {"last_phase_energy_ratio", p.last_phase_energy_ratio.mean},
                            {"last_phase_regret", p.last_phase_regret_j.mean},
                            {"last_phase_optimal_share", p.last_phase_optimal_share.mean},
                            {"failed_recurrences", p.failed_recurrences.mean}};
  }
  out["policies"] = policies;
  return out;
}

Json concurrent_json(const sim::ConcurrentResult& r) {
  Json out = run_header("concurrent", r);
  out["overlaps"] = r.overlaps;
  out["workloads"] = Json::array();
  for (const sim::ConcurrentWorkload& w : r.workloads) {
    Json jw;
    jw["name"] = w.name;
    jw["submissions"] = w.submissions;
    jw["default_duration_s"] = w.default_duration_s;
    jw["results"] = Json::array();
    for (const sim::ConcurrentCell& c : w.cells) {
      jw["results"].push_back(Json{{"overlap", c.overlap},
                                   {"in_flight", c.in_flight.mean},
                                   {"distinct_in_flight", c.distinct_in_flight.mean},
                                   {"cum_energy_ratio", c.cum_energy_ratio.mean},
                                   {"cum_time_ratio", c.cum_time_ratio.mean},
                                   {"cum_regret", c.cum_regret_j.mean},
                                   {"sequential_regret", c.sequential_regret_j.mean},
                                   {"best_known_answers", c.concurrent_pruning_answers.mean},
                                   {"makespan_s", c.makespan_s.mean}});
    }
    out["workloads"].push_back(jw);
  }
  return out;
}

}  // namespace zeus::cli
