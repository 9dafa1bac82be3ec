// make_pfo_http_client(): the pipeline-frequency server (`zeus pfo serve`, or Zeus 0.16's own
// server) reached over HTTP, as the PipelineFrequencyService a rank's optimizer talks to
// (library zeus_client, on the project's HTTP layer and the server's wire codec).
//
// The job id travels percent-encoded in paths (the server decodes "%2B" to "+"). The schedule
// request is a barrier that may wait for the slowest rank of the job, so it has a timeout of its
// own, much longer than the other requests'.
// Thread-safety: one client may be shared by threads (each request takes its own connection).
// Failure: the server's {"detail"} mapped to an error code — 400, 409 and 422 (with the field
// named) kInvalidArgument, 404 and 410 kNotFound, 503 and 504 kUnavailable, others kInternal —
// and kUnavailable naming the server when it cannot be reached or does not answer in time.
//
//   auto service = zeus::make_pfo_http_client("http://127.0.0.1:7787", {});
//   if (!service) return fail(service.error());
#pragma once

#include <memory>
#include <string>

#include "zeus/common/result.h"
#include "zeus/perseus/pfo_service.h"

namespace zeus {

struct PfoHttpClientOptions {
  double timeout_s = 30.0;             // register_job, register_rank, report (> 0)
  double schedule_timeout_s = 3600.0;  // the schedule barrier (> 0); the server's own rank
                                       // timeout (600 s by default) normally answers first
};

// Fails (kInvalidArgument) only on a malformed URL (http:// or https://; https trusts the
// system's CAs plus ZEUS_CA_FILE), options, or an unreadable ZEUS_CA_FILE; nothing is sent until
// the first call.
Result<std::unique_ptr<PipelineFrequencyService>> make_pfo_http_client(
    const std::string& server_url, PfoHttpClientOptions options = {});

}  // namespace zeus
