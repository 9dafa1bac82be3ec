// LlmProxy: `zeus proxy` — an HTTP proxy in front of an OpenAI-compatible inference server (vLLM,
// llama.cpp's server, TGI, SGLang) that measures the GPU energy of every request. Every request
// and answer is forwarded unchanged (any method and path; streamed Server-Sent Events relayed
// piece by piece, all on the server's event loop: relay.h); each request is timed from its first
// byte in to its last byte out, its output tokens counted from the stream's chunks or the
// answer's usage, and the GPUs' energy split among the requests in flight by the EnergyLedger
// (attribution.h), read from the energy counters of the chosen GPUs every sample_interval_s and
// at every request's end.
// The energy goes back to the client as headers X-Zeus-Energy-J / X-Zeus-Tokens (non-streamed) or
// HTTP trailers (streamed), bodies byte-identical; and, only when the client sends
// "X-Zeus-Energy: 1" or "?zeus=1", as usage.energy_j in a JSON answer and as an SSE comment
// ": zeus-energy-j=<J> tokens=<n>" before "data: [DONE]".
// Failure: start() fails on a bad option or port; an unreachable upstream is a 502 per request.
// Thread-safety: stop() and summary() from any thread.
//
//   auto proxy = LlmProxy::start(devices, options);   // (*proxy)->port()
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "proxy/upstream.h"
#include "zeus/common/result.h"
#include "zeus/device/device.h"
#include "zeus/serving/serving_governor.h"

namespace zeus::proxy {

struct RunReport;  // run_report.h

// The finished requests kept for the steady-state method and the report (run_window.h).
inline constexpr size_t kDefaultSteadyStateWindow = 10000;

// --govern: the SLO-aware clock governor (clock_governor.h; docs/proxy.md, "Saving energy").
struct GovernOptions {
  bool enabled = false;
  // The governor's knobs (GovernorOptions::validate checks them): the SLOs bound its quantile of
  // streamed requests' latencies. Both SLOs are required when enabled: 0 until given.
  GovernorOptions governor = {.ttft_slo_s = 0, .tpot_slo_s = 0};
  double period_s = 0.5;   // between two decisions
  // A calibrated profile (zeus proxy calibrate); none: the parametric model. Its coefficients
  // are used on the GPU's own clock ladder.
  bool has_profile = false;
  ServingProfile profile;
  std::string profile_source;  // where `profile` came from (a file's path), for the summary
  // The engine's own load (engine_scraper.h): "auto" (the upstream's /metrics), "off", or a URL.
  std::string engine_metrics = "auto";
};

struct ProxyOptions {
  UpstreamUrl upstream;  // "http://host:port[/path]", read where the command line gives it
  std::string host = "127.0.0.1";
  int port = 8080;
  std::vector<int> gpu_indices;  // empty: every GPU
  std::string log_path;          // JSONL, one row per request; empty: none
  double sample_interval_s = 0.1;
  size_t max_body_bytes = 16 << 20;  // of a request (413 above)
  size_t max_idle_upstream_connections = 256;  // kept open for reuse (one per request in flight)
  double upstream_timeout_s = 600;   // to the answer's head, and between two of its pieces
  size_t steady_state_window = kDefaultSteadyStateWindow;  // last finished requests kept (>= 1)
  // Event-loop threads relaying (1-64). One is fastest per request on a small machine (a second
  // thread adds a hand-off per request); on a many-core host in front of a fast upstream, more
  // let the proxy keep up with many clients. Each request stays on its connection's strand.
  int io_threads = 1;
  GovernOptions govern;
};

// The counters now (the live status line and /metrics): cheap, no device access.
struct ProxyStatus {
  int64_t requests = 0;  // finished
  int64_t output_tokens = 0;
  int64_t in_flight = 0;
  double attributed_j = 0, idle_j = 0, measured_j = 0;
  std::vector<int> gpu_indices;     // the measured GPUs
  std::vector<double> gpu_power_w;  // each one's mean power over the last interval or more
  // --govern (all zero without it):
  bool governing = false;
  double clock_mhz = 0, max_clock_mhz = 0;  // the SM clock chosen, and the highest
  std::string governor_reason = {};         // why (governor_reason_name)
  std::string governor_load = {};  // where the governor's load comes from, in words
  int64_t clock_changes = 0;
  double energy_saved_j = 0;   // against the maximum clock: an ESTIMATE from the serving profile
  std::string energy_saved_source = {};  // what the estimate rests on, in words
  double slo_attainment = 1;   // share of streamed requests within both SLOs
  int64_t slo_requests = 0;    // streamed requests counted in it
};

// A run's totals (summary on exit).
struct ProxySummary {
  std::string source;  // the Colosseum's side(s) metered ("big", "small + big"); "" for the proxy
  int64_t requests = 0;
  int64_t output_tokens = 0;
  double attributed_j = 0, idle_j = 0, measured_j = 0;
  bool steady_state_found = false;
  std::string steady_state_why;
  double steady_state_j_per_token = 0;
};

class LlmProxy {
 public:
  // `devices` must outlive the proxy.
  static Result<std::unique_ptr<LlmProxy>> start(Devices& devices, ProxyOptions options);
  virtual ~LlmProxy() = default;
  virtual int port() const = 0;
  virtual void stop() = 0;
  virtual ProxySummary summary() = 0;
  virtual ProxyStatus status() = 0;
  // The run so far: the summary, the steady-state window, every finished request's attributed
  // and steady-state energy (run_report.h writes it as JSON).
  virtual RunReport report() = 0;
};

// The summary as lines for a terminal.
std::string format_summary(const ProxySummary& summary);
// Joules as the proxy writes them in headers, trailers and lines: "%.3f".
std::string format_joules(double j);

}  // namespace zeus::proxy
