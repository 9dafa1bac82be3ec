// GroupCommit: runs concurrent callers' transactions in batches, one caller (the leader) running
// a whole batch inside one database transaction while the others wait (store-internal).
//
// With many clients, the fixed cost of a database transaction (locks, journal writes) dominates
// the small ones the optimizer runs; a batch pays it once. Callers still get their own result and
// are answered only after the batch committed, so an answered write is as durable as before. How a
// batch isolates its items (savepoints) is up to run_batch.
// Thread-safety: run() may be called from any thread; run_batch is called by one thread at a time.
//
//   GroupCommit group([&](std::span<GroupCommit::Item* const> batch) {
//     for (GroupCommit::Item* item : batch) item->result = (*item->fn)(tx);
//   });
//   Result<void> r = group.run(fn);
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <span>

#include "zeus/optimizer/bso_store.h"

namespace zeus::store {

class GroupCommit {
 public:
  using Fn = std::function<Result<void>(StoreTransaction&)>;
  struct Item {
    const Fn* fn = nullptr;
    Result<void> result;  // set by run_batch
    bool done = false;
  };
  using RunBatch = std::function<void(std::span<Item* const>)>;

  // run_batch must set every item's result; batches hold at most max_batch items.
  explicit GroupCommit(RunBatch run_batch, size_t max_batch = 64)
      : run_batch_(std::move(run_batch)), max_batch_(max_batch) {}

  // Runs fn in the next batch and returns its result.
  Result<void> run(const Fn& fn);

 private:
  RunBatch run_batch_;
  size_t max_batch_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item*> queue_;
  bool leading_ = false;
};

}  // namespace zeus::store
