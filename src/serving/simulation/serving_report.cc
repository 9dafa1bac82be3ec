// format_serving_table and write_serving_report (zeus/serving/sim_serving.h): the table `zeus
// simulate
// serving` prints and its --report.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "sim/gnuplot_scripts.h"
#include "sim/report_writer.h"
#include "zeus/serving/sim_serving.h"

namespace zeus::sim {

std::string format_serving_table(const ServingExperiment& e) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line,
                "trace %s: %d requests over %.0f s, %lld output tokens; SLOs: TTFT %.3f s, TPOT "
                "%.4f s at p%.0f\n",
                e.trace.c_str(), e.requests, e.duration_s, e.output_tokens, e.ttft_slo_s,
                e.tpot_slo_s, e.quantile * 100);
  out += line;
  if (e.replicas > 1) {
    std::snprintf(line, sizeof line,
                  "%d replicas; pack-*: the pack router (the fewest replicas that hold the SLOs "
                  "serve, the others sleep); the others route least-loaded\n",
                  e.replicas);
    out += line;
  }
  if (e.power_budget_w > 0) {
    std::snprintf(line, sizeof line,
                  "power budget %.0f W over %d GPU%s; held: the share of whole seconds whose "
                  "mean power stayed within it\n",
                  e.power_budget_w, e.replicas, e.replicas > 1 ? "s" : "");
    out += line;
  }
  const int width = e.replicas > 1 || e.power_budget_w > 0 ? 19 : 12;
  std::snprintf(line, sizeof line, "%-*s %12s %9s %9s %9s %9s %9s %9s %9s %10s %8s%s\n", width,
                "policy", "energy (kJ)", "vs max", "J/token", "clock", "TTFT p50", "TTFT p99",
                "TPOT p50", "TPOT p99", "violations", "vs max",
                (std::string(e.replicas > 1 ? "  awake" : "") +
                 (e.power_budget_w > 0 ? "     held" : ""))
                    .c_str());
  out += line;
  const ServingPolicyResult* max = e.policies.empty() ? nullptr : &e.policies.front();
  for (const ServingPolicyResult& p : e.policies) {
    const double saved = max && max->energy_j > 0 ? 100.0 * (p.energy_j / max->energy_j - 1) : 0;
    const double extra = max ? 100.0 * (p.slo_violation_rate - max->slo_violation_rate) : 0;
    char clock[32];
    if (p.prefill_clock_mhz > 0) {
      std::snprintf(clock, sizeof clock, "%.0f/%.0f", p.prefill_clock_mhz, p.static_clock_mhz);
    } else if (p.static_clock_mhz > 0) {
      std::snprintf(clock, sizeof clock, "%.0f", p.static_clock_mhz);
    } else {
      std::snprintf(clock, sizeof clock, "~%.0f", p.mean_clock_mhz);
    }
    char awake[32] = "";
    if (e.replicas > 1) std::snprintf(awake, sizeof awake, "  %5.2f", p.mean_awake);
    if (e.power_budget_w > 0) {
      std::snprintf(awake + std::strlen(awake), sizeof awake - std::strlen(awake), "  %6.2f%%",
                    100 * p.budget_held);
    }
    std::snprintf(line, sizeof line,
                  "%-*s %12.1f %8.1f%% %9.3f %9s %9.3f %9.3f %9.4f %9.4f %9.2f%% %+7.2fpp%s\n",
                  width, p.name.c_str(), p.energy_j / 1000, saved, p.j_per_token, clock,
                  p.ttft_p50_s, p.ttft_p99_s, p.tpot_p50_s, p.tpot_p99_s,
                  100 * p.slo_violation_rate, extra, awake);
    out += line;
  }
  if (e.replicas > 1) {
    for (const ServingPolicyResult& p : e.policies) {
      if (p.prefill_clock_mhz > 0) {
        out += "pd-*: prefill and decode apart; pd-best-static's clock is prefill/decode. ";
        break;
      }
    }
  }
  out += e.replicas > 1 ? "clock: the static clock, or ~ the time-weighted mean over replicas (MHz); "
                          "awake: replicas not asleep, time-weighted mean. "
                        : "clock: the static clock, or ~ the time-weighted mean (MHz). ";
  out += "The server and its power are ";
  out += e.profile_source == "parametric"
             ? "the parametric model (docs/proxy.md, \"Saving energy\"), not a measurement.\n"
             : "the serving profile calibrated in " + e.profile_source + ".\n";
  return out;
}

}  // namespace zeus::sim

namespace zeus::sim {
namespace {

// The value of a step function given at its change points at time t (the first before t).
double at(const std::vector<std::pair<double, double>>& steps, double t, double before) {
  double value = before;
  for (const auto& [when, v] : steps) {
    if (when > t) break;
    value = v;
  }
  return value;
}

// Time-weighted means of a step function (`steps`: its value from each change point on, `before`
// until the first) over the consecutive buckets [t0 + k w, t0 + (k + 1) w), k < n: one pass.
std::vector<double> bucket_means(const std::vector<std::pair<double, double>>& steps,
                                 double before, double t0, double w, int n) {
  std::vector<double> out(static_cast<size_t>(std::max(n, 0)), before);
  size_t i = 0;
  double value = before;
  while (i < steps.size() && steps[i].first <= t0) value = steps[i++].second;
  for (int k = 0; k < n; ++k) {
    const double a = t0 + k * w, b = a + w;
    double sum = 0, t = a;
    while (i < steps.size() && steps[i].first < b) {
      sum += value * (steps[i].first - t);
      t = steps[i].first;
      value = steps[i++].second;
    }
    out[static_cast<size_t>(k)] = (sum + value * (b - t)) / w;
  }
  return out;
}

// The smallest round bucket (s) that cuts `span_s` into at most `most` buckets.
double round_bucket(double span_s, int most) {
  for (double w : {1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0,
                   3600.0, 7200.0, 21600.0, 86400.0}) {
    if (span_s / w <= most) return w;
  }
  return std::ceil(span_s / most / 86400.0) * 86400.0;
}

// "30 s", "5 min", "2 h".
std::string duration_text(double s) {
  if (s >= 3600 && std::fmod(s, 3600) == 0) return fixed(s / 3600, 0) + " h";
  if (s >= 60 && std::fmod(s, 60) == 0) return fixed(s / 60, 0) + " min";
  return fixed(s, 0) + " s";
}

// Each policy's clock (and, with `load`, the governor's running and waiting requests) as
// time-weighted means over `n` buckets of `w` seconds from `t0`: a row per bucket at its start,
// and one more at the end, so that a step plot reaches it.
std::vector<std::vector<std::string>> clock_rows(const ServingExperiment& e, double t0, double w,
                                                 int n, bool load) {
  std::vector<std::vector<double>> columns;
  for (const ServingPolicyResult& p : e.policies) {
    const double start = p.static_clock_mhz > 0 ? p.static_clock_mhz : p.mean_clock_mhz;
    columns.push_back(bucket_means(p.clock_timeline, start, t0, w, n));
  }
  if (load) columns.push_back(bucket_means(e.policies.back().load_timeline, 0, t0, w, n));
  std::vector<std::vector<std::string>> rows;
  for (int k = 0; k <= n; ++k) {
    std::vector<std::string> row = {fixed(t0 + k * w, 0)};
    for (size_t c = 0; c < columns.size(); ++c) {
      row.push_back(fixed(columns[c][static_cast<size_t>(std::min(k, n - 1))],
                          load && c + 1 == columns.size() ? 1 : 0));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

// A step plot of the policies' clocks (columns 2 to policies + 1) and, with `load`, the
// governor's requests on the right axis (the last column), in grey.
std::string clock_steps_script(const std::string& stem, const std::string& title, int policies,
                               bool load) {
  std::string s = gnuplot_preamble(stem, title);
  // With the right axis, the key goes under the plot, which keeps the canvas' width (and its
  // title centred on it).
  s += std::string(load ? "set key outside bottom center horizontal\n" : "set key outside right top\n") +
       "set autoscale xfix\nset xlabel 'time in the trace (s)'\nset ylabel 'SM clock (MHz)'\n";
  if (load) s += "set y2label 'requests running or waiting (governor)'\nset y2tics\nset y2range [0:*]\n";
  s += "plot for [i=2:" + std::to_string(policies + 1) + "] " + gnuplot_quote(stem + ".csv") +
       " using 1:i with steps lw 2 title columnhead(i)";
  if (load) {
    s += ", \\\n     " + gnuplot_quote(stem + ".csv") + " using 1:" +
         std::to_string(policies + 2) +
         " axes x1y2 with steps lc rgb '#aaaaaa' dt 1 lw 1 title columnhead(" +
         std::to_string(policies + 2) + ")";
  }
  return s + "\n";
}

// The figures of a trace this long (s) and longer have a zoomed one: the busiest 5 minutes.
constexpr double kZoomFromS = 600, kZoomS = 300, kZoomBucketS = 2;

}  // namespace

Result<std::filesystem::path> write_serving_report(const ServingExperiment& e,
                                                   const std::filesystem::path& dir,
                                                   const std::string& gnuplot) {
  if (e.policies.empty()) return fail(ErrorCode::kInvalidArgument, "no policy to report");
  auto created = ReportWriter::create(dir, gnuplot);
  if (!created) return fail(created.error());
  ReportWriter& report = *created;
  const std::string model =
      e.profile_source == "parametric"
          ? "the parametric serving model (docs/proxy.md, \"Saving energy\"), not a measurement"
          : "the serving profile calibrated in " + e.profile_source;
  report.paragraph("Trace " + e.trace + ": " + std::to_string(e.requests) + " requests over " +
                   fixed(e.duration_s, 0) + " s, " + std::to_string(e.output_tokens) +
                   " output tokens, replayed through " +
                   (e.replicas > 1 ? std::to_string(e.replicas) + " replicas of a continuously batching "
                                                                   "server under " +
                                         std::to_string(e.policies.size()) +
                                         " policies (pack-*: the pack router, the others "
                                         "least-loaded)"
                                   : std::string("a continuously batching server under four SM "
                                                 "clock policies")) +
                   ". SLOs: TTFT " + fixed(e.ttft_slo_s, 3) + " s, TPOT " +
                   fixed(e.tpot_slo_s, 4) + " s at p" + fixed(100 * e.quantile, 0) +
                   "; a violation is a request over either. The server and its power: " + model +
                   ".");
  const ServingPolicyResult& max = e.policies.front();
  std::vector<std::vector<std::string>> rows, energy_rows, violation_rows;
  for (const ServingPolicyResult& p : e.policies) {
    rows.push_back({p.name, fixed(p.energy_j / 1000, 1),
                    fixed(100 * (p.energy_j / max.energy_j - 1), 1), fixed(p.j_per_token, 3),
                    p.static_clock_mhz > 0 ? fixed(p.static_clock_mhz, 0)
                                           : "~" + fixed(p.mean_clock_mhz, 0),
                    fixed(p.ttft_p99_s, 3), fixed(p.tpot_p99_s, 4),
                    fixed(100 * p.slo_violation_rate, 2)});
    energy_rows.push_back({p.name, fixed(p.energy_j / 1000, 3)});
    violation_rows.push_back({p.name, fixed(100 * p.slo_violation_rate, 3)});
  }
  report.heading("Energy and SLO attainment per policy");
  report.table({"policy", "energy (kJ)", "vs max clock (%)", "J/token", "clock (MHz)",
                "TTFT p99 (s)", "TPOT p99 (s)", "violations (%)"},
               rows);
  ZEUS_TRY(report.bar_chart("serving_energy", {"policy", "energy (kJ)"}, energy_rows,
                            "GPU energy per policy (" + model + ")", "kJ"));
  ZEUS_TRY(report.bar_chart("serving_violations", {"policy", "violations (%)"}, violation_rows,
                            "Requests over an SLO (" + model + ")", "% of requests"));
  // The clock over time: each policy's time-weighted mean per bucket, as steps (at most 120
  // buckets: an hour's clock changes, every control period, drawn point by point were a
  // hairball). Then, for a long trace, its busiest 5 minutes in 2 s buckets, beside the
  // governor's load. The load below is sampled (the CSVs hold the samples).
  report.heading("The clock and the load over time");
  const int policies = static_cast<int>(e.policies.size());
  std::vector<std::string> clock_header = {"time (s)"};
  for (const ServingPolicyResult& p : e.policies) clock_header.push_back(p.name);
  const double bucket = round_bucket(e.duration_s, 120);
  const int buckets = std::max(1, static_cast<int>(std::ceil(e.duration_s / bucket)));
  ZEUS_TRY(report.data_file("serving_clock.csv",
                            csv_text(clock_header, clock_rows(e, 0, bucket, buckets, false))));
  const std::string clock_title = "SM clock over time, the mean of each " +
                                  duration_text(bucket) + " (" + model + ")";
  ZEUS_TRY(report.figure("serving_clock", clock_steps_script("serving_clock", clock_title, policies, false),
                         clock_title + "; each step is a policy's time-weighted mean clock over " +
                             duration_text(bucket) + " of the trace (data: serving_clock.csv)"));
  if (e.duration_s >= kZoomFromS) {
    // The busiest 5 minutes: the window (on a 10 s grid) with the most requests running or
    // waiting under the governor, on average.
    const int tens = static_cast<int>(std::ceil(e.duration_s / 10));
    const int per_window = static_cast<int>(kZoomS / 10);
    const std::vector<double> load =
        bucket_means(e.policies.back().load_timeline, 0, 0, 10, tens);
    double sum = 0, best = -1;
    int best_start = 0;
    for (int k = 0; k < tens; ++k) {
      sum += load[static_cast<size_t>(k)];
      if (k >= per_window) sum -= load[static_cast<size_t>(k - per_window)];
      if (k + 1 >= per_window && sum > best) {
        best = sum;
        best_start = k + 1 - per_window;
      }
    }
    const double from = 10.0 * best_start, to = from + kZoomS;
    std::vector<std::string> zoom_header = clock_header;
    zoom_header.push_back("running or waiting (governor)");
    const int zoom_buckets = static_cast<int>(kZoomS / kZoomBucketS);
    ZEUS_TRY(report.data_file("serving_clock_busiest.csv",
                              csv_text(zoom_header, clock_rows(e, from, kZoomBucketS,
                                                               zoom_buckets, true))));
    const std::string zoom_title = "SM clock in the busiest 5 minutes, " + fixed(from, 0) + "-" +
                                   fixed(to, 0) + " s (" + model + ")";
    ZEUS_TRY(report.figure(
        "serving_clock_busiest",
        clock_steps_script("serving_clock_busiest", zoom_title, policies, true),
        zoom_title + ": the 5 minutes of the trace with the most requests running or waiting "
                     "under the governor (grey, right axis); each step is a policy's mean clock "
                     "over 2 s (data: serving_clock_busiest.csv)"));
  }
  const double step = std::max(1.0, e.duration_s / 400);
  std::vector<std::vector<std::string>> load_rows;
  for (double t = 0; t <= e.duration_s; t += step) {
    const ServingPolicyResult& governor = e.policies.back();
    load_rows.push_back({fixed(t, 0), fixed(at(governor.load_timeline, t, 0), 0)});
  }
  ZEUS_TRY(report.line_chart("serving_load", {"time (s)", "running requests (governor)"},
                             load_rows, "Requests running over time (" + model + ")",
                             "time in the trace (s)", "requests"));
  if (e.replicas > 1) {
    // The pack router's replicas awake (serving, waking or draining) over time, per policy.
    std::vector<std::string> header = {"time (s)"};
    std::vector<const ServingPolicyResult*> packed;
    for (const ServingPolicyResult& p : e.policies) {
      if (p.routing != "pack") continue;
      header.push_back(p.name);
      packed.push_back(&p);
    }
    std::vector<std::vector<std::string>> awake_rows;
    for (double t = 0; t <= e.duration_s; t += step) {
      std::vector<std::string> row = {fixed(t, 0)};
      for (const ServingPolicyResult* p : packed) {
        row.push_back(fixed(at(p->awake_timeline, t, e.replicas), 0));
      }
      awake_rows.push_back(std::move(row));
    }
    ZEUS_TRY(report.line_chart("serving_awake", header, awake_rows,
                               "Replicas awake under the pack router, of " +
                                   std::to_string(e.replicas) + " (" + model + ")",
                               "time in the trace (s)", "replicas"));
  }
  return report.finish("zeus simulate serving: " + e.trace);
}

}  // namespace zeus::sim
