#include "zeusd/lease_journal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <limits>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>

#include "zeusd/unix_socket_setup.h"

namespace zeus::zeusd {
namespace {

using nlohmann::json;

constexpr const char* kFormat = "zeusd-leases";
constexpr int kVersion = 1;
// A journal holds one entry per GPU; anything this big is not one.
constexpr size_t kMaxJournalBytes = 1 << 20;

std::string errno_text() { return std::strerror(errno); }

// An unsigned integer field no larger than `max`; nullopt when absent or not one.
std::optional<uint64_t> unsigned_field(const json& object, const char* key, uint64_t max) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_unsigned()) return std::nullopt;
  const uint64_t value = it->get<uint64_t>();
  if (value > max) return std::nullopt;
  return value;
}

// "lease 2 (GPU 1, pid 4242)": the entry's number, and its GPU and holder where they can be read.
std::string lease_name(const json& entry, size_t number) {
  std::string name = "lease " + std::to_string(number);
  if (!entry.is_object()) return name;
  std::string known;
  for (const auto& [key, label] : {std::pair{"gpu", "GPU "}, std::pair{"pid", "pid "}}) {
    auto it = entry.find(key);
    if (it == entry.end() || !it->is_number_integer()) continue;
    known += (known.empty() ? "" : ", ") + std::string(label) + it->dump();
  }
  return known.empty() ? name : name + " (" + known + ")";
}

// One entry of "leases"; InvalidArgument saying what is wrong with it.
Result<Lease> decode_lease(const json& entry) {
  auto invalid = [](const std::string& what) { return fail(ErrorCode::kInvalidArgument, what); };
  if (!entry.is_object()) return invalid("not an object");
  Lease lease;
  auto gpu = unsigned_field(entry, "gpu", 1'000'000);
  if (!gpu) return invalid("gpu must be a GPU index");
  lease.gpu = static_cast<int>(*gpu);
  if (auto it = entry.find("session"); it != entry.end()) {
    if (!it->is_string() || it->get<std::string>().empty())
      return invalid("session must be a lease session id");
    lease.session = it->get<std::string>();
  }
  auto pid = unsigned_field(entry, "pid", std::numeric_limits<int>::max());
  if (!pid || (*pid == 0 && lease.session.empty()))
    return invalid("pid must be a positive integer");
  lease.pid = static_cast<int>(*pid);
  auto uid = unsigned_field(entry, "uid", std::numeric_limits<uint32_t>::max());
  if (!uid) return invalid("uid must be a user id");
  lease.uid = static_cast<uint32_t>(*uid);
  if (entry.contains("pid_start_ticks")) {
    auto ticks = unsigned_field(entry, "pid_start_ticks", std::numeric_limits<uint64_t>::max());
    if (!ticks) return invalid("pid_start_ticks must be a non-negative integer");
    lease.pid_start_ticks = *ticks;
  }
  if (auto it = entry.find("gpu_uuid"); it != entry.end()) {
    if (!it->is_string()) return invalid("gpu_uuid must be a string");
    lease.gpu_uuid = it->get<std::string>();
  }
  auto restores = entry.find("restores");
  if (restores == entry.end() || !restores->is_object())
    return invalid("restores must be an object");
  if (restores->contains("power_limit_mw")) {
    auto limit = unsigned_field(*restores, "power_limit_mw", std::numeric_limits<uint32_t>::max());
    if (!limit) return invalid("restores.power_limit_mw must be a limit in mW");
    lease.saved.power_limit_mw = static_cast<uint32_t>(*limit);
  }
  if (auto it = restores->find("persistence_mode"); it != restores->end()) {
    if (!it->is_boolean()) return invalid("restores.persistence_mode must be true or false");
    lease.saved.persistence_mode = it->get<bool>();
  }
  for (const auto& [key, flag] :
       {std::pair{"sm_clocks_locked", &lease.saved.sm_clocks_locked},
        std::pair{"memory_clocks_locked", &lease.saved.memory_clocks_locked}}) {
    auto it = restores->find(key);
    if (it == restores->end()) continue;
    if (!it->is_boolean())
      return invalid(std::string("restores.") + key + " must be true or false");
    *flag = it->get<bool>();
  }
  return lease;
}

// Writes all of `text` to `fd`.
bool write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

json lease_to_json(const Lease& lease) {
  json restores = json::object();
  if (lease.saved.power_limit_mw) restores["power_limit_mw"] = *lease.saved.power_limit_mw;
  if (lease.saved.persistence_mode) restores["persistence_mode"] = *lease.saved.persistence_mode;
  restores["sm_clocks_locked"] = lease.saved.sm_clocks_locked;
  restores["memory_clocks_locked"] = lease.saved.memory_clocks_locked;
  json entry{{"gpu", lease.gpu}, {"gpu_uuid", lease.gpu_uuid},
             {"pid", lease.pid}, {"pid_start_ticks", lease.pid_start_ticks},
             {"uid", lease.uid}, {"restores", restores}};
  if (!lease.session.empty()) entry["session"] = lease.session;
  return entry;
}

std::string encode_journal(const std::vector<Lease>& leases, const std::string& boot_id) {
  json entries = json::array();
  for (const Lease& lease : leases) entries.push_back(lease_to_json(lease));
  json document{
      {"format", kFormat}, {"version", kVersion}, {"boot_id", boot_id}, {"leases", entries}};
  return document.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

Result<JournalContents> decode_journal(std::string_view text) {
  const json document = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded() || !document.is_object())
    return fail(ErrorCode::kInvalidArgument, "not a JSON object");
  auto format = document.find("format");
  if (format == document.end() || !format->is_string() || *format != kFormat)
    return fail(ErrorCode::kInvalidArgument,
                "not a zeusd lease journal (no \"format\": \"" + std::string(kFormat) + "\")");
  auto version = document.find("version");
  if (version == document.end() || !version->is_number_integer() || *version != kVersion) {
    return fail(ErrorCode::kInvalidArgument,
                "journal version " + (version == document.end() ? "missing" : version->dump()) +
                    " (this zeusd reads version " + std::to_string(kVersion) + ")");
  }
  JournalContents contents;
  if (auto boot = document.find("boot_id"); boot != document.end()) {
    if (!boot->is_string()) return fail(ErrorCode::kInvalidArgument, "boot_id must be a string");
    contents.boot_id = boot->get<std::string>();
  }
  auto leases = document.find("leases");
  if (leases == document.end() || !leases->is_array())
    return fail(ErrorCode::kInvalidArgument, "leases must be an array");
  // Each lease stands alone: one that does not validate is rejected, named, and the others kept.
  // A GPU named twice (by index or by UUID) keeps its first lease.
  std::map<int, size_t> by_index;
  std::map<std::string, size_t> by_uuid;
  for (size_t i = 0; i < leases->size(); ++i) {
    const json& entry = (*leases)[i];
    auto lease = decode_lease(entry);
    if (!lease) {
      contents.rejected.push_back(lease_name(entry, i) + ": " + lease.error().message);
      continue;
    }
    const auto index = by_index.find(lease->gpu);
    const auto uuid = lease->gpu_uuid.empty() ? by_uuid.end() : by_uuid.find(lease->gpu_uuid);
    if (index != by_index.end() || uuid != by_uuid.end()) {
      const std::string gpu =
          index != by_index.end() ? "GPU " + std::to_string(lease->gpu) : "GPU " + lease->gpu_uuid;
      const size_t first = index != by_index.end() ? index->second : uuid->second;
      contents.rejected.push_back(lease_name(entry, i) + ": " + gpu + " is leased twice (lease " +
                                  std::to_string(first) + " holds it already)");
      continue;
    }
    by_index.emplace(lease->gpu, i);
    if (!lease->gpu_uuid.empty()) by_uuid.emplace(lease->gpu_uuid, i);
    contents.leases.push_back(std::move(*lease));
  }
  return contents;
}

LeaseJournal::LeaseJournal(std::string path, std::string boot_id)
    : path_(std::move(path)), boot_id_(std::move(boot_id)) {}

LeaseJournal::~LeaseJournal() {
  if (lock_fd_ >= 0) close(lock_fd_);
}

Result<void> LeaseJournal::lock() {
  if (lock_fd_ >= 0) return ok();
  const std::string lock_path = path_ + ".lock";
  const int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    return fail(ErrorCode::kUnavailable,
                "cannot open " + lock_path + ": " + errno_text() +
                    " (zeusd needs a directory only root can write for --lease-journal)");
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const bool held = errno == EWOULDBLOCK;
    const std::string why = errno_text();
    close(fd);
    return fail(ErrorCode::kUnavailable,
                held ? "another zeusd is already serving (it holds the lease journal " + path_ +
                           "); stop it first, or give this one its own --socket and "
                           "--lease-journal"
                     : "cannot lock " + lock_path + ": " + why);
  }
  lock_fd_ = fd;
  return ok();
}

Result<void> LeaseJournal::write(const std::vector<Lease>& leases) {
  const std::string text = encode_journal(leases, boot_id_);
  if (text == last_written_) return ok();
  auto failed = [&](const std::string& what) {
    return fail(ErrorCode::kUnavailable,
                "cannot record zeusd's leases in " + path_ + ": " + what +
                    " (zeusd needs a directory only root can write for --lease-journal, such as "
                    "/run/zeusd)");
  };
  const std::string temporary = path_ + ".tmp";
  // O_NOFOLLOW and a fresh file: nothing planted at the temporary path is written through.
  unlink(temporary.c_str());
  const int fd =
      open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return failed("cannot create " + temporary + ": " + errno_text());
  const bool written = write_all(fd, text) && fsync(fd) == 0;
  const std::string write_error = errno_text();
  close(fd);
  if (!written) {
    unlink(temporary.c_str());
    return failed("cannot write " + temporary + ": " + write_error);
  }
  if (rename(temporary.c_str(), path_.c_str()) != 0) {
    const std::string why = errno_text();
    unlink(temporary.c_str());
    return failed("cannot rename " + temporary + ": " + why);
  }
  // The rename itself is durable once the directory is synced.
  const int directory = open(directory_of(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (directory >= 0) {
    fsync(directory);
    close(directory);
  }
  last_written_ = text;
  return ok();
}

JournalContents LeaseJournal::read() {
  JournalContents contents;
  const int fd = open(path_.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0 && errno == ENOENT) return contents;
  std::string text;
  std::string damage;
  if (fd < 0 && errno != ELOOP) {
    // Unreadable is not damaged: the file stays where it is for a zeusd that can read it.
    contents.problem = "cannot read the lease journal " + path_ + ": " + errno_text() +
                       " (run zeusd as root); the leases it holds are not restored now";
    return contents;
  }
  if (fd < 0) {
    damage = "it is a symbolic link";
  } else {
    struct stat info {};
    if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
      damage = "it is not a regular file";
    } else if (info.st_uid != 0 && info.st_uid != geteuid()) {
      damage = "it is owned by uid " + std::to_string(info.st_uid) +
               ", not root: its leases could have been planted";
    } else if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
      damage = std::string("it is writable by ") +
               ((info.st_mode & S_IWOTH) ? "everyone" : "its group") +
               ": its leases could have been planted";
    } else if (static_cast<size_t>(info.st_size) > kMaxJournalBytes) {
      damage = "it is " + std::to_string(info.st_size) + " bytes, too large for a lease journal";
    } else {
      char buffer[65536];
      ssize_t n;
      while ((n = ::read(fd, buffer, sizeof(buffer))) > 0 && text.size() <= kMaxJournalBytes)
        text.append(buffer, static_cast<size_t>(n));
      if (n < 0) damage = "cannot read it: " + errno_text();
    }
    close(fd);
  }
  if (damage.empty()) {
    auto decoded = decode_journal(text);
    if (decoded && decoded->rejected.empty()) {
      last_written_ = text;
      return std::move(*decoded);
    }
    if (decoded) return with_rejected_leases(std::move(*decoded), text);
    damage = decoded.error().message;
  }
  // Set the damaged journal aside (kept for the operator) so that the next write starts afresh.
  const std::string aside = path_ + ".damaged-" + std::to_string(std::time(nullptr));
  contents.problem = "the lease journal " + path_ + " is damaged (" + damage + ")";
  if (rename(path_.c_str(), aside.c_str()) == 0) {
    contents.problem += "; set aside as " + aside;
  } else {
    contents.problem += "; could not set it aside (" + errno_text() + ")";
  }
  contents.problem +=
      ": the leases it held cannot be restored; check each GPU's power limit and clocks";
  return contents;
}

JournalContents LeaseJournal::with_rejected_leases(JournalContents contents,
                                                   const std::string& text) {
  // The good leases are used; the file stays until the next write() replaces it (so a crash
  // before then loses none of them), and a copy of it is kept for the operator.
  const std::string aside = path_ + ".damaged-" + std::to_string(std::time(nullptr));
  const int fd = open(aside.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  const bool copied = fd >= 0 && write_all(fd, text) && fsync(fd) == 0;
  const std::string copy_error = errno_text();
  if (fd >= 0) close(fd);
  const size_t bad = contents.rejected.size();
  const size_t good = contents.leases.size();
  std::string names;
  for (const std::string& rejected : contents.rejected)
    names += (names.empty() ? "" : "; ") + rejected;
  contents.problem =
      "the lease journal " + path_ + " has " + std::to_string(bad) +
      (bad == 1 ? " lease that cannot be used, so it is"
                : " leases that cannot be used, so they are") +
      " not restored (check the power limit and clocks of the GPU named): " + names + "; the " +
      (good == 0 ? "journal holds no other lease"
                 : "other " + std::to_string(good) + (good == 1 ? " lease is" : " leases are") +
                       " used") +
      "; " +
      (copied ? "the journal as found is kept as " + aside
              : "no copy of the journal as found could be kept (" + copy_error + ")");
  return contents;
}

}  // namespace zeus::zeusd
