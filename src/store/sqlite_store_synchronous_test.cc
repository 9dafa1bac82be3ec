// SqliteStore's durability setting, observed where it acts: how often an opened store flushes
// its WAL file to the disk (xSync, counted by a VFS that forwards to SQLite's default one).
// synchronous=FULL flushes at every commit, so an answered write survives power loss;
// NORMAL flushes the WAL only at checkpoints (a commit survives a crash of the process). The
// default is NORMAL, as docs/server.md says (bench/sqlite_synchronous_bench.sh: FULL falls
// below the service's throughput target with few clients); ?synchronous=full|normal on the
// sqlite:// URL chooses.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>

#include "zeus/store/store_factory.h"

namespace zeus {
namespace {

// A VFS that forwards everything to the default one and counts xSync calls on WAL files.
struct CountingVfs {
  struct File {
    sqlite3_file base;  // base.pMethods = &CountingVfs::methods; the real file follows
    bool wal;
    sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
  };
  static File* of(sqlite3_file* f) { return reinterpret_cast<File*>(f); }
  static const sqlite3_io_methods* io(sqlite3_file* f) { return of(f)->real()->pMethods; }

  static inline std::atomic<int> wal_syncs{0};
  static inline sqlite3_vfs* real_vfs = nullptr;
  static inline sqlite3_vfs vfs{};

  static int open(sqlite3_vfs*, const char* name, sqlite3_file* file, int flags, int* out_flags) {
    File* f = of(file);
    f->wal = (flags & SQLITE_OPEN_WAL) != 0;
    const int rc = real_vfs->xOpen(real_vfs, name, f->real(), flags, out_flags);
    f->base.pMethods = f->real()->pMethods ? &methods : nullptr;
    return rc;
  }
  static int sync(sqlite3_file* f, int flags) {
    if (of(f)->wal) ++wal_syncs;
    return io(f)->xSync(of(f)->real(), flags);
  }

  static inline const sqlite3_io_methods methods = {
      3,
      [](sqlite3_file* f) { return io(f)->xClose(of(f)->real()); },
      [](sqlite3_file* f, void* b, int n, sqlite3_int64 o) {
        return io(f)->xRead(of(f)->real(), b, n, o);
      },
      [](sqlite3_file* f, const void* b, int n, sqlite3_int64 o) {
        return io(f)->xWrite(of(f)->real(), b, n, o);
      },
      [](sqlite3_file* f, sqlite3_int64 size) { return io(f)->xTruncate(of(f)->real(), size); },
      &sync,
      [](sqlite3_file* f, sqlite3_int64* size) { return io(f)->xFileSize(of(f)->real(), size); },
      [](sqlite3_file* f, int lock) { return io(f)->xLock(of(f)->real(), lock); },
      [](sqlite3_file* f, int lock) { return io(f)->xUnlock(of(f)->real(), lock); },
      [](sqlite3_file* f, int* out) { return io(f)->xCheckReservedLock(of(f)->real(), out); },
      [](sqlite3_file* f, int op, void* arg) {
        return io(f)->xFileControl(of(f)->real(), op, arg);
      },
      [](sqlite3_file* f) { return io(f)->xSectorSize(of(f)->real()); },
      [](sqlite3_file* f) { return io(f)->xDeviceCharacteristics(of(f)->real()); },
      [](sqlite3_file* f, int page, int size, int extend, void volatile** out) {
        return io(f)->xShmMap(of(f)->real(), page, size, extend, out);
      },
      [](sqlite3_file* f, int offset, int n, int flags) {
        return io(f)->xShmLock(of(f)->real(), offset, n, flags);
      },
      [](sqlite3_file* f) { io(f)->xShmBarrier(of(f)->real()); },
      [](sqlite3_file* f, int remove) { return io(f)->xShmUnmap(of(f)->real(), remove); },
      [](sqlite3_file* f, sqlite3_int64 o, int n, void** out) {
        return io(f)->xFetch(of(f)->real(), o, n, out);
      },
      [](sqlite3_file* f, sqlite3_int64 o, void* p) {
        return io(f)->xUnfetch(of(f)->real(), o, p);
      },
  };

  // Makes this VFS the default of the process (the store opens its file with the default).
  static void install() {
    if (real_vfs) return;
    real_vfs = sqlite3_vfs_find(nullptr);
    ASSERT_NE(real_vfs, nullptr);
    ASSERT_GE(real_vfs->iVersion, 1);
    vfs = *real_vfs;  // the other methods are the real one's
    vfs.zName = "zeus_counting";
    vfs.szOsFile = static_cast<int>(sizeof(File)) + real_vfs->szOsFile;
    vfs.xOpen = &open;
    vfs.pNext = nullptr;
    ASSERT_EQ(sqlite3_vfs_register(&vfs, 1), SQLITE_OK);
  }
};

class SqliteSynchronousTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CountingVfs::install();
    dir_ = std::filesystem::temp_directory_path() /
           ("zeus_sqlite_sync_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // WAL flushes while a store opened from "sqlite://<file><query>" commits `commits` writes
  // (counted before the store closes, whose last checkpoint flushes in any mode).
  int wal_syncs_per(int commits, const std::string& query) {
    Result<std::unique_ptr<Store>> store =
        open_store("sqlite://" + (dir_ / "bso.db").string() + query);
    EXPECT_TRUE(store.has_value()) << store.error().to_string();
    if (!store) return -1;
    JobSpec spec;
    spec.job_id_prefix = "k";
    spec.batch_sizes = {16, 32};
    spec.default_batch_size = 16;
    const int before = CountingVfs::wal_syncs;
    for (int i = 0; i < commits; ++i) {
      spec.job_id = "k" + std::to_string(i);
      Result<void> r = (*store)->transact([&](StoreTransaction& tx) {
        return tx.put_job({spec, "state"});
      });
      EXPECT_TRUE(r.has_value()) << r.error().to_string();
    }
    return CountingVfs::wal_syncs - before;
  }

  std::filesystem::path dir_;
};

TEST_F(SqliteSynchronousTest, FullFlushesTheWalAtEveryCommit) {
  EXPECT_GE(wal_syncs_per(5, "?synchronous=full"), 5);
}

TEST_F(SqliteSynchronousTest, NormalFlushesTheWalOnlyAtCheckpoints) {
  EXPECT_EQ(wal_syncs_per(5, "?synchronous=normal"), 0);
}

// docs/server.md: "the default synchronous=NORMAL".
TEST_F(SqliteSynchronousTest, TheDefaultIsNormalAsDocumented) {
  EXPECT_EQ(wal_syncs_per(5, ""), 0);
  EXPECT_FALSE(parse_sqlite_url("sqlite:///x.db")->options.durable);
}

}  // namespace
}  // namespace zeus
