// LeaseJournal: zeusd's leases on disk, so that a zeusd crash or restart never leaves a GPU
// throttled. The journal holds every lease zeusd holds: the GPU (index and UUID),
// what to put back (power limit, persistence mode, locked SM/memory clocks), and the holder (pid,
// its start time and uid, process_identity.h), stamped with the boot id. zeusd writes it before
// each change reaches the GPU (write-ahead) and after each restore; a restarted zeusd reads it
// back and restores or re-adopts each lease (lease_recovery.h).
//
// Format: one JSON document, replaced atomically (a temporary file beside it, fsync, rename,
// fsync of the directory), so a crash leaves the old journal or the new one, never a mix:
//   {"format": "zeusd-leases", "version": 1, "boot_id": "1ee3e5ae-...",
//    "leases": [{"gpu": 1, "gpu_uuid": "GPU-...", "pid": 4242, "pid_start_ticks": 239855,
//                "uid": 1000, "restores": {"power_limit_mw": 700000, "persistence_mode": false,
//                "sm_clocks_locked": true, "memory_clocks_locked": false}}]}
// The file is created 0600; its directory must be writable by root only (zeusd checks it), since
// zeusd acts on what it reads as root.
// Thread-safety: none; the service's mutex guards it.
// Failure: write() answers Unavailable naming the file and the fix; read() never fails: a missing
// file is an empty journal, one that is not a journal at all is renamed to
// <path>.damaged-<unix seconds> and reported, and one with some bad leases gives every lease that
// validates, reports each bad one, and keeps a copy as <path>.damaged-<unix seconds>.
//
//   zeus::zeusd::LeaseJournal journal("/run/zeusd/zeusd-leases.json");
//   auto recorded = journal.write(leases.list());   // before touching the GPU
//   auto contents = journal.read();                 // at start; contents.problem when damaged
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "zeus/common/result.h"
#include "zeusd/lease_table.h"

namespace zeus::zeusd {

// What a journal holds.
struct JournalContents {
  std::string boot_id;  // the boot the leases were taken in ("" when unknown)
  std::vector<Lease> leases;  // every lease that validates
  // What went wrong with the journal ("" when nothing did): a journal that could not be used at
  // all and where it was set aside, or the leases rejected and where a copy was kept.
  std::string problem;
  // The leases that do not validate, each named with why ("lease 2 (GPU 1, pid 4242): GPU 1 is
  // leased twice (lease 1 holds it already)"); they are left out of `leases`.
  std::vector<std::string> rejected;
};

// One lease as JSON (the journal's entry, also the answer of GET /leases).
nlohmann::json lease_to_json(const Lease& lease);

// The journal's text for `leases` taken in boot `boot_id`.
std::string encode_journal(const std::vector<Lease>& leases, const std::string& boot_id);
// The leases in a journal's text. InvalidArgument naming what is wrong with the whole document
// (not JSON, another format or version, no "leases" array). A lease that does not validate (a
// field missing or of the wrong type, a GPU already leased by an earlier entry, by index or UUID)
// goes to `rejected` with its reason; the others are decoded. Never throws.
Result<JournalContents> decode_journal(std::string_view text);

class LeaseJournal {
 public:
  // `boot_id` stamps what write() records (a seam for tests; zeusd passes current_boot_id()).
  LeaseJournal(std::string path, std::string boot_id);
  ~LeaseJournal();  // releases the lock
  LeaseJournal(const LeaseJournal&) = delete;
  LeaseJournal& operator=(const LeaseJournal&) = delete;

  const std::string& path() const { return path_; }
  // Takes the journal for this process (an flock on <path>.lock, released at exit, even by
  // SIGKILL), so that a second zeusd never replays or overwrites the leases of a live one.
  // Unavailable when another process holds it.
  Result<void> lock();
  // Replaces the journal's contents with `leases`, atomically and durably. Unchanged contents are
  // not written again.
  Result<void> write(const std::vector<Lease>& leases);
  // The journal's contents (empty when there is no file). A file that cannot be decoded at all,
  // or that another user owns or may write, is renamed aside and named in `problem`; one with
  // some leases rejected gives the others, and names the rejected in `problem` (a copy of the
  // file is kept beside it). Never fails, never throws.
  JournalContents read();

 private:
  // `contents` with leases rejected: the problem named, a copy of `text` kept aside.
  JournalContents with_rejected_leases(JournalContents contents, const std::string& text);

  std::string path_;
  std::string boot_id_;
  std::string last_written_;  // the text the file holds, when this process wrote it
  int lock_fd_ = -1;
};

}  // namespace zeus::zeusd
