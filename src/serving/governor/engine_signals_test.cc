// Reading an engine's own load from its /metrics (issue 50): each known engine's gauges, label
// sets summed, the KV usage, hostile and unknown pages.
#include "serving/governor/engine_signals.h"

#include <gtest/gtest.h>

namespace zeus {
namespace {

TEST(EngineSignalsTest, VllmsGaugesSummedOverLabelSetsWithTheKvUsage) {
  const char* page =
      "# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
      "# TYPE vllm:num_requests_running gauge\n"
      "vllm:num_requests_running{engine=\"0\",model_name=\"meta-llama/Llama-3.1-8B\"} 12.0\n"
      "vllm:num_requests_running{engine=\"1\",model_name=\"a \\\"quoted} name\"} 3.0\n"
      "vllm:num_requests_waiting{engine=\"0\",model_name=\"meta-llama/Llama-3.1-8B\"} 7.0 1712345678000\r\n"
      "vllm:kv_cache_usage_perc{engine=\"0\"} 0.42\n"
      "vllm:kv_cache_usage_perc{engine=\"1\"} 0.61\n"
      "vllm:prompt_tokens_total{engine=\"0\"} 1.2e+06\n";
  auto s = read_engine_signals(page);
  ASSERT_TRUE(s.has_value()) << s.error().to_string();
  EXPECT_EQ(s->engine, "vLLM");
  EXPECT_DOUBLE_EQ(s->running, 15);
  EXPECT_DOUBLE_EQ(s->waiting, 7);
  EXPECT_DOUBLE_EQ(s->kv_cache_usage, 0.61);  // the fullest rank
  EXPECT_EQ(s->skipped_lines, 0);
  EXPECT_NE(s->families.find("vllm:num_requests_waiting"), std::string::npos);
}

TEST(EngineSignalsTest, SglangTgiAndLlamaCppAreRecognisedByTheirNames) {
  auto sglang = read_engine_signals(
      "sglang:num_running_reqs{model_name=\"m\"} 4\nsglang:num_queue_reqs{model_name=\"m\"} 9\n"
      "sglang:token_usage{model_name=\"m\"} 0.28\n");
  ASSERT_TRUE(sglang.has_value());
  EXPECT_EQ(sglang->engine, "SGLang");
  EXPECT_DOUBLE_EQ(sglang->waiting, 9);
  EXPECT_DOUBLE_EQ(sglang->kv_cache_usage, 0.28);
  auto tgi = read_engine_signals("tgi_queue_size 2\ntgi_batch_current_size 16\n");
  ASSERT_TRUE(tgi.has_value());
  EXPECT_EQ(tgi->engine, "TGI");
  EXPECT_DOUBLE_EQ(tgi->running, 16);
  EXPECT_DOUBLE_EQ(tgi->kv_cache_usage, -1);  // TGI has no such gauge
  auto llama = read_engine_signals(
      "llamacpp:requests_processing 1\nllamacpp:requests_deferred 0\n"
      "llamacpp:kv_cache_usage_ratio 0.05\n");
  ASSERT_TRUE(llama.has_value());
  EXPECT_EQ(llama->engine, "llama.cpp");
  EXPECT_DOUBLE_EQ(llama->waiting, 0);
  auto old_vllm = read_engine_signals("vllm:num_requests_running 2\nvllm:gpu_cache_usage_perc 0.9\n");
  ASSERT_TRUE(old_vllm.has_value());
  EXPECT_DOUBLE_EQ(old_vllm->kv_cache_usage, 0.9);
  EXPECT_DOUBLE_EQ(old_vllm->waiting, -1);  // not exposed: the proxy's view stands
}

TEST(EngineSignalsTest, LinesItCannotReadAreSkippedAndCountedNeverFatal) {
  auto s = read_engine_signals(
      "vllm:num_requests_running{model_name=\"unterminated 5\n"
      "vllm:num_requests_running{a=\"b\"} twelve\n"
      "vllm:num_requests_running{a=\"b\"} -3\n"
      "vllm:num_requests_running{a=\"b\"} NaN\n"
      "vllm:num_requests_running{a=\"b\"} +Inf\n"
      "vllm:num_requests_running{a=\"b\"}5\n"
      "vllm:num_requests_running{a=\"b\"} 1e308\n"
      "vllm:num_requests_running{a=\"c\"} 5\n"
      "\n  \n{\"json\": true}\n");
  ASSERT_TRUE(s.has_value()) << s.error().to_string();
  EXPECT_DOUBLE_EQ(s->running, 5);
  EXPECT_EQ(s->skipped_lines, 7);
}

TEST(EngineSignalsTest, AnUnknownOrOversizedPageIsRefusedSayingWhatItHeld) {
  auto unknown = read_engine_signals(
      "# HELP process_cpu_seconds_total CPU.\nprocess_cpu_seconds_total 3.5\nzeus_x 1\n");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().code, ErrorCode::kNotFound);
  EXPECT_NE(unknown.error().message.find("process_cpu_seconds_total"), std::string::npos);
  EXPECT_FALSE(read_engine_signals("").has_value());
  EXPECT_FALSE(read_engine_signals("<html>404</html>").has_value());
  const std::string huge(kEngineMetricsMaxBytes + 1, '#');
  auto big = read_engine_signals(huge);
  ASSERT_FALSE(big.has_value());
  EXPECT_EQ(big.error().code, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace zeus
