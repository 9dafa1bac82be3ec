// The concurrent-submissions experiment (zeus/sim/sim_concurrent.h): an event-driven replay.
#include <cmath>
#include <cstdio>
#include <queue>
#include <set>

#include "sim/appendf.h"
#include "sim/phases.h"
#include "zeus/sim/sim_concurrent.h"

namespace zeus::sim {
namespace {

struct Outcome {
  double energy_j = 0.0, time_s = 0.0, cost_j = 0.0, makespan_s = 0.0;
  std::vector<double> in_flight, distinct;  // per planned run
  int best_known_answers = 0;
};

struct Flight {
  double end_s = 0.0;
  long sequence = 0;
  int submission = 0;
  RunPlan plan;
  RunRecord run;
  bool operator>(const Flight& o) const { return end_s != o.end_s ? end_s > o.end_s : sequence > o.sequence; }
};

// Replays `submissions` arrivals with mean inter-arrival `mean_gap_s` under one policy.
Result<Outcome> replay_concurrent(const WorkloadTrace& trace, PolicyKind kind, const SimOptions& sim,
                                  int submissions, double mean_gap_s) {
  auto policy = make_policy(kind, trace, sim);
  if (!policy) return fail(policy.error());
  SeedStreams rng = seed_streams(sim.seed);
  uint64_t arrival_state = sim.seed ^ 0xa11a1ULL;
  Rng arrivals(bso::splitmix64(&arrival_state));
  std::priority_queue<Flight, std::vector<Flight>, std::greater<Flight>> flights;
  std::vector<int> tries(static_cast<std::size_t>(submissions), 0);
  std::multiset<int> running_b;
  Outcome out;
  long sequence = 0;
  auto dispatch = [&](int submission, double now_s) {
    Flight f;
    f.plan = (*policy)->plan(rng.policy);
    f.submission = submission;
    running_b.insert(f.plan.b);
    out.in_flight.push_back(static_cast<double>(running_b.size()));
    out.distinct.push_back(static_cast<double>(std::set<int>(running_b.begin(), running_b.end()).size()));
    out.best_known_answers += f.plan.best_known_answer ? 1 : 0;
    const std::vector<int>& paths = trace.paths[static_cast<std::size_t>(f.plan.b)];
    f.run = replay_run(trace, f.plan, paths[rng.paths.below(paths.size())], sim);
    f.run.recurrence = submission;
    f.end_s = now_s + f.run.time_s;
    f.sequence = sequence++;
    ++tries[static_cast<std::size_t>(submission)];
    flights.push(f);
  };
  double next_arrival_s = 0.0;
  int arrived = 0;
  while (arrived < submissions || !flights.empty()) {
    // A run that ends at the same instant as an arrival reports first.
    if (arrived < submissions && (flights.empty() || next_arrival_s < flights.top().end_s)) {
      dispatch(arrived++, next_arrival_s);
      next_arrival_s += -std::log(1.0 - arrivals.uniform()) * mean_gap_s;
      continue;
    }
    const Flight f = flights.top();
    flights.pop();
    running_b.erase(running_b.find(f.plan.b));
    if (f.run.profiled) (*policy)->adopt_power_limit(f.run.b, f.run.p);
    (*policy)->observe(f.plan, f.run);
    out.energy_j += f.run.energy_j;
    out.time_s += f.run.time_s;
    out.cost_j += f.run.cost_j;
    out.makespan_s = f.end_s;
    if (!f.run.reached && tries[static_cast<std::size_t>(f.submission)] < sim.max_tries) dispatch(f.submission, f.end_s);
  }
  return out;
}

}  // namespace

Result<ConcurrentResult> run_concurrent(const ExperimentOptions& options, std::vector<double> overlaps) {
  if (options.seeds < 1) return fail(ErrorCode::kInvalidArgument, "seeds must be >= 1");
  if (overlaps.empty()) overlaps = {1.0, 2.0, 4.0, 8.0};
  for (double overlap : overlaps) {
    if (!(overlap > 0.0 && std::isfinite(overlap))) {
      return fail(ErrorCode::kInvalidArgument, "overlap must be > 0 (the mean number of jobs in flight)");
    }
  }
  ZEUS_TRY(validate_options(options.sim));
  auto traces = load_workload_traces(options.data_dir, options.gpu, options.workloads);
  if (!traces) return fail(traces.error());
  ConcurrentResult result;
  result.gpu = options.gpu;
  result.eta = options.sim.eta;
  result.beta = options.sim.beta;
  result.seeds = options.seeds;
  result.overlaps = overlaps;
  const int total = static_cast<int>(traces->size() * overlaps.size()) * options.seeds;
  int done = 0;
  for (const WorkloadTrace& trace : *traces) {
    ConcurrentWorkload w;
    w.name = trace.workload.name;
    w.submissions = recurrences_for(trace, options.sim);
    w.default_duration_s = expected_recurrence(trace, trace.default_b, trace.num_power_limits() - 1, options.sim.eta).time_s;
    const double oracle_cost_j = oracle_optimum(trace, options.sim.eta).cost_j;
    // Zeus one at a time, per seed (the same for every overlap).
    std::vector<double> sequential;
    for (int s = 0; s < options.seeds; ++s) {
      SimOptions sim = options.sim;
      sim.seed = options.sim.seed + static_cast<uint64_t>(s);
      auto history = simulate(trace, PolicyKind::kZeus, sim);
      if (!history) return fail(history.error());
      sequential.push_back(history->total_cost_j() - oracle_cost_j * w.submissions);
    }
    for (double overlap : overlaps) {
      ConcurrentCell cell;
      cell.overlap = overlap;
      cell.sequential_regret_j = stat_of(sequential);
      std::vector<double> in_flight, distinct, energy, time, regret, answers, makespan;
      for (int s = 0; s < options.seeds; ++s) {
        SimOptions sim = options.sim;
        sim.seed = options.sim.seed + static_cast<uint64_t>(s);
        const double gap_s = w.default_duration_s / overlap;
        auto zeus = replay_concurrent(trace, PolicyKind::kZeus, sim, w.submissions, gap_s);
        if (!zeus) return fail(zeus.error());
        auto base = replay_concurrent(trace, PolicyKind::kDefault, sim, w.submissions, gap_s);
        if (!base) return fail(base.error());
        in_flight.push_back(stat_of(zeus->in_flight).mean);
        distinct.push_back(stat_of(zeus->distinct).mean);
        energy.push_back(zeus->energy_j / base->energy_j);
        time.push_back(zeus->time_s / base->time_s);
        regret.push_back(zeus->cost_j - oracle_cost_j * w.submissions);
        answers.push_back(zeus->best_known_answers);
        makespan.push_back(zeus->makespan_s);
        if (options.progress) options.progress(++done, total);
      }
      cell.in_flight = stat_of(in_flight);
      cell.distinct_in_flight = stat_of(distinct);
      cell.cum_energy_ratio = stat_of(energy);
      cell.cum_time_ratio = stat_of(time);
      cell.cum_regret_j = stat_of(regret);
      cell.concurrent_pruning_answers = stat_of(answers);
      cell.makespan_s = stat_of(makespan);
      w.cells.push_back(cell);
    }
    result.workloads.push_back(std::move(w));
  }
  return result;
}

std::string format_concurrent_table(const ConcurrentResult& r) {
  std::string out;
  appendf(out, "concurrent: gpu %s, eta %.2f, beta %.2f, %d seed(s); Poisson arrivals\n",
          r.gpu.c_str(), r.eta, r.beta, r.seeds);
  appendf(out, "%-14s %7s %9s %9s %10s %8s %10s %13s %12s\n", "workload", "overlap", "in_flight",
          "distinct", "cum_energy", "cum_time", "regret_MJ", "sequential_MJ", "best_known");
  for (const ConcurrentWorkload& w : r.workloads) {
    for (const ConcurrentCell& c : w.cells) {
      appendf(out, "%-14s %7.1f %9.2f %9.2f %10.3f %8.3f %10.3f %13.3f %12.1f\n", w.name.c_str(),
              c.overlap, c.in_flight.mean, c.distinct_in_flight.mean, c.cum_energy_ratio.mean,
              c.cum_time_ratio.mean, c.cum_regret_j.mean / 1e6, c.sequential_regret_j.mean / 1e6,
              c.concurrent_pruning_answers.mean);
    }
  }
  out += "overlap: offered load (mean jobs in flight if each took Default's time); in_flight, distinct: runs and\n"
         "distinct batch sizes in flight when Zeus plans a run; ratios: Zeus / Default; regret against the Oracle\n"
         "(sequential_MJ: Zeus one at a time); best_known: requests answered with the best size known during pruning\n";
  return out;
}

}  // namespace zeus::sim
