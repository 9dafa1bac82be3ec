// PostgresTransaction: one Store transaction's reads and writes over a libpqxx transaction, with
// the prepared statements they use (store-internal; the Store itself is postgres_store.cc).
//
// Database errors become Results and are remembered (the PostgreSQL transaction is then aborted),
// with whether running the work again may succeed (serialization failure, deadlock: kRetry; a
// lost connection: kReconnect). wrote() tells a group commit whether a caller's failed work left
// writes behind.
// Thread-safety: one thread at a time, like the pqxx transaction it wraps.
#pragma once

#include <optional>
#include <pqxx/pqxx>
#include <string>

#include "zeus/bso_store.h"

namespace zeus::store {

// Registers the statements below on a new connection.
void prepare_statements(pqxx::connection& c);

bool is_retryable(const std::string& sqlstate);

// Why a transaction attempt ended without committing.
enum class Abort { kNone, kRetry, kReconnect };

class PostgresTransaction final : public StoreTransaction {
 public:
  explicit PostgresTransaction(pqxx::transaction_base& tx) : tx_(tx) {}

  Result<std::optional<JobRecord>> get_job(std::string_view job_id) override;
  Result<std::vector<std::string>> list_jobs() override;
  Result<void> put_job(const JobRecord& job) override;
  Result<bool> delete_job(std::string_view job_id) override;
  Result<std::vector<Trial>> get_trials(std::string_view job_id) override;
  Result<void> put_trial(const Trial& t) override;
  // One query (the job LEFT JOIN its trials) instead of two.
  Result<std::optional<std::pair<JobRecord, std::vector<Trial>>>> get_job_with_trials(
      std::string_view job_id) override;

  // Set when a statement failed in a way that transact handles by running fn again.
  Abort abort() const { return abort_; }
  // The first database error of this transaction, if any (fn may have swallowed it).
  const std::optional<Error>& database_error() const { return database_error_; }
  bool wrote() const { return wrote_; }

 private:
  template <typename F>
  auto guard(const std::string& doing, F&& body) -> decltype(body());
  void writing() { wrote_ = true; }
  tl::unexpected<Error> remember(ErrorCode code, const std::string& doing, const char* what);

  pqxx::transaction_base& tx_;
  bool wrote_ = false;
  Abort abort_ = Abort::kNone;
  std::optional<Error> database_error_;
};

}  // namespace zeus::store
