// JobCache: holds what it was told the database holds, never guesses, and stays bounded.
#include "store/sqlite/job_cache.h"

#include <gtest/gtest.h>

namespace zeus::store {
namespace {

JobRecord job(const std::string& id, const std::string& rng = "r") {
  JobRecord j;
  j.spec.job_id = id;
  j.rng_state = rng;
  return j;
}

Trial trial(const std::string& id, int number, double cost = 1.0) {
  Trial t;
  t.job_id = id;
  t.trial_number = number;
  t.cost = cost;
  return t;
}

TEST(JobCacheTest, TrialsAreKnownOnlyOnceLoadedAndStayOrdered) {
  JobCache cache;
  cache.put_trials("a", {trial("a", 1)});  // an uncached job: ignored
  cache.put_trial(trial("a", 2));
  EXPECT_EQ(cache.job("a"), nullptr);
  EXPECT_EQ(cache.trials("a"), nullptr);

  cache.put_job(job("a"));
  ASSERT_NE(cache.job("a"), nullptr);
  EXPECT_EQ(cache.trials("a"), nullptr) << "a job's trials are unknown until loaded";
  cache.put_trial(trial("a", 1));  // trials not loaded: ignored, not a partial history
  EXPECT_EQ(cache.trials("a"), nullptr);

  cache.put_trials("a", {trial("a", 1), trial("a", 3)});
  cache.put_trial(trial("a", 2));
  cache.put_trial(trial("a", 3, 9.0));  // replaces
  ASSERT_NE(cache.trials("a"), nullptr);
  const std::vector<Trial> expected = {trial("a", 1), trial("a", 2), trial("a", 3, 9.0)};
  EXPECT_EQ(*cache.trials("a"), expected);

  cache.put_job(job("a", "moved"));  // replacing the job keeps its trials
  EXPECT_EQ(cache.job("a")->rng_state, "moved");
  EXPECT_EQ(cache.trials("a")->size(), 3u);

  cache.erase_job("a");
  EXPECT_EQ(cache.job("a"), nullptr);
  EXPECT_EQ(cache.trials("a"), nullptr);
}

TEST(JobCacheTest, StartsOverPastItsLimitAndOnClear) {
  JobCache cache(/*max_jobs=*/2);
  cache.put_job(job("a"));
  cache.put_job(job("b"));
  cache.put_job(job("b", "again"));  // not a new job: no overflow
  EXPECT_NE(cache.job("a"), nullptr);
  cache.put_job(job("c"));
  EXPECT_EQ(cache.job("a"), nullptr);
  EXPECT_EQ(cache.job("b"), nullptr);
  EXPECT_NE(cache.job("c"), nullptr);
  cache.clear();
  EXPECT_EQ(cache.job("c"), nullptr);
  JobRecord nameless;
  cache.put_job(nameless);  // no job_id: nothing to key it by
  EXPECT_EQ(cache.job(""), nullptr);
}

}  // namespace
}  // namespace zeus::store
