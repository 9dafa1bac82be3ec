// PipelineFrequencyService: the pipeline-frequency server (`zeus pfo serve`, docs/perseus.md,
// "Runtime") as one rank of a training job sees it — register the job, register the rank, wait
// for the round's schedule, report the round's measurements. The PipelineFrequencyOptimizer
// (zeus/perseus/pipeline_frequency_optimizer.h) talks to the server through it; the implementation
// over
// HTTP is make_pfo_http_client() (zeus/perseus/pfo_http_client.h, library zeus_client), so the core
// library links no HTTP.
//
// Units: MHz, s, J (the messages of zeus/perseus/pfo_runtime_types.h). Thread-safety: as the
// implementation (the HTTP one may be shared by threads). Failure: the server's refusal mapped
// to an error code with its message, or Unavailable when the server cannot be reached.
//
//   auto service = zeus::make_pfo_http_client("http://127.0.0.1:7787");
//   Result<std::string> id = (*service)->register_job(job);          // rank 0 only
//   Result<pfo::FrequencySchedule> s = (*service)->schedule(*id, 3);  // a barrier
#pragma once

#include <string>

#include "zeus/common/result.h"
#include "zeus/perseus/pfo_runtime_types.h"

namespace zeus {

class PipelineFrequencyService {
 public:
  virtual ~PipelineFrequencyService() = default;
  // POST /register_job (job.job_id empty): the job id the server made.
  virtual Result<std::string> register_job(const pfo::JobInfo& job) = 0;
  // POST /register_rank/{job_id}.
  virtual Result<void> register_rank(const std::string& job_id, const pfo::RankInfo& rank) = 0;
  // GET /schedule/{job_id}?rank=R: blocks until every rank of the job has asked for this round.
  virtual Result<pfo::FrequencySchedule> schedule(const std::string& job_id, int rank) = 0;
  // POST /result/{job_id}: the rank's measurements of the round.
  virtual Result<void> report(const std::string& job_id, const pfo::ProfilingResult& result) = 0;
  // The server's address, for messages.
  virtual std::string where() const = 0;
};

}  // namespace zeus
