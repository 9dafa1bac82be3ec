// Colosseum: `zeus proxy --upstream NAME=URL --upstream NAME=URL` — ML.ENERGY's Colosseum in front
// of two OpenAI-compatible servers, with the energy measured by the proxy's meter instead of
// patched servers. One prompt goes to both models; each side's answer streams from POST /prompt
// (the original's wire: JSON-encoded text chunks, each followed by a NUL byte) while the side's
// GPUs are metered like any proxied request; the names and energies are revealed only by
// POST /response_vote, then POST /energy_vote asks whether the extra energy was worth it (the
// state machine is duel.h). Votes go to SQLite (store/vote_store.h) and make the leaderboard.
// Routes: GET /models, POST /prompt, POST /response_vote, POST /energy_vote, GET /health (the
// original's), GET /zeus/colosseum (the page), GET /zeus/leaderboard (JSON), the live page's
// /zeus/ routes (live_routes.h), GET / (redirects to the page).
// NAME is sent upstream as the request's "model" (vLLM checks it: use the served model's name).
// Each side's GPUs are metered apart; two sides with the same GPU list share one meter (their
// requests then split that energy between them); GPU lists that overlap otherwise are refused.
// With duel_log_path (--colosseum-log), every state change of a duel, every refused step and
// every forgotten duel is a JSON line there (colosseum_log.h), as the original's requests.log.
// Failure: start() fails on a bad option, a votes or log file that cannot be opened or a busy
// port; a side whose server is down answers 502 on its /prompt and the duel cannot be voted on.
// Thread-safety: stop() from any thread.
//
//   auto arena = Colosseum::start(devices, options);  // (*arena)->port()
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "proxy/proxy.h"
#include "zeus/common/result.h"
#include "zeus/device/device.h"

namespace zeus::proxy {

struct ColosseumSide {
  std::string name;              // shown after the vote; sent as "model"
  UpstreamUrl url;               // "http://host:port[/path]"
  std::vector<int> gpu_indices;  // empty: every GPU
};

struct ColosseumOptions {
  std::array<ColosseumSide, 2> sides;
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string votes_path = ":memory:";  // SQLite file
  std::string log_path;       // JSONL, one row per answer (as the proxy's --log); empty: none
  std::string duel_log_path;  // JSONL, the duels' state changes (colosseum_log.h); empty: none
  double sample_interval_s = 0.1;
  int max_tokens = 512;  // per answer (the original's)
  double ttl_s = 600;    // a duel's life
  size_t max_duels = 10000;
  size_t steady_state_window = kDefaultSteadyStateWindow;  // per meter (run_window.h)
  size_t max_prompt_bytes = 64 * 1024;
  double upstream_timeout_s = 600;
  int workers = 64;  // answers streamed at once
};

class Colosseum {
 public:
  // `devices` must outlive the Colosseum.
  static Result<std::unique_ptr<Colosseum>> start(Devices& devices, ColosseumOptions options);
  virtual ~Colosseum() = default;
  virtual int port() const = 0;
  virtual void stop() = 0;
  // Per meter (one per GPU list): what it measured.
  virtual std::vector<ProxySummary> summaries() = 0;
};

}  // namespace zeus::proxy
