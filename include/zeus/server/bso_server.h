// BsoServer: the batch-size optimizer as an HTTP service (`zeus serve`; library zeus_server).
//
// Serves the wire protocol of docs/server.md over a Store (SQLite, PostgreSQL, memory), plus
// GET /jobs, GET /jobs/{job_id} (job, beliefs, trials), GET /healthz, GET /metrics (Prometheus)
// and the dashboard at /. Each answered report is committed to the store before the answer.
// Security: binds 127.0.0.1 unless told otherwise; with a token, requests that change state need
// "Authorization: Bearer <token>" (401); bodies over max_body_bytes get 413; bad input gets 400
// with {"message"} (unknown fields included), never 500. Dispatched trials older than
// trial_timeout_s are marked failed by a background sweep. Units: seconds, bytes.
// Thread-safety: start() returns a running server; stop() and the accessors may be called from
// any thread. Failure: start() returns kUnavailable when the address cannot be bound,
// kInvalidArgument for bad options.
//
//   zeus::BsoServerOptions options;  options.port = 0;   // any free port
//   auto server = zeus::BsoServer::start(*store, options);
//   if (!server) return fail(server.error());
//   std::cout << (*server)->url() << "\n";       // http://127.0.0.1:41235
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "zeus/common/clock.h"
#include "zeus/common/result.h"
#include "zeus/optimizer/bso_store.h"
#include "zeus/optimizer/bso_types.h"

namespace zeus {

struct BsoServerOptions {
  std::string host = "127.0.0.1";  // address to bind; "0.0.0.0" exposes the service
  int port = 8000;                 // 0: a free port, read back with port()
  std::string token;               // non-empty: state-changing requests need this bearer token
  int workers = 16;                // threads for requests' store work (connections hold none)
  double trial_timeout_s = 0.0;    // > 0: dispatched trials older than this are marked failed
  bool upstream_rules = false;     // jobs registered without rule fields get upstream_rules()
  size_t max_body_bytes = 1 << 20;  // larger request bodies are answered 413
  size_t max_connections = 10000;   // at the cap, idle and slow connections give way
  size_t max_connections_per_peer = 0;  // per client address; 0: no limit
  double header_timeout_s = 10;     // a request's headers must arrive within this (slowloris)
  double idle_timeout_s = 30;       // a kept-alive connection with no request is closed
  const Clock* clock = nullptr;    // dispatch stamps and expiry; default: the system clock
};

class BsoServer {
 public:
  // Binds host:port and serves on background threads until stop() or destruction. store (and
  // options.clock) must outlive the server.
  static Result<std::unique_ptr<BsoServer>> start(Store& store, BsoServerOptions options = {});
  virtual ~BsoServer() = default;

  // The bound port (the chosen one when options.port was 0).
  virtual int port() const = 0;
  // "http://<host>:<port>" (IPv6 hosts in brackets).
  virtual std::string url() const = 0;
  // Stops accepting, finishes requests in flight, and joins the threads. Idempotent.
  virtual void stop() = 0;
  // Runs one expiry sweep now (the background sweep runs every min(timeout/4, 30 s)); returns
  // the trials marked failed. kInvalidArgument when trial_timeout_s is not set.
  virtual Result<std::vector<Trial>> expire_trials_now() = 0;
};

}  // namespace zeus
