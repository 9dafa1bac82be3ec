// GroupCommit (store/group_commit.h).
#include "store/sqlite/group_commit.h"

#include <exception>
#include <string>
#include <vector>

namespace zeus::store {

Result<void> GroupCommit::run(const Fn& fn) {
  Item mine;
  mine.fn = &fn;
  std::unique_lock<std::mutex> lock(mu_);
  queue_.push_back(&mine);
  cv_.wait(lock, [&] { return mine.done || !leading_; });
  if (mine.done) return mine.result;
  // Lead: run batches until this caller's item has run (it is in the first, being the oldest
  // waiting item or behind ones queued before it).
  leading_ = true;
  while (!mine.done) {
    std::vector<Item*> batch;
    while (!queue_.empty() && batch.size() < max_batch_) {
      batch.push_back(queue_.front());
      queue_.pop_front();
    }
    lock.unlock();
    try {
      run_batch_(batch);
    } catch (const std::exception& e) {
      for (Item* item : batch) {
        item->result = fail(ErrorCode::kInternal,
                            std::string("store transaction failed with an exception: ") + e.what());
      }
    }
    lock.lock();
    for (Item* item : batch) item->done = true;
    cv_.notify_all();
  }
  leading_ = false;
  cv_.notify_all();
  return mine.result;
}

}  // namespace zeus::store
