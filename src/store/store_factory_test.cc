// open_store(): every accepted URL form opens a working store; anything else is a clear error.
#include "zeus/store/store_factory.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "store/test_mysql.h"
#include "store/test_postgres.h"

namespace zeus {
namespace {

// Stores a job through one store and reads it back, so the URL opened a real, working store.
void expect_working(Store& store, const std::string& job_id) {
  JobRecord job;
  job.spec.job_id = job_id;
  job.spec.job_id_prefix = "f";
  job.spec.batch_sizes = {8};
  job.spec.default_batch_size = 8;
  job.spec.max_power_w = 100;
  job.rng_state = "r";
  ASSERT_TRUE(store.transact([&](StoreTransaction& tx) { return tx.put_job(job); }));
  std::optional<JobRecord> read;
  ASSERT_TRUE(store.transact([&](StoreTransaction& tx) -> Result<void> {
    Result<std::optional<JobRecord>> j = tx.get_job(job_id);
    if (!j) return fail(j.error());
    read = *j;
    return tx.delete_job(job_id).map([](bool) {});
  }));
  EXPECT_EQ(read, job);
}

class StoreFactoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("zeus_factory_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(StoreFactoryTest, MemoryUrl) {
  Result<std::unique_ptr<Store>> s = open_store("memory://");
  ASSERT_TRUE(s.has_value()) << s.error().to_string();
  expect_working(**s, "f1");
}

TEST_F(StoreFactoryTest, SqliteAbsolutePathCreatesTheFileThere) {
  const std::string path = (dir_ / "abs.db").string();
  ASSERT_EQ(path[0], '/');
  Result<std::unique_ptr<Store>> s = open_store("sqlite://" + path);
  ASSERT_TRUE(s.has_value()) << s.error().to_string();
  expect_working(**s, "f1");
  EXPECT_TRUE(std::filesystem::exists(path));
}

TEST_F(StoreFactoryTest, SqliteRelativePathIsRelativeToTheWorkingFolder) {
  const std::filesystem::path before = std::filesystem::current_path();
  std::filesystem::current_path(dir_);
  Result<std::unique_ptr<Store>> s = open_store("sqlite://sub.db");
  std::filesystem::current_path(before);
  ASSERT_TRUE(s.has_value()) << s.error().to_string();
  expect_working(**s, "f1");
  EXPECT_TRUE(std::filesystem::exists(dir_ / "sub.db"));
}

TEST_F(StoreFactoryTest, SqliteOptionsInTheQuery) {
  const std::string path = (dir_ / "q.db").string();
  Result<SqliteLocation> plain = parse_sqlite_url("sqlite://" + path);
  ASSERT_TRUE(plain.has_value()) << plain.error().to_string();
  EXPECT_EQ(plain->path, path);
  EXPECT_FALSE(plain->options.durable);
  Result<SqliteLocation> full =
      parse_sqlite_url("sqlite://" + path + "?synchronous=full&busy_timeout_s=2.5");
  ASSERT_TRUE(full.has_value()) << full.error().to_string();
  EXPECT_EQ(full->path, path);
  EXPECT_TRUE(full->options.durable);
  EXPECT_EQ(full->options.busy_timeout_s, 2.5);

  Result<std::unique_ptr<Store>> s = open_store("sqlite://" + path + "?synchronous=full");
  ASSERT_TRUE(s.has_value()) << s.error().to_string();
  expect_working(**s, "f1");
  EXPECT_TRUE(std::filesystem::exists(path)) << "the query is not part of the file name";

  for (const std::string query : {"synchronous=off", "sync=full", "busy_timeout_s=-1",
                                  "busy_timeout_s=soon", "synchronous"}) {
    Result<std::unique_ptr<Store>> bad = open_store("sqlite://" + path + "?" + query);
    ASSERT_FALSE(bad.has_value()) << query;
    EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument) << query;
    EXPECT_NE(bad.error().message.find("synchronous=normal|full"), std::string::npos)
        << bad.error().message;
  }
}

TEST_F(StoreFactoryTest, PostgresUrlsInBothSpellings) {
  const std::string url = testing_pg::url();
  ASSERT_FALSE(url.empty());
  ASSERT_EQ(url.rfind("postgresql://", 0), 0u) << url;
  Result<std::unique_ptr<Store>> s = open_store(url, {.max_connections = 2});
  ASSERT_TRUE(s.has_value()) << s.error().to_string();
  const std::string id = "factory_" + std::to_string(getpid());
  expect_working(**s, id + "_a");
  Result<std::unique_ptr<Store>> short_scheme = open_store("postgres://" + url.substr(13));
  ASSERT_TRUE(short_scheme.has_value()) << short_scheme.error().to_string();
  expect_working(**short_scheme, id + "_b");
}

TEST_F(StoreFactoryTest, UnknownOrEmptyUrlsAreInvalidArguments) {
  for (const std::string url : {"", "memory", "memory://x", "/tmp/bso.db", "sqlite://",
                                "sqlite:///", "mysqlx://u@h/db", "SQLITE:///tmp/x.db"}) {
    Result<std::unique_ptr<Store>> s = open_store(url);
    ASSERT_FALSE(s.has_value()) << url;
    EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument) << url;
    EXPECT_NE(s.error().message.find("sqlite:///"), std::string::npos) << s.error().message;
  }
}

// MySQL/MariaDB in every accepted spelling (SQLAlchemy's "+driver" too, so `--db
// mysql+asyncmy://…` works as ZEUS_BSO_DATABASE_URL does), each a working store on the test
// server; a malformed one is an invalid argument with the form named.
TEST_F(StoreFactoryTest, MysqlUrlsInEverySpelling) {
  const std::string url = testing_mysql::url();
  ASSERT_FALSE(url.empty());
  ASSERT_EQ(url.rfind("mysql://", 0), 0u) << url;
  const std::string database = testing_mysql::unique_database();
  testing_mysql::create_database(database);
  const std::string rest = testing_mysql::url_of(database).substr(8);  // after "mysql://"
  int n = 0;
  for (const std::string scheme :
       {"mysql", "mariadb", "mysql+asyncmy", "mariadb+mariadbconnector"}) {
    Result<std::unique_ptr<Store>> s = open_store(scheme + "://" + rest, {.max_connections = 2});
    ASSERT_TRUE(s.has_value()) << scheme << ": " << s.error().to_string();
    expect_working(**s, "factory_" + std::to_string(n++));
  }
  Result<std::unique_ptr<Store>> bad = open_store("mysql://" + rest + "?sslmode=on");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.error().message.find("mysql://user:password@host:port/database"), std::string::npos)
      << bad.error().message;
  testing_mysql::drop_database(database);
}

TEST_F(StoreFactoryTest, UnreachableMysqlIsUnavailableWithoutThePassword) {
  for (const std::string url : {"mysql://u:pw@127.0.0.1:1/db", "mariadb+x://u:pw@127.0.0.1:1/db"}) {
    Result<std::unique_ptr<Store>> s = open_store(url);
    ASSERT_FALSE(s.has_value()) << url;
    EXPECT_EQ(s.error().code, ErrorCode::kUnavailable) << s.error().message;
    EXPECT_EQ(s.error().message.find(":pw@"), std::string::npos) << s.error().message;
    EXPECT_NE(s.error().message.find("u:***@127.0.0.1:1/db"), std::string::npos)
        << s.error().message;
  }
}

TEST_F(StoreFactoryTest, UnreachablePostgresIsUnavailable) {
  Result<std::unique_ptr<Store>> s = open_store("postgresql://u:pw@127.0.0.1:1/db");
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(s.error().message.find(":pw@"), std::string::npos) << s.error().message;
}

}  // namespace
}  // namespace zeus
