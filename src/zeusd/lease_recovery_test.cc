#include "zeusd/lease_recovery.h"

#include <map>

#include <gtest/gtest.h>

namespace zeus::zeusd {
namespace {

Lease lease(int gpu, int pid, uint64_t ticks) {
  Lease l;
  l.gpu = gpu;
  l.pid = pid;
  l.uid = 1000;
  l.pid_start_ticks = ticks;
  l.saved.power_limit_mw = 700000;
  return l;
}

// Live processes: pid -> start ticks.
StartTicksLookup processes(std::map<int, uint64_t> live) {
  return [live](int pid) -> std::optional<uint64_t> {
    auto it = live.find(pid);
    if (it == live.end()) return std::nullopt;
    return it->second;
  };
}

TEST(LeaseRecovery, LeaseOfAGoneProcessIsRestored) {
  JournalContents journal{"boot-1", {lease(1, 4242, 777)}, "", {}};
  const RecoveryPlan plan = plan_recovery(journal, "boot-1", processes({}));
  ASSERT_EQ(plan.restore.size(), 1u);
  EXPECT_TRUE(plan.adopt.empty());
  EXPECT_EQ(plan.restore[0].lease, journal.leases[0]);
  EXPECT_NE(plan.restore[0].why.find("pid 4242 (uid 1000) exited"), std::string::npos);
}

TEST(LeaseRecovery, LeaseOfALiveProcessIsReadopted) {
  JournalContents journal{"boot-1", {lease(0, 10, 5), lease(1, 4242, 777)}, "", {}};
  const RecoveryPlan plan = plan_recovery(journal, "boot-1", processes({{4242, 777}}));
  ASSERT_EQ(plan.adopt.size(), 1u);
  EXPECT_EQ(plan.adopt[0], journal.leases[1]);
  ASSERT_EQ(plan.restore.size(), 1u);
  EXPECT_EQ(plan.restore[0].lease.pid, 10);
}

TEST(LeaseRecovery, ReusedPidCountsAsGone) {
  JournalContents journal{"boot-1", {lease(1, 4242, 777)}, "", {}};
  const RecoveryPlan plan = plan_recovery(journal, "boot-1", processes({{4242, 90000}}));
  EXPECT_TRUE(plan.adopt.empty());
  ASSERT_EQ(plan.restore.size(), 1u);
  EXPECT_NE(plan.restore[0].why.find("now belongs to a process started at tick 90000, not 777"),
            std::string::npos)
      << plan.restore[0].why;
}

TEST(LeaseRecovery, AfterARebootEveryLeaseIsRestored) {
  JournalContents journal{"boot-1", {lease(1, 4242, 777)}, "", {}};
  const RecoveryPlan plan = plan_recovery(journal, "boot-2", processes({{4242, 777}}));
  EXPECT_TRUE(plan.adopt.empty());
  ASSERT_EQ(plan.restore.size(), 1u);
  EXPECT_NE(plan.restore[0].why.find("rebooted"), std::string::npos);
}

TEST(LeaseRecovery, UnknownStartTimeTrustsThePidAlone) {
  JournalContents journal{"", {lease(1, 4242, 0)}, "", {}};
  EXPECT_EQ(plan_recovery(journal, "boot-1", processes({{4242, 31}})).adopt.size(), 1u);
  EXPECT_EQ(plan_recovery(journal, "boot-1", processes({})).restore.size(), 1u);
}

}  // namespace
}  // namespace zeus::zeusd

namespace zeus::zeusd {
namespace {

TEST(LeaseRecovery, ASessionLeaseIsRestoredSinceSessionsEndWithZeusd) {
  Lease session_lease = lease(0, 0, 0);
  session_lease.session = "0123456789abcdef0123456789abcdef";
  JournalContents journal{"boot-1", {session_lease}, "", {}};
  // Even with a live pid 0 entry in the lookup, a session's lease is never re-adopted.
  const RecoveryPlan plan = plan_recovery(journal, "boot-1", processes({{0, 0}}));
  EXPECT_TRUE(plan.adopt.empty());
  ASSERT_EQ(plan.restore.size(), 1u);
  EXPECT_NE(plan.restore[0].why.find("lease session 01234567..."), std::string::npos)
      << plan.restore[0].why;
}

}  // namespace
}  // namespace zeus::zeusd
