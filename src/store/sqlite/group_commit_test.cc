// GroupCommit: callers queued while a batch runs form the next batch, each gets its own result,
// and a batch that throws fails only its own items.
#include "store/sqlite/group_commit.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace zeus::store {
namespace {

class NullTransaction final : public StoreTransaction {
 public:
  Result<std::optional<JobRecord>> get_job(std::string_view) override { return std::nullopt; }
  Result<std::vector<std::string>> list_jobs() override { return std::vector<std::string>(); }
  Result<void> put_job(const JobRecord&) override { return ok(); }
  Result<bool> delete_job(std::string_view) override { return false; }
  Result<std::vector<Trial>> get_trials(std::string_view) override { return std::vector<Trial>(); }
  Result<void> put_trial(const Trial&) override { return ok(); }
};

TEST(GroupCommitTest, CallersWaitingForABatchRunTogetherAndGetTheirOwnResults) {
  constexpr int kCallers = 8;
  std::mutex mu;
  std::vector<size_t> batch_sizes;
  std::atomic<bool> release_first{false};
  std::atomic<int> batches_started{0};
  NullTransaction tx;
  GroupCommit group([&](std::span<GroupCommit::Item* const> batch) {
    {
      std::lock_guard<std::mutex> lock(mu);
      batch_sizes.push_back(batch.size());
    }
    if (batches_started++ == 0) {  // hold the first batch until the others have queued
      while (!release_first) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    for (GroupCommit::Item* item : batch) item->result = (*item->fn)(tx);
  });

  std::vector<int> ran(kCallers, 0);
  std::vector<Result<void>> results(kCallers);
  std::vector<std::thread> threads;
  std::atomic<int> started{0};
  for (int i = 0; i < kCallers; ++i) {
    threads.emplace_back([&, i] {
      ++started;
      results[i] = group.run([&, i](StoreTransaction&) -> Result<void> {
        ++ran[i];
        if (i % 2 == 1) return fail(ErrorCode::kNotFound, "caller " + std::to_string(i));
        return ok();
      });
    });
    if (i == 0) {  // the first caller leads a batch of one and blocks in it
      while (batches_started == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  while (started < kCallers) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let them reach the queue
  release_first = true;
  for (std::thread& t : threads) t.join();

  ASSERT_GE(batch_sizes.size(), 2u);
  EXPECT_EQ(batch_sizes[0], 1u);
  EXPECT_EQ(batch_sizes[1], static_cast<size_t>(kCallers - 1)) << "the waiting callers batched";
  for (int i = 0; i < kCallers; ++i) {
    EXPECT_EQ(ran[i], 1) << "caller " << i;
    if (i % 2 == 1) {
      ASSERT_FALSE(results[i].has_value());
      EXPECT_EQ(results[i].error().message, "caller " + std::to_string(i));
    } else {
      EXPECT_TRUE(results[i].has_value()) << "caller " << i;
    }
  }
}

TEST(GroupCommitTest, AnExceptionFailsOnlyItsBatch) {
  std::vector<size_t> sizes;
  int batches = 0;
  NullTransaction tx;
  GroupCommit group([&](std::span<GroupCommit::Item* const> batch) {
    sizes.push_back(batch.size());
    if (batches++ == 0) throw std::runtime_error("disk on fire");
    for (GroupCommit::Item* item : batch) item->result = (*item->fn)(tx);
  });
  Result<void> first = group.run([](StoreTransaction&) { return ok(); });
  ASSERT_FALSE(first.has_value());
  EXPECT_EQ(first.error().code, ErrorCode::kInternal);
  EXPECT_NE(first.error().message.find("disk on fire"), std::string::npos);
  EXPECT_TRUE(group.run([](StoreTransaction&) { return ok(); }).has_value());
  EXPECT_EQ(sizes, (std::vector<size_t>{1, 1}));
}

}  // namespace
}  // namespace zeus::store
