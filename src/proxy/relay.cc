#include "proxy/relay.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "proxy/error_answer.h"
#include "proxy/proxy.h"
#include "proxy/request_fields.h"
#include "proxy/sse_scan.h"
#include "proxy/upstream.h"
#include "zeus/common/log.h"

namespace zeus::proxy {
namespace {

using http::Headers;
using http::HttpRequest;
using http::HttpResponse;

constexpr size_t kMaxWholeAnswerBytes = 64u << 20;

bool field_named(std::string_view name, std::string_view lower) {
  return name.size() == lower.size() &&
         std::equal(name.begin(), name.end(), lower.begin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == b;
         });
}

// Fields of one hop (RFC 9110 §7.6.1) that are not framing: never forwarded. The framing ones
// (Connection, Keep-Alive, Transfer-Encoding, Content-Length, Trailer, Upgrade) each side sets
// itself: the HTTP layer never copies them from a header list. Expect: the proxy answered the
// client's 100-continue and sends the body whole. X-Zeus-Energy: the proxy's own.
bool hop_by_hop(std::string_view name) {
  for (const std::string_view h :
       {"proxy-connection", "te", "host", "x-zeus-energy", "proxy-authorization", "expect"}) {
    if (field_named(name, h)) return true;
  }
  return false;
}

// The end-to-end fields of `in`; an answer's Content-Type and Server are set by the server.
Headers end_to_end(const Headers& in, bool answer) {
  Headers out;
  const std::vector<std::string> named_hop = http::connection_options(in);
  for (const auto& [name, value] : in) {
    if (hop_by_hop(name) || field_named(name, "connection")) continue;
    const std::string_view field = name;  // (a structured binding cannot be captured)
    if (std::any_of(named_hop.begin(), named_hop.end(),
                    [field](const std::string& hop) { return field_named(field, hop); })) {
      continue;
    }
    if (answer && (field_named(name, "content-type") || field_named(name, "server"))) continue;
    out.emplace_back(name, value);
  }
  return out;
}

class Relay final : public std::enable_shared_from_this<Relay> {
 public:
  Relay(const RelayContext& context, std::shared_ptr<http::Reply> reply, bool wants_energy)
      : context_(context), reply_(std::move(reply)), wants_energy_(wants_energy),
        scanner_(wants_energy) {}

  void start(const HttpRequest& request, std::string target) {
    // Only the top level is read (model, stream): a prompt's messages are skipped, not built.
    RequestFields fields = read_request_fields(request.body);
    record_.streamed = fields.stream;
    if (const std::string* given = request.header("x-request-id")) record_.request_id = *given;
    record_.model = std::move(fields.model);
    start_s_ = context_.meter->now_s();
    id_ = context_.meter->begin(record_.streamed, record_.model, request.body.size());
    http::ExchangeHandlers handlers;
    auto self = shared_from_this();
    handlers.on_head = [self](const HttpResponse& head) { return self->on_head(head); };
    handlers.on_data = [self](std::string_view piece) { return self->on_data(piece); };
    handlers.on_done = [self](Result<HttpResponse> end) { self->on_done(std::move(end)); };
    // Weak: the exchange holds this relay (its handlers) until it ends.
    exchange_ = context_.upstream->start(
        http::loop_of(*reply_), request.method,
        std::move(target), request.body,
        end_to_end(request.headers, false), std::move(handlers), context_.upstream_timeout_s);
  }

 private:
  bool on_head(const HttpResponse& head) {
    headed_ = true;
    record_.status = head.status;
    if (head.content_type.rfind("text/event-stream", 0) == 0) {
      http::StreamHead out;
      out.status = head.status;
      out.content_type = head.content_type;
      out.headers = end_to_end(head.headers, true);
      out.trailer_names = {"X-Zeus-Energy-J", "X-Zeus-Tokens"};
      stream_ = reply_->start_body(std::move(out));
      return stream_ != nullptr;
    }
    whole_.status = head.status;
    whole_.content_type = head.content_type;
    whole_.headers = end_to_end(head.headers, true);
    return true;
  }

  http::Flow on_data(std::string_view piece) {
    if (!stream_) {  // a whole answer, relayed once complete
      if (reply_->client_gone()) return http::Flow::kStop;
      whole_.body.append(piece);
      return whole_.body.size() <= kMaxWholeAnswerBytes ? http::Flow::kMore : http::Flow::kStop;
    }
    const int64_t tokens = scanner_.feed(piece);
    if (tokens > 0) {
      if (record_.ttft_s < 0) record_.ttft_s = context_.meter->now_s() - start_s_;
      context_.meter->tokens(id_, tokens);
    }
    http::BodyStream::Queued queued;
    if (!wants_energy_) {
      queued = stream_->write_nowait(piece, room_callback());
    } else {
      const std::string lines = scanner_.take_lines(true);
      queued = !lines.empty()   ? stream_->write_nowait(lines, room_callback())
               : stream_->open() ? http::BodyStream::Queued::kYes
                                 : http::BodyStream::Queued::kGone;
    }
    switch (queued) {
      case http::BodyStream::Queued::kYes: return http::Flow::kMore;
      case http::BodyStream::Queued::kFull: return http::Flow::kPause;
      case http::BodyStream::Queued::kGone: break;
    }
    return http::Flow::kStop;
  }

  // The client caught up (or went): read on from the upstream.
  std::function<void()> room_callback() {
    return [weak = weak_from_this()] {
      if (auto self = weak.lock()) {
        if (auto exchange = self->exchange_.lock()) exchange->resume();
      }
    };
  }

  void on_done(Result<HttpResponse> answer) {
    if (!answer && !headed_) {
      record_.status = 502;
      reply_->send(openai_error(
          502, "zeus proxy: the upstream server did not answer: " + answer.error().message));
    } else if (!answer) {
      log_warning("zeus proxy: the upstream's answer broke off: " + answer.error().message);
    }
    // An answer that did not reach its end upstream must not look whole downstream.
    const bool cut = !answer || !answer->body_complete;
    Meter& meter = *context_.meter;
    if (!stream_ && headed_) {  // a whole answer: its usage and chunks
      Usage usage;
      const int64_t chunks =
          read_answer_json(whole_.body, &usage, &record_.model, &record_.response_id);
      meter.usage(id_, usage.prompt_tokens,
                  usage.completion_tokens >= 0 ? usage.completion_tokens : chunks);
    } else if (stream_) {
      if (record_.model.empty()) record_.model = scanner_.model();
      record_.response_id = scanner_.id();
      meter.usage(id_, scanner_.usage().prompt_tokens, scanner_.usage().completion_tokens);
    }
    record_.latency_s = meter.now_s() - start_s_;
    const RequestEnergy energy = meter.end(id_, record_);
    context_.metrics->observe(record_.model, energy.energy_j, energy.output_tokens);
    const std::string energy_text = format_joules(energy.energy_j);
    const std::string tokens_text = std::to_string(energy.output_tokens);
    if (stream_ && cut) {
      stream_->abort();
    } else if (stream_) {
      if (wants_energy_) {
        std::string rest = scanner_.release_done();
        const size_t done = rest.find("data: [DONE]");
        const std::string comment =
            ": zeus-energy-j=" + energy_text + " tokens=" + tokens_text + "\n\n";
        rest.insert(done == std::string::npos ? rest.size() : done, comment);
        stream_->write_nowait(rest, nullptr);  // the last bytes: queued however full
      }
      stream_->finish({{"X-Zeus-Energy-J", energy_text}, {"X-Zeus-Tokens", tokens_text}});
    } else if (headed_ && cut) {
      record_.status = 502;
      reply_->send(openai_error(
          502, "zeus proxy: the upstream's answer broke off before its end" +
                   (answer ? std::string() : ": " + answer.error().message)));
    } else if (headed_) {
      if (wants_energy_) {
        // In the upstream's key order: only usage.energy_j is added.
        nlohmann::ordered_json doc = nlohmann::ordered_json::parse(whole_.body, nullptr, false);
        if (doc.is_object()) {
          if (!doc.contains("usage") || !doc["usage"].is_object())
            doc["usage"] = nlohmann::ordered_json::object();
          doc["usage"]["energy_j"] = energy.energy_j;
          whole_.body = doc.dump();
        }
      }
      whole_.headers.emplace_back("X-Zeus-Energy-J", energy_text);
      whole_.headers.emplace_back("X-Zeus-Tokens", tokens_text);
      reply_->send(std::move(whole_));
    }
  }

  const RelayContext context_;
  std::shared_ptr<http::Reply> reply_;
  const bool wants_energy_;
  SseScanner scanner_;  // keeps lines only to edit the stream
  std::weak_ptr<http::Exchange> exchange_;
  RequestRecord record_;
  RequestId id_ = 0;
  double start_s_ = 0;
  bool headed_ = false;
  std::shared_ptr<http::BodyStream> stream_;  // an SSE answer, relayed as it comes
  HttpResponse whole_;                        // any other answer, relayed once complete
};

}  // namespace

void start_relay(const RelayContext& context, const HttpRequest& request,
                 std::shared_ptr<http::Reply> reply) {
  const std::string* zeus_header = request.header("x-zeus-energy");
  const std::string* zeus_query = request.query_value("zeus");
  const bool wants_energy =
      (zeus_header && *zeus_header == "1") || (zeus_query && *zeus_query == "1");
  Result<std::string> target = upstream_target(context.upstream_path, request.target);
  if (!target) {
    reply->send(openai_error(400, "zeus proxy: " + target.error().message));
    return;
  }
  auto relay = std::make_shared<Relay>(context, std::move(reply), wants_energy);
  relay->start(request, std::move(*target));
}

}  // namespace zeus::proxy
