#include "colosseum/colosseum.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <chrono>
#include <mutex>
#include <random>

#include "colosseum/colosseum_log.h"
#include "colosseum/colosseum_page.h"
#include "colosseum/colosseum_wire.h"
#include "colosseum/duel.h"
#include "colosseum/leaderboard.h"
#include "store/sqlite/vote_store.h"
#include "http/client.h"
#include "http/server.h"
#include "proxy/live_routes.h"
#include "proxy/meter.h"
#include "proxy/serving.h"
#include "proxy/sse_scan.h"
#include "proxy/upstream.h"
#include "zeus/common/log.h"

namespace zeus::proxy {
namespace {

using http::HttpRequest;
using http::HttpResponse;
using nlohmann::json;

struct Side {
  std::string name;
  std::unique_ptr<http::HttpClient> client;
  std::string path;  // of its URL, before every target (upstream.h)
  Meter* meter = nullptr;
};

HttpResponse refused(const DuelError& e) { return HttpResponse::error(e.status, e.message); }

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

class Arena final : public Colosseum {
 public:
  Arena(ColosseumOptions options, std::unique_ptr<store::VoteStore> votes,
        std::unique_ptr<ColosseumLog> duel_log)
      : options_(std::move(options)),
        votes_(std::move(votes)),
        duel_log_(std::move(duel_log)),
        book_(DuelLimits{options_.max_duels, options_.ttl_s}) {}
  ~Arena() override { stop(); }

  Result<void> load_tally();
  Result<void> set_up(Devices& devices) {
    for (int i = 0; i < 2; ++i) {
      const ColosseumSide& side = options_.sides[i];
      auto client = upstream_client(side.url, options_.upstream_timeout_s,
                                    static_cast<size_t>(std::max(1, options_.workers)));
      if (!client) return fail(client.error());
      sides_[i].name = side.name;
      sides_[i].client = std::move(*client);
      sides_[i].path = side.url.path;
    }
    const auto& gpus_0 = options_.sides[0].gpu_indices;
    const auto& gpus_1 = options_.sides[1].gpu_indices;
    const bool same = gpus_0 == gpus_1;
    const bool overlap =
        gpus_0.empty() || gpus_1.empty() || std::any_of(gpus_0.begin(), gpus_0.end(), [&](int g) {
          return std::find(gpus_1.begin(), gpus_1.end(), g) != gpus_1.end();
        });
    if (!same && overlap) {
      return fail(ErrorCode::kInvalidArgument,
                  "the GPUs of " + sides_[0].name + " (" + LiveFeed::gpus_label(gpus_0) + ") and " +
                      sides_[1].name + " (" + LiveFeed::gpus_label(gpus_1) +
                      ") overlap: give each side its own GPUs (--gpus NAME=LIST), or the same "
                      "list to both");
    }
    for (int i = 0; i < (same ? 1 : 2); ++i) {
      const std::vector<int>& gpus = options_.sides[i].gpu_indices;
      Result<GpuEnergyReader> reader = GpuEnergyReader::create(devices, gpus);
      if (!reader) return fail(reader.error());
      meters_.push_back(std::make_unique<Meter>(std::move(*reader), options_.sample_interval_s,
                                                options_.log_path, options_.steady_state_window));
      ZEUS_TRY(meters_.back()->open_log());
      const std::string source = same ? sides_[0].name + " + " + sides_[1].name : sides_[i].name;
      meters_.back()->publish_to(&feed_, feed_.add_source(source, LiveFeed::gpus_label(gpus)));
      meter_sources_.push_back(source);
    }
    sides_[0].meter = meters_[0].get();
    sides_[1].meter = meters_[same ? 0 : 1].get();
    return ok();
  }

  Result<void> listen() {
    http::ServerOptions server_options;
    server_options.name = "zeus colosseum";
    server_options.limits.max_body_bytes = options_.max_prompt_bytes + 4096;
    server_options.workers = options_.workers;
    server_options.write_timeout_s = options_.upstream_timeout_s;
    // Only a prompt waits for an upstream; the page, the votes, the leaderboard and /health are
    // answered on the event loop, so answers in progress never hold them up.
    server_options.inline_request = [](const HttpRequest& request) {
      return !(request.method == "POST" && request.path == "/prompt");
    };
    return serving_.start(
        server_options,
        [this](const HttpRequest& request, const http::Peer& peer, http::Reply& reply) {
          route(request, peer, reply);
        },
        options_.host, options_.port);
  }

  int port() const override { return serving_.port(); }
  void stop() override { serving_.stop(); }
  std::vector<ProxySummary> summaries() override {
    std::vector<ProxySummary> out;
    for (size_t i = 0; i < meters_.size(); ++i) {
      out.push_back(meters_[i]->summary());
      out.back().source = meter_sources_[i];
    }
    return out;
  }

 private:
  double now_s() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_).count();
  }
  static double unix_now_s() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  // Under mu_: forgets the duels past their time and logs what the book forgot (--colosseum-log).
  void sweep_locked(double now) {
    book_.sweep(now);
    for (const ForgottenDuel& gone : book_.take_forgotten()) {
      if (duel_log_) duel_log_->forgotten(gone, now, unix_now_s());
    }
  }
  void route(const HttpRequest& request, const http::Peer& peer, http::Reply& reply);
  void prompt(const HttpRequest& request, const http::Peer& peer, http::Reply& reply);
  // The answers one client address may have in progress: a quarter of the workers, so that
  // one client cannot take every answer slot.
  size_t max_prompts_per_client() const {
    return static_cast<size_t>(std::max(1, options_.workers / 4));
  }
  HttpResponse response_vote(const HttpRequest& request);
  HttpResponse energy_vote(const HttpRequest& request);
  HttpResponse leaderboard_json();

  ColosseumOptions options_;
  LiveFeed feed_;  // before the meters, which publish to it
  std::vector<std::unique_ptr<Meter>> meters_;
  std::vector<std::string> meter_sources_;  // the side(s) each meter measures
  std::array<Side, 2> sides_;
  std::unique_ptr<store::VoteStore> votes_;
  std::unique_ptr<ColosseumLog> duel_log_;  // --colosseum-log; null: none (written under mu_)
  const std::chrono::steady_clock::time_point epoch_ = std::chrono::steady_clock::now();
  std::mutex mu_;  // book_, rng_ and prompts_in_progress_
  std::map<std::string, size_t> prompts_in_progress_;  // by client address (Peer::key)
  std::mutex tally_mu_;
  LeaderboardTally tally_;  // the stored votes' sums (the leaderboard without reading them all)
  DuelBook book_;
  std::mt19937 rng_{std::random_device{}()};
  Serving serving_;
};

void Arena::route(const HttpRequest& request, const http::Peer& peer, http::Reply& reply) {
  const std::string& path = request.path;
  const bool get = request.method == "GET" || request.method == "HEAD";
  const bool post = request.method == "POST";
  if (serve_live(feed_, request, reply)) return;
  if (get && path == "/") {
    reply.send(redirect(302, "/zeus/colosseum"));
  } else if (get && path == "/zeus/colosseum") {
    reply.send(html_page(colosseum_page_html()));
  } else if (get && path == "/zeus/leaderboard") {
    reply.send(leaderboard_json());
  } else if (get && path == "/models") {
    reply.send(json_answer(dump({{"available_models", {sides_[0].name, sides_[1].name}}})));
  } else if (get && path == "/health") {
    reply.send(json_answer(R"({"status":"ok"})"));
  } else if (post && path == "/prompt") {
    prompt(request, peer, reply);
  } else if (post && path == "/response_vote") {
    reply.send(response_vote(request));
  } else if (post && path == "/energy_vote") {
    reply.send(energy_vote(request));
  } else if (path == "/prompt" || path == "/response_vote" || path == "/energy_vote") {
    reply.send(HttpResponse::error(405, path + " answers POST only"));
  } else {
    reply.send(HttpResponse::error(
        404, "no route " + path +
                 " in the Colosseum: the page is GET /zeus/colosseum; the API is GET /models, "
                 "POST /prompt, /response_vote, /energy_vote; GET /zeus/ is the live page"));
  }
}

void Arena::prompt(const HttpRequest& request, const http::Peer& peer, http::Reply& reply) {
  Result<PromptRequest> asked = decode_prompt(request.body, options_.max_prompt_bytes);
  if (!asked) {
    reply.send(HttpResponse::error(400, asked.error().message));
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    size_t& mine = prompts_in_progress_[peer.key];
    if (mine >= max_prompts_per_client()) {
      if (mine == 0) prompts_in_progress_.erase(peer.key);
      reply.send(HttpResponse::error(
          429, "zeus colosseum: " + std::to_string(mine) +
                   " answers are in progress for your address, its most: wait for one to end"));
      return;
    }
    ++mine;
  }
  // The slot is given back however the answer ends.
  struct Slot {
    Arena* arena;
    std::string key;
    ~Slot() {
      std::lock_guard<std::mutex> lock(arena->mu_);
      auto it = arena->prompts_in_progress_.find(key);
      if (it != arena->prompts_in_progress_.end() && --it->second == 0) {
        arena->prompts_in_progress_.erase(it);
      }
    }
  } slot{this, peer.key};
  const int side_index = asked->model_index;
  std::string model;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::array<std::string, 2> models = {sides_[0].name, sides_[1].name};
    if (rng_() % 2) std::swap(models[0], models[1]);  // which model answers as "A": a coin
    const double now = now_s();
    sweep_locked(now);
    const std::optional<DuelState> before = duel_state_of(book_, asked->request_id);
    DuelResult<std::string> drawn = book_.prompt(asked->request_id, side_index, models, now);
    sweep_locked(now);  // what the new duel pushed out
    if (duel_log_) {
      duel_log_->prompt(asked->request_id, side_index, before, models, drawn, unix_now_s());
    }
    if (!drawn) {
      reply.send(refused(drawn.error()));
      return;
    }
    model = *drawn;
  }
  Side& side = sides_[sides_[0].name == model ? 0 : 1];
  const json upstream_body = {{"model", model},
                              {"messages", {{{"role", "user"}, {"content", asked->prompt}}}},
                              {"stream", true},
                              {"stream_options", {{"include_usage", true}}},
                              {"max_tokens", options_.max_tokens},
                              {"temperature", 1.0},
                              {"top_p", 0.95}};
  RequestRecord record;
  record.model = model;
  record.streamed = true;
  const double start_s = side.meter->now_s();
  const RequestId id = side.meter->begin(true, model);
  SseScanner scanner(/*keep_lines=*/false, /*keep_text=*/true);  // forwards the text only
  std::shared_ptr<http::BodyStream> stream;
  std::string upstream_error;  // a refusal's body
  const auto on_head = [&](const HttpResponse& head) {
    record.status = head.status;
    if (head.status != 200) return true;  // its body says why
    http::StreamHead out;
    out.content_type = "application/octet-stream";
    stream = reply.start_body(std::move(out));
    return stream != nullptr;
  };
  const auto on_data = [&](std::string_view piece) {
    if (!stream) {
      upstream_error.append(piece.substr(0, 4096 - std::min<size_t>(4096, upstream_error.size())));
      return true;
    }
    const int64_t tokens = scanner.feed(piece);
    if (tokens > 0) {
      if (record.ttft_s < 0) record.ttft_s = side.meter->now_s() - start_s;
      side.meter->tokens(id, tokens);
    }
    const std::string text = scanner.take_text();
    return text.empty() ? stream->open() : stream->write(dump(json(text)) + std::string(1, '\0'));
  };
  Result<HttpResponse> answer =
      side.client->stream("POST", *upstream_target(side.path, "/v1/chat/completions"),
                          dump(upstream_body), {}, on_head, on_data, options_.upstream_timeout_s);
  side.meter->usage(id, scanner.usage().prompt_tokens, scanner.usage().completion_tokens);
  record.latency_s = side.meter->now_s() - start_s;
  const RequestEnergy energy = side.meter->end(id, record);
  const bool whole = answer && stream && scanner.saw_done();
  {
    std::lock_guard<std::mutex> lock(mu_);
    const std::optional<DuelState> before = duel_state_of(book_, asked->request_id);
    DuelResult<void> noted = book_.answered(asked->request_id, side_index, energy.energy_j,
                                            energy.output_tokens, whole, now_s());
    if (duel_log_) {
      duel_log_->answered(asked->request_id, side_index, whole, before, noted, unix_now_s());
    }
    if (!noted) log_warning("zeus colosseum: " + noted.error().message);
  }
  if (stream) {
    if (!whole) {
      log_warning("zeus colosseum: " + model + "'s answer broke off" +
                  (answer ? std::string() : ": " + answer.error().message));
    }
    stream->finish();
  } else if (!answer) {
    reply.send(HttpResponse::error(
        502, "zeus colosseum: " + model + "'s server did not answer: " + answer.error().message));
  } else {
    reply.send(HttpResponse::error(502, "zeus colosseum: " + model + "'s server answered " +
                                            std::to_string(record.status) + ": " + upstream_error));
  }
}

HttpResponse Arena::response_vote(const HttpRequest& request) {
  Result<ResponseVoteRequest> asked = decode_response_vote(request.body);
  if (!asked) return HttpResponse::error(400, asked.error().message);
  DuelResult<Duel> duel;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const double now = now_s();
    sweep_locked(now);
    const std::optional<DuelState> before = duel_state_of(book_, asked->request_id);
    duel = book_.response_vote(asked->request_id, asked->victory_index, now);
    if (duel_log_) {
      duel_log_->response_vote(asked->request_id, asked->victory_index, before, duel, unix_now_s());
    }
  }
  if (!duel) return refused(duel.error());
  const int won = duel->victory_index;
  store::DuelRecord record;
  record.request_id = duel->request_id;
  record.models = duel->models;
  for (int i = 0; i < 2; ++i) {
    record.energy_j[i] = duel->answers[i].energy_j;
    record.tokens[i] = duel->answers[i].tokens;
  }
  record.victory_index = won;
  record.voted_unix_s = unix_now_s();
  Result<void> saved = votes_->record_vote(record);
  if (!saved) {
    log_warning("zeus colosseum: the vote was not saved: " + saved.error().message);
  } else {
    std::lock_guard<std::mutex> lock(tally_mu_);
    tally_.vote(record);
  }
  const EnergyComparison comparison =
      compare_energy(record.energy_j[won], record.energy_j[1 - won]);
  return json_answer(dump({{"model_names", record.models},
                           {"energy_consumptions", record.energy_j},
                           {"tokens", record.tokens},
                           {"state", duel_state_name(duel->state)},
                           {"message", comparison.sentence},
                           {"saved", saved.has_value()}}));
}

HttpResponse Arena::energy_vote(const HttpRequest& request) {
  Result<EnergyVoteRequest> asked = decode_energy_vote(request.body);
  if (!asked) return HttpResponse::error(400, asked.error().message);
  DuelResult<Duel> duel;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const double now = now_s();
    sweep_locked(now);
    const std::optional<DuelState> before = duel_state_of(book_, asked->request_id);
    duel = book_.energy_vote(asked->request_id, asked->is_worth, now);
    if (duel_log_) {
      duel_log_->energy_vote(asked->request_id, asked->is_worth, before, duel, unix_now_s());
    }
  }
  if (!duel) return refused(duel.error());
  Result<void> saved = votes_->record_energy_vote(asked->request_id, asked->is_worth);
  if (!saved) {
    log_warning("zeus colosseum: the energy vote was not saved: " + saved.error().message);
  } else {
    std::array<double, 2> energy_j{duel->answers[0].energy_j, duel->answers[1].energy_j};
    std::lock_guard<std::mutex> lock(tally_mu_);
    tally_.energy_vote(duel->models, energy_j, duel->victory_index, asked->is_worth);
  }
  return json_answer(dump({{"model_names", duel->models},
                           {"state", duel_state_name(duel->state)},
                           {"saved", saved.has_value()}}));
}

// The tally starts from the votes already stored (--votes FILE from an earlier run).
Result<void> Arena::load_tally() {
  Result<std::vector<store::DuelRecord>> rows = votes_->all();
  if (!rows) {
    return fail(ErrorCode::kUnavailable, "the votes cannot be read: " + rows.error().message);
  }
  std::lock_guard<std::mutex> lock(tally_mu_);
  for (const store::DuelRecord& row : *rows) tally_.vote(row);
  return ok();
}

HttpResponse Arena::leaderboard_json() {
  std::vector<LeaderboardRow> rows;
  int64_t duels = 0;
  {
    std::lock_guard<std::mutex> lock(tally_mu_);
    rows = tally_.rows();
    duels = tally_.duels();
  }
  json models = json::array();
  for (const LeaderboardRow& r : rows) {
    models.push_back({{"model", r.model},
                      {"duels", r.duels},
                      {"wins", r.wins},
                      {"win_rate", r.win_rate},
                      {"energy_per_answer_j", r.energy_per_answer_j},
                      {"energy_per_token_j", r.energy_per_token_j},
                      {"energy_votes", r.energy_votes},
                      {"worth", r.worth},
                      // null until the model has an energy vote (no rate yet)
                      {"worth_rate", r.worth_rate < 0 ? json(nullptr) : json(r.worth_rate)}});
  }
  return json_answer(dump({{"duels", duels}, {"models", std::move(models)}}));
}

}  // namespace

Result<std::unique_ptr<Colosseum>> Colosseum::start(Devices& devices, ColosseumOptions options) {
  if (options.sides[0].name.empty() || options.sides[1].name.empty() ||
      options.sides[0].name == options.sides[1].name) {
    return fail(ErrorCode::kInvalidArgument,
                "the Colosseum needs two upstreams with different names: --upstream a=URL "
                "--upstream b=URL");
  }
  if (!(options.sample_interval_s > 0)) {
    return fail(ErrorCode::kInvalidArgument, "the sampling interval must be > 0 s");
  }
  if (options.steady_state_window < 1) {
    return fail(ErrorCode::kInvalidArgument, "--steady-state-window must be at least 1 request");
  }
  if (options.max_tokens < 1) {
    return fail(ErrorCode::kInvalidArgument, "--max-tokens must be at least 1");
  }
  auto votes = store::VoteStore::open(options.votes_path);
  if (!votes) return fail(votes.error());
  std::unique_ptr<ColosseumLog> duel_log;
  if (!options.duel_log_path.empty()) {
    auto opened = ColosseumLog::open(options.duel_log_path);
    if (!opened) return fail(opened.error());
    duel_log = std::move(*opened);
  }
  auto arena = std::make_unique<Arena>(std::move(options), std::move(*votes), std::move(duel_log));
  ZEUS_TRY(arena->load_tally());
  ZEUS_TRY(arena->set_up(devices));
  ZEUS_TRY(arena->listen());
  return std::unique_ptr<Colosseum>(std::move(arena));
}

}  // namespace zeus::proxy
