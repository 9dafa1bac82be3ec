#include "zeusd/lease_session.h"

#include <gtest/gtest.h>

namespace zeus::zeusd {
namespace {

TEST(SessionExpired, OnlyAfterMoreThanTheTimeoutOfSilence) {
  EXPECT_FALSE(session_expired(1000, 1000, 30000));
  EXPECT_FALSE(session_expired(1000, 31000, 30000));  // exactly the timeout: still alive
  EXPECT_TRUE(session_expired(1000, 31001, 30000));
  EXPECT_FALSE(session_expired(5000, 4000, 10));  // a clock that went back is no silence
}

TEST(LeaseSessions, HeartbeatsKeepASessionAliveAndSilenceEndsIt) {
  LeaseSessions sessions(2.0);
  sessions.open("a", "alice", 0);
  sessions.open("b", "bob", 0);
  for (int64_t t = 1000; t <= 5000; t += 1000) {
    EXPECT_TRUE(sessions.touch("a", t));
    // "b" is silent: alive up to 2 s, expired after.
    const auto expired = sessions.take_expired(t);
    if (t <= 2000) {
      EXPECT_TRUE(expired.empty()) << t;
    } else if (t == 3000) {
      EXPECT_EQ(expired, std::vector<std::string>{"b"});
    } else {
      EXPECT_TRUE(expired.empty()) << t;
    }
  }
  ASSERT_NE(sessions.find("a"), nullptr);
  EXPECT_EQ(sessions.find("a")->subject, "alice");
  EXPECT_EQ(sessions.find("a")->last_seen_ms, 5000);
  EXPECT_EQ(sessions.find("b"), nullptr);
  EXPECT_FALSE(sessions.touch("b", 6000));  // an expired session is not revived
  EXPECT_EQ(sessions.take_expired(7001), std::vector<std::string>{"a"});
  EXPECT_TRUE(sessions.list().empty());
}

TEST(LeaseSessions, CloseForgetsAndAnOldHeartbeatDoesNotMoveTimeBack) {
  LeaseSessions sessions(1.0);
  EXPECT_DOUBLE_EQ(sessions.timeout_s(), 1.0);
  sessions.open("x", "carol", 100);
  EXPECT_TRUE(sessions.touch("x", 900));
  EXPECT_TRUE(sessions.touch("x", 500));  // late, out of order
  EXPECT_EQ(sessions.find("x")->last_seen_ms, 900);
  EXPECT_TRUE(sessions.take_expired(1900).empty());
  EXPECT_TRUE(sessions.close("x"));
  EXPECT_FALSE(sessions.close("x"));
  EXPECT_TRUE(sessions.take_expired(100000).empty());
}

}  // namespace
}  // namespace zeus::zeusd
