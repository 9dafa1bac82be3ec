// EngineScraper: the upstream engine's own load, read from its Prometheus /metrics each governor
// period (`zeus proxy --govern --engine-metrics auto|off|URL`; serving/governor/engine_signals.h
// reads the page). `auto` asks the upstream's <path>/metrics, a URL asks there (an engine that
// serves its metrics on another port). The answer must be 200 with a text/plain (or OpenMetrics)
// body of at most 4 MiB, within `timeout_s`; anything else is a failure the governor survives
// (it keeps the proxy's own view for that period).
// Thread-safety: one caller at a time (the governor's thread).
//
//   auto scraper = EngineScraper::create(upstream, "auto", 0.25);
//   Result<EngineSignals> s = (*scraper)->scrape();   // s->running, s->waiting, s->engine
#pragma once

#include <memory>
#include <string>

#include "http/client.h"
#include "proxy/upstream.h"
#include "serving/governor/engine_signals.h"
#include "zeus/common/result.h"

namespace zeus::proxy {

class EngineScraper {
 public:
  // Failure: kInvalidArgument naming --engine-metrics for a setting that is neither "auto" nor
  // an http(s) URL.
  static Result<std::unique_ptr<EngineScraper>> create(const UpstreamUrl& upstream,
                                                       const std::string& setting,
                                                       double timeout_s);
  Result<EngineSignals> scrape();
  // Where it reads, for messages (credentials redacted).
  const std::string& where() const { return where_; }

 private:
  EngineScraper(std::unique_ptr<http::HttpClient> client, std::string target, std::string where)
      : client_(std::move(client)), target_(std::move(target)), where_(std::move(where)) {}

  std::unique_ptr<http::HttpClient> client_;
  std::string target_;
  std::string where_;
};

}  // namespace zeus::proxy
