// replay_cluster (serving_cluster.h): the event loop over replicas of the serving model.
#include "serving_cluster.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <queue>
#include <span>

namespace zeus::sim {

void Timeline::push(double t, double value) {
  if (seen++ % stride != 0) return;
  points.emplace_back(t, value);
  if (points.size() < 2 * kMaxPoints) return;
  for (size_t i = 0; 2 * i < points.size(); ++i) points[i] = points[2 * i];
  points.resize((points.size() + 1) / 2);
  stride *= 2;
}

namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

struct Active {
  size_t request = 0;
  int prompt_left = 0;
  int generated = 0;
  double first_token_s = 0;
};

// One replica: its queue, its batch, the iteration in flight and what it saw since the last tick.
struct Replica {
  std::vector<size_t> inbox;  // routed, not yet in an iteration
  std::deque<Active> waiting;
  std::vector<Active> running;
  std::vector<Active> joining;  // handed off (P/D), joining the batch at the next iteration
  std::vector<std::pair<size_t, int>> chunks;  // the iteration's prefill: (position, tokens)
  bool busy = false;
  double end_s = kNever;
  double watts = 0;
  double clock = 0;      // the clock in force
  double effective = 0;  // the iteration's (below `clock` when a power cap throttles it)
  double cap_w = 0;      // its power cap (0: none)
  double period_energy_j = 0;  // since the last tick
  ClockPolicy policy;
  ServingObservation period;
  double prompt_tokens = 0, arrivals = 0, output_tokens = 0, finished = 0;

  bool empty() const {
    return inbox.empty() && waiting.empty() && running.empty() && joining.empty();
  }
  double context(const std::vector<ServingRequest>& reqs) const {
    double sum = 0;
    for (const Active& a : running) sum += reqs[a.request].prompt_tokens + a.generated;
    return sum;
  }
};

class Engine {
 public:
  Engine(const ServingTrace& trace, const ServingSimOptions& o, const ClusterSetup& setup)
      : reqs_(trace.requests), o_(o), p_(o.profile), router_(*setup.router), setup_(setup) {
    replicas_.resize(static_cast<size_t>(setup.replicas));
    for (size_t i = 0; i < replicas_.size(); ++i) {
      replicas_[i].policy = setup.clock_policy(static_cast<int>(i));
      replicas_[i].clock = replicas_[i].effective = p_.max_clock();
      replicas_[i].watts = p_.idle_w;
    }
    run_.outcomes.resize(reqs_.size());
  }

  ClusterRun run() {
    now_ = arrival(0);
    window_end_ = now_ + 1;
    double next_tick = now_ + o_.control_period_s;
    run_.clocks.push(now_, mean_clock());
    run_.awake.push(now_, router_.awake());
    last_awake_ = router_.awake();
    for (;;) {
      while (next_ < reqs_.size() && arrival(next_) <= now_) route(next_++);
      while (!handoffs_.empty() && handoffs_.top().ready_s <= now_) {
        replicas_[decode_replica()].joining.push_back(handoffs_.top().active);
        handoffs_.pop();
      }
      bool work_left = next_ < reqs_.size() || !handoffs_.empty();
      double t_end = kNever;
      size_t ending = 0;
      for (size_t i = 0; i < replicas_.size(); ++i) {
        Replica& r = replicas_[i];
        if (!r.busy && !r.empty() && router_.state(static_cast<int>(i)) != ReplicaState::kWaking) {
          start(r);
        }
        work_left = work_left || !r.empty();
        if (r.busy && r.end_s < t_end) {
          t_end = r.end_s;
          ending = i;
        }
      }
      if (!work_left) break;
      const double t_arrival = std::min(next_ < reqs_.size() ? arrival(next_) : kNever,
                                        handoffs_.empty() ? kNever : handoffs_.top().ready_s);
      const double t = std::min(t_end, t_arrival);
      if (next_tick <= t) {  // a tick at an iteration's end sees it unfinished
        advance(next_tick);
        tick();
        next_tick += o_.control_period_s;
        continue;
      }
      advance(t);
      if (t_end <= t_arrival) finish(replicas_[ending]);
    }
    run_.end_s = now_;
    return std::move(run_);
  }

 private:
  double arrival(size_t i) const { return reqs_[i].arrival_s / o_.time_scale; }

  double mean_clock() const {
    double sum = 0;
    for (const Replica& r : replicas_) sum += r.clock;
    return sum / static_cast<double>(replicas_.size());
  }

  std::vector<ReplicaView> views() const {
    std::vector<ReplicaView> out(replicas_.size());
    for (size_t i = 0; i < replicas_.size(); ++i) {
      const Replica& r = replicas_[i];
      out[i].running = static_cast<double>(r.running.size() + r.joining.size());
      out[i].waiting = static_cast<double>(r.waiting.size() + r.inbox.size());
      for (const Active& a : r.waiting) out[i].queued_prompt_tokens += a.prompt_left;
      for (size_t q : r.inbox) out[i].queued_prompt_tokens += reqs_[q].prompt_tokens;
    }
    return out;
  }

  // The least-loaded replica of [from, to) (P/D: a pool), by the router's rule.
  size_t least_loaded(size_t from, size_t to) const {
    const std::vector<ReplicaView> v = views();
    const int i = least_loaded_replica(std::span(v).subspan(from, to - from), o_.prefill_chunk_tokens);
    return from + static_cast<size_t>(std::max(0, i));
  }
  size_t decode_replica() const {
    return least_loaded(static_cast<size_t>(setup_.prefill_replicas), replicas_.size());
  }

  void route(size_t request) {
    int to = 0;
    if (setup_.prefill_replicas > 0) {
      to = static_cast<int>(least_loaded(0, static_cast<size_t>(setup_.prefill_replicas)));
    } else if (replicas_.size() > 1) {
      const std::vector<ReplicaView> v = views();
      to = std::max(0, router_.route(v));
    }
    replicas_[static_cast<size_t>(to)].inbox.push_back(request);
    cluster_arrivals_ += 1;
    cluster_prompt_tokens_ += reqs_[request].prompt_tokens;
  }

  void advance(double until) {
    double watts = 0, clocks = 0;
    const double dt = until - now_;
    for (Replica& r : replicas_) {
      watts += r.watts;
      clocks += r.busy ? r.effective : r.clock;
      r.period_energy_j += r.watts * dt;
    }
    run_.energy_j += watts * dt;
    run_.clock_integral += clocks * dt;
    run_.awake_integral += last_awake_ * dt;
    // Whole seconds of power: the budget is held, or not, per 1-s window.
    while (window_end_ <= until) {
      window_energy_j_ += watts * (window_end_ - std::max(now_, window_end_ - 1));
      run_.windows += 1;
      run_.peak_window_w = std::max(run_.peak_window_w, window_energy_j_);
      if (setup_.budget_w > 0 && window_energy_j_ > setup_.budget_w * (1 + 1e-9)) run_.windows_over += 1;
      window_energy_j_ = 0;
      window_end_ += 1;
    }
    window_energy_j_ += watts * (until - std::max(now_, window_end_ - 1));
    now_ = until;
  }

  // One iteration: a token for each running request, prompt chunks for the waiting ones.
  void start(Replica& r) {
    for (size_t q : r.inbox) {
      r.waiting.push_back({q, reqs_[q].prompt_tokens, 0, 0});
      r.prompt_tokens += reqs_[q].prompt_tokens;
      r.arrivals += 1;
    }
    r.inbox.clear();
    for (Active& a : r.joining) r.running.push_back(a);
    r.joining.clear();
    if (r.waiting.empty() && r.running.empty()) return;
    const double context = r.context(reqs_);
    int budget = o_.prefill_chunk_tokens;
    size_t slots = static_cast<size_t>(o_.max_batch) > r.running.size()
                       ? static_cast<size_t>(o_.max_batch) - r.running.size()
                       : 0;
    r.chunks.clear();
    for (size_t w = 0; w < r.waiting.size() && budget > 0 && slots > 0; ++w, --slots) {
      const int chunk = std::min(r.waiting[w].prompt_left, budget);
      r.chunks.emplace_back(w, chunk);
      budget -= chunk;
    }
    const double prefill = o_.prefill_chunk_tokens - budget;
    const double batch = static_cast<double>(r.running.size());
    // A power cap throttles the iteration: the highest clock at or under the one in force whose
    // power fits (the firmware's, per iteration; at the lowest clock it fits or not).
    r.effective = r.clock;
    const double cap = r.cap_w > 0 ? r.cap_w : setup_.cap_w;
    if (cap > 0) {
      for (double f : p_.clocks_mhz) {
        if (f > r.clock + 1e-9) continue;
        r.effective = f;
        if (p_.iteration_w(f, prefill, batch, context) <= cap) break;
      }
    }
    const double seconds = std::max(1e-6, p_.iteration_s(r.effective, prefill, batch, context));
    r.watts = p_.iteration_w(r.effective, prefill, batch, context);
    r.busy = true;
    r.end_s = now_ + seconds;
  }

  void finish(Replica& r) {
    r.busy = false;
    r.end_s = kNever;
    r.watts = p_.idle_w;
    for (auto it = r.running.begin(); it != r.running.end();) {
      const ServingRequest& q = reqs_[it->request];
      if (++it->generated >= q.output_tokens) {
        const double tpot = (now_ - it->first_token_s) / (q.output_tokens - 1);
        run_.outcomes[it->request].tpot_s = tpot;
        r.period.tpot_s.push_back(tpot);
        r.output_tokens += q.output_tokens;
        r.finished += 1;
        cluster_output_tokens_ += q.output_tokens;
        cluster_finished_ += 1;
        *it = r.running.back();
        r.running.pop_back();
      } else {
        ++it;
      }
    }
    size_t done_prefills = 0;
    for (const auto& [w, tokens] : r.chunks) {
      Active& a = r.waiting[w];
      a.prompt_left -= tokens;
      if (a.prompt_left > 0) continue;
      const ServingRequest& q = reqs_[a.request];
      a.generated = 1;
      a.first_token_s = now_;
      const double ttft = now_ - arrival(a.request);
      run_.outcomes[a.request].ttft_s = ttft;
      r.period.ttft_s.push_back(ttft);
      if (q.output_tokens > 1 && setup_.prefill_replicas > 0) {
        // P/D: the first token came from the prefill replica; the KV cache travels on.
        handoffs_.push({now_ + setup_.kv_transfer_s_per_token * q.prompt_tokens, a});
      } else if (q.output_tokens > 1) {
        r.running.push_back(a);
      } else {
        r.output_tokens += 1;
        r.finished += 1;
        cluster_output_tokens_ += 1;
        cluster_finished_ += 1;
      }
      ++done_prefills;
    }
    // Prefills finish in FIFO order: the finished ones are the queue's front.
    r.waiting.erase(r.waiting.begin(), r.waiting.begin() + static_cast<std::ptrdiff_t>(done_prefills));
    r.chunks.clear();
  }

  void tick() {
    const double period = o_.control_period_s;
    if (replicas_.size() > 1) {
      ClusterObservation c;
      c.now_s = now_;
      c.arrivals_per_s = cluster_arrivals_ / period;
      c.prompt_tokens_per_s = cluster_prompt_tokens_ / period;
      c.mean_output_tokens = cluster_finished_ > 0 ? cluster_output_tokens_ / cluster_finished_ : 0;
      double context = 0, running = 0;
      for (const Replica& r : replicas_) {
        context += r.context(reqs_);
        running += static_cast<double>(r.running.size());
      }
      c.mean_context_tokens = running > 0 ? context / running : 0;
      c.replicas = views();
      router_.plan(c);
    }
    cluster_arrivals_ = cluster_prompt_tokens_ = cluster_output_tokens_ = cluster_finished_ = 0;
    double load = 0;
    const double before = mean_clock();
    for (size_t i = 0; i < replicas_.size(); ++i) {
      Replica& r = replicas_[i];
      ServingObservation& ob = r.period;
      ob.now_s = now_;
      ob.running = static_cast<double>(r.running.size() + r.joining.size());
      ob.waiting = static_cast<double>(r.waiting.size());
      const double context = r.context(reqs_);
      ob.mean_context_tokens = r.running.empty() ? 0 : context / static_cast<double>(r.running.size());
      ob.prompt_tokens_per_s = r.prompt_tokens / period;
      ob.mean_prompt_tokens = r.arrivals > 0 ? r.prompt_tokens / r.arrivals : 0;
      ob.mean_output_tokens = r.finished > 0 ? r.output_tokens / r.finished : 0;
      double chosen = r.policy(ob);
      if (router_.state(static_cast<int>(i)) == ReplicaState::kAsleep) chosen = p_.clocks_mhz.back();
      r.clock = chosen;
      load += ob.running + ob.waiting;
      r.period = ServingObservation{};
      r.prompt_tokens = r.arrivals = r.output_tokens = r.finished = 0;
    }
    if (setup_.budget) apply_budget(period);
    const double after = mean_clock();
    if (after != before) run_.clocks.push(now_, after);
    run_.load.push(now_, load);
    const int awake = router_.awake();
    if (awake != last_awake_) run_.awake.push(now_, awake);
    last_awake_ = awake;
  }

  // The budget lowers the clocks the policies chose and splits itself into caps: each replica's
  // power at every clock predicted from what it drew over the last period, scaled by how the
  // profile says its load's power changes with the clock; its need, the seconds of work queued.
  void apply_budget(double period) {
    std::vector<BudgetedGpu> gpus(replicas_.size());
    double measured = 0;
    for (size_t i = 0; i < replicas_.size(); ++i) {
      Replica& r = replicas_[i];
      double queued = 0;
      for (const Active& a : r.waiting) queued += a.prompt_left;
      for (size_t q : r.inbox) queued += reqs_[q].prompt_tokens;
      const double batch = static_cast<double>(r.running.size());
      const double context = r.context(reqs_);
      const double drew = r.period_energy_j / period;
      measured += drew;
      r.period_energy_j = 0;
      const bool idle = r.running.empty() && queued <= 0;
      // A period's mean load: its prefill spread over the iterations.
      const double prefill =
          std::min<double>(o_.prefill_chunk_tokens, queued > 0 ? o_.prefill_chunk_tokens / 2.0 : 0);
      const double now_w = p_.iteration_w(r.effective, prefill, batch, context);
      gpus[i].wanted_mhz = r.clock;
      gpus[i].need = queued * p_.prefill_s_per_token + batch * p_.decode_s_per_seq;
      gpus[i].prefilling = queued > 0;
      for (double f : p_.clocks_mhz) {
        const double model = p_.iteration_w(f, prefill, batch, context);
        gpus[i].watts_at.push_back(idle ? p_.idle_w : std::max(p_.idle_w, drew) * model / now_w);
      }
    }
    const BudgetDecision d = setup_.budget->allocate(gpus, measured);
    for (size_t i = 0; i < replicas_.size(); ++i) {
      replicas_[i].clock = d.clock_mhz[i];
      replicas_[i].cap_w = d.cap_w[i];
    }
  }

  const std::vector<ServingRequest>& reqs_;
  const ServingSimOptions& o_;
  const ServingProfile& p_;
  ReplicaRouter& router_;
  const ClusterSetup& setup_;
  struct Handoff {
    double ready_s;
    Active active;
    bool operator>(const Handoff& other) const { return ready_s > other.ready_s; }
  };
  std::priority_queue<Handoff, std::vector<Handoff>, std::greater<>> handoffs_;  // P/D, by time
  std::vector<Replica> replicas_;
  double window_end_ = 0, window_energy_j_ = 0;  // the 1-s window in progress
  ClusterRun run_;
  size_t next_ = 0;
  double now_ = 0;
  int last_awake_ = 0;
  double cluster_arrivals_ = 0, cluster_prompt_tokens_ = 0;
  double cluster_output_tokens_ = 0, cluster_finished_ = 0;
};

}  // namespace

ClusterRun replay_cluster(const ServingTrace& trace, const ServingSimOptions& options,
                          const ClusterSetup& setup) {
  return Engine(trace, options, setup).run();
}

}  // namespace zeus::sim
