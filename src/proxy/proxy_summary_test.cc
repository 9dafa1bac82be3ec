// format_summary (proxy.h): the exit summary's lines; format_status (live_status.h): the line
// redrawn on a terminal.
#include <gtest/gtest.h>

#include <string>

#include "proxy/live_status.h"
#include "proxy/proxy.h"

namespace zeus::proxy {
namespace {

// The Colosseum's exit summary said "1 requests".
TEST(ProxySummaryTest, OneRequestAndOneTokenAreSingular) {
  ProxySummary s;
  s.source = "big";
  s.requests = 1;
  s.output_tokens = 1;
  s.measured_j = s.attributed_j = 2;
  const std::string text = format_summary(s);
  EXPECT_EQ(text.rfind("zeus proxy (big): 1 request, 1 output token; 2.000 J measured", 0), 0u)
      << text;
  s.requests = 2;
  s.output_tokens = 0;
  const std::string many = format_summary(s);
  EXPECT_EQ(many.rfind("zeus proxy (big): 2 requests, 0 output tokens;", 0), 0u) << many;
  s.requests = 0;
  s.source.clear();
  EXPECT_EQ(format_summary(s).rfind("zeus proxy: 0 requests, 0 output tokens;", 0), 0u);
}

TEST(ProxySummaryTest, TheLiveStatusLineSaysOneRequest) {
  ProxyStatus s;
  s.requests = 1;
  s.output_tokens = 1;
  EXPECT_EQ(format_status(s), "zeus proxy: 1 request (0 in flight), 1 token, 0.000 J/token, 0.0 W");
  s.requests = 2;
  s.output_tokens = 5;
  EXPECT_EQ(format_status(s).rfind("zeus proxy: 2 requests (0 in flight), 5 tokens,", 0), 0u);
}

}  // namespace
}  // namespace zeus::proxy
