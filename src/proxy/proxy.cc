#include "proxy/proxy.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "http/client.h"
#include "http/server.h"
#include "proxy/live_routes.h"
#include "proxy/meter.h"
#include "proxy/proxy_metrics.h"
#include "proxy/request_fields.h"
#include "proxy/run_report.h"
#include "proxy/serving.h"
#include "proxy/sse_scan.h"
#include "proxy/upstream.h"
#include "zeus/log.h"

namespace zeus::proxy {
namespace {

using http::Headers;
using http::HttpRequest;
using http::HttpResponse;

bool named(std::string_view name, std::string_view lower) {
  return name.size() == lower.size() &&
         std::equal(name.begin(), name.end(), lower.begin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == b;
         });
}

// Hop-by-hop fields (RFC 9110 §7.6.1) and the ones each side frames itself: never forwarded.
bool hop_by_hop(std::string_view name) {
  for (const std::string_view h :
       {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding",
        "upgrade", "content-length", "host", "x-zeus-energy", "proxy-authorization"}) {
    if (named(name, h)) return true;
  }
  return false;
}

// The end-to-end fields of `in`; an answer's Content-Type and Server are set by the server.
Headers end_to_end(const Headers& in, bool answer) {
  Headers out;
  for (const auto& [name, value] : in) {
    if (hop_by_hop(name)) continue;
    if (answer && (named(name, "content-type") || named(name, "server"))) continue;
    out.emplace_back(name, value);
  }
  return out;
}

std::string joules(double j) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f", j);
  return text;
}

class Proxy final : public LlmProxy {
 public:
  Proxy(ProxyOptions options, std::unique_ptr<http::HttpClient> upstream,
        std::unique_ptr<Meter> meter)
      : options_(std::move(options)), upstream_(std::move(upstream)), meter_(std::move(meter)) {
    meter_->publish_to(&feed_,
                       feed_.add_source("proxy", LiveFeed::gpus_label(options_.gpu_indices)));
  }
  ~Proxy() override { stop(); }

  Result<void> listen() {
    http::ServerOptions server_options;
    server_options.name = "zeus proxy";
    server_options.limits.max_body_bytes = options_.max_body_bytes;
    server_options.workers = options_.max_in_flight;
    server_options.body_timeout_s = 120;
    server_options.write_timeout_s = options_.upstream_timeout_s;
    server_options.max_stream_buffer_bytes = 1 << 20;
    // Relayed on a worker: the upstream client blocks while the answer comes.
    return serving_.start(
        server_options,
        [this](const HttpRequest& request, http::Reply& reply) {
          if (!serve_live(feed_, request, reply)) relay(request, reply);
        },
        options_.host, options_.port);
  }

  int port() const override { return serving_.port(); }
  void stop() override { serving_.stop(); }
  ProxySummary summary() override { return meter_->summary(); }
  ProxyStatus status() override { return meter_->status(); }
  RunReport report() override { return meter_->report(); }

 private:
  void relay(const HttpRequest& request, http::Reply& reply);
  HttpResponse metrics_page();

  ProxyOptions options_;
  LiveFeed feed_;  // the live page's (/zeus/); before the meter, which publishes to it
  std::unique_ptr<http::HttpClient> upstream_;
  std::unique_ptr<Meter> meter_;
  ProxyMetrics metrics_;
  Serving serving_;
};

// GET /metrics: the upstream's own metrics (vLLM, TGI and SGLang serve them there), then the
// proxy's; only the proxy's when the upstream has none.
HttpResponse Proxy::metrics_page() {
  std::string text;
  Result<HttpResponse> upstream = upstream_->request("GET", "/metrics");
  if (upstream && upstream->status == 200 && upstream->content_type.rfind("text/plain", 0) == 0) {
    text = std::move(upstream->body);
    if (!text.empty() && text.back() != '\n') text += '\n';
  }
  text += metrics_.render(meter_->status());
  return HttpResponse{200, std::move(text), ProxyMetrics::kContentType, {}, false};
}

void Proxy::relay(const HttpRequest& request, http::Reply& reply) {
  if (request.path == "/metrics" && request.method == "GET") {
    reply.send(metrics_page());
    return;
  }
  // Only the top level is read (model, stream): a prompt's messages are skipped, not built.
  RequestFields fields = read_request_fields(request.body);
  const bool asked_streamed = fields.stream;
  const std::string* zeus_header = request.header("x-zeus-energy");
  const std::string* zeus_query = request.query_value("zeus");
  const bool wants_energy =
      (zeus_header && *zeus_header == "1") || (zeus_query && *zeus_query == "1");
  RequestRecord record;
  record.streamed = asked_streamed;
  if (const std::string* given = request.header("x-request-id")) record.request_id = *given;
  record.model = std::move(fields.model);
  const double start_s = meter_->now_s();
  const RequestId id = meter_->begin(asked_streamed, record.model);

  std::shared_ptr<http::BodyStream> stream;  // an SSE answer, relayed as it comes
  HttpResponse whole;                        // any other answer, relayed once complete
  bool headed = false;
  SseScanner scanner(wants_energy);  // keeps lines only to edit the stream
  int64_t whole_chunks = 0;
  const auto on_head = [&](const HttpResponse& head) {
    headed = true;
    record.status = head.status;
    const bool sse = head.content_type.rfind("text/event-stream", 0) == 0;
    if (sse) {
      http::StreamHead out;
      out.status = head.status;
      out.content_type = head.content_type;
      out.headers = end_to_end(head.headers, true);
      out.trailer_names = {"X-Zeus-Energy-J", "X-Zeus-Tokens"};
      stream = reply.start_body(std::move(out));
      return stream != nullptr;
    }
    whole.status = head.status;
    whole.content_type = head.content_type;
    whole.headers = end_to_end(head.headers, true);
    return true;
  };
  const auto on_data = [&](std::string_view piece) {
    if (!stream) {
      if (reply.client_gone()) return false;
      whole.body.append(piece);
      return whole.body.size() <= (64u << 20);
    }
    const int64_t tokens = scanner.feed(piece);
    if (tokens > 0) {
      if (record.ttft_s < 0) record.ttft_s = meter_->now_s() - start_s;
      meter_->tokens(id, tokens);
    }
    if (!wants_energy) return stream->write(piece);
    const std::string lines = scanner.take_lines(true);
    return lines.empty() ? stream->open() : stream->write(lines);
  };
  Result<HttpResponse> answer = upstream_->stream(request.method, request.target, request.body,
                                                  end_to_end(request.headers, false), on_head,
                                                  on_data, options_.upstream_timeout_s);
  if (!answer && !headed) {
    record.status = 502;
    reply.send(HttpResponse::error(
        502, "zeus proxy: the upstream server did not answer: " + answer.error().message));
  } else if (!answer) {
    log_warning("zeus proxy: the upstream's answer broke off: " + answer.error().message);
  }
  // An answer that did not reach its end upstream must not look whole downstream.
  const bool cut = !answer || !answer->body_complete;
  if (!stream && headed) {  // a whole answer: its usage and chunks
    Usage usage;
    whole_chunks = read_answer_json(whole.body, &usage, &record.model, &record.response_id);
    meter_->usage(id, usage.prompt_tokens,
                  usage.completion_tokens >= 0 ? usage.completion_tokens : whole_chunks);
  } else if (stream) {
    if (record.model.empty()) record.model = scanner.model();
    record.response_id = scanner.id();
    meter_->usage(id, scanner.usage().prompt_tokens, scanner.usage().completion_tokens);
  }
  record.latency_s = meter_->now_s() - start_s;
  const RequestEnergy energy = meter_->end(id, record);
  metrics_.observe(record.model, energy.energy_j, energy.output_tokens);
  const std::string energy_text = joules(energy.energy_j);
  const std::string tokens_text = std::to_string(energy.output_tokens);
  if (stream && cut) {
    stream->abort();
  } else if (stream) {
    if (wants_energy) {
      std::string rest = scanner.release_done();
      const size_t done = rest.find("data: [DONE]");
      const std::string comment =
          ": zeus-energy-j=" + energy_text + " tokens=" + tokens_text + "\n\n";
      rest.insert(done == std::string::npos ? rest.size() : done, comment);
      stream->write(rest);
    }
    stream->finish({{"X-Zeus-Energy-J", energy_text}, {"X-Zeus-Tokens", tokens_text}});
  } else if (headed && cut) {
    record.status = 502;
    reply.send(HttpResponse::error(
        502, "zeus proxy: the upstream's answer broke off before its end" +
                 (answer ? std::string() : ": " + answer.error().message)));
  } else if (headed) {
    if (wants_energy) {
      nlohmann::json doc = nlohmann::json::parse(whole.body, nullptr, false);
      if (doc.is_object()) {
        if (!doc.contains("usage") || !doc["usage"].is_object())
          doc["usage"] = nlohmann::json::object();
        doc["usage"]["energy_j"] = energy.energy_j;
        whole.body = doc.dump();
      }
    }
    whole.headers.emplace_back("X-Zeus-Energy-J", energy_text);
    whole.headers.emplace_back("X-Zeus-Tokens", tokens_text);
    reply.send(std::move(whole));
  }
}

}  // namespace

Result<std::unique_ptr<LlmProxy>> LlmProxy::start(Devices& devices, ProxyOptions options) {
  if (!(options.sample_interval_s > 0)) {
    return fail(ErrorCode::kInvalidArgument, "the sampling interval must be > 0 s");
  }
  if (options.steady_state_window < 1) {
    return fail(ErrorCode::kInvalidArgument, "--steady-state-window must be at least 1 request");
  }
  auto client = upstream_client(options.upstream, options.upstream_timeout_s, "--upstream",
                                static_cast<size_t>(std::max(1, options.max_in_flight)));
  if (!client) return fail(client.error());
  Result<GpuEnergyReader> reader = GpuEnergyReader::create(devices, options.gpu_indices);
  if (!reader) return fail(reader.error());
  auto meter = std::make_unique<Meter>(std::move(*reader), options.sample_interval_s,
                                       options.log_path, options.steady_state_window);
  ZEUS_TRY(meter->open_log());
  auto proxy = std::make_unique<Proxy>(options, std::move(*client), std::move(meter));
  ZEUS_TRY(proxy->listen());
  return std::unique_ptr<LlmProxy>(std::move(proxy));
}

std::string format_summary(const ProxySummary& s) {
  std::ostringstream out;
  out << "zeus proxy: " << s.requests << " requests, " << s.output_tokens << " output tokens; "
      << joules(s.measured_j) << " J measured = " << joules(s.attributed_j) << " J attributed + "
      << joules(s.idle_j) << " J idle";
  if (s.measured_j - s.attributed_j - s.idle_j > 1e-6) {
    out << " + " << joules(s.measured_j - s.attributed_j - s.idle_j) << " J in flight";
  }
  out << "\n";
  if (s.output_tokens > 0) {
    out << "zeus proxy: " << joules(s.attributed_j / static_cast<double>(s.output_tokens))
        << " J/token attributed";
  }
  if (s.steady_state_found) {
    out << "; steady state (benchmark method) " << joules(s.steady_state_j_per_token) << " J/token";
  } else if (!s.steady_state_why.empty()) {
    out << "; steady state: " << s.steady_state_why;
  }
  out << "\n";
  return out.str();
}

}  // namespace zeus::proxy
