// The HTTP clients' options: a timeout whose deadline would overflow is refused by name
// (`zeus bso --timeout 1e12` timed out at once, "no answer within 1000000000000 s"), for the
// blocking and the asynchronous client alike.
#include <gtest/gtest.h>

#include "http/async_client.h"
#include "http/client.h"

namespace zeus::http {
namespace {

TEST(ClientOptionsTest, ATimeoutWhoseDeadlineWouldOverflowIsRefused) {
  for (double timeout : {1e12, 9.3e9, 86401.0, 0.0, -1.0}) {
    ClientOptions o;
    o.timeout_s = timeout;
    auto blocking = HttpClient::tcp("127.0.0.1", 9, o);
    ASSERT_FALSE(blocking.has_value()) << timeout;
    EXPECT_EQ(blocking.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(blocking.error().message.find("at most a day (86400 s)"), std::string::npos)
        << blocking.error().message;
    EXPECT_FALSE(AsyncHttpClient::for_scheme("http", "127.0.0.1", 9, o).has_value()) << timeout;
  }
  ClientOptions day;
  day.timeout_s = 86400;
  EXPECT_TRUE(HttpClient::tcp("127.0.0.1", 9, day).has_value());
}

}  // namespace
}  // namespace zeus::http
