// PostgresStore: the Store on a PostgreSQL server. One writer connection (guarded by a mutex, used
// by write()) and a pool of read-only connections for reads from any thread; every read is one
// statement, so it sees the last committed state (READ COMMITTED) and never waits for the writer.
//
// PostgreSQL aborts a whole transaction at the first failed statement, where SQLite fails only
// that statement. A write() callback may try an operation, see it fail (a taken name) and go on,
// so every StoreTx operation runs behind a savepoint: a failed operation is rolled back to it
// and the transaction stays usable, with all of that operation's statements undone (on SQLite the
// statements of a multi-statement operation that ran before the failing one stay in the
// transaction; the callback's error then rolls everything back on both).
#include <atomic>
#include <mutex>
#include <thread>
#include <utility>

#include "store/pg_queries.h"
#include "store/store.h"

namespace gpurent {
namespace {

// The StoreTx handed to a write() callback; lives on write()'s stack. The savepoint "op" marks the
// state after the last operation that succeeded and wrote something: it is moved forward (one
// round trip) before the next operation, and a failed operation rolls back to it.
class PgTx final : public StoreTx {
 public:
  explicit PgTx(PgConn& db) : db_(db) {}
  // Whether the transaction is still open and usable.
  bool intact() const { return !lost_ && db_.tx_status() == PQTRANS_INTRANS; }

  Status insert(const Record& r) override {
    return op(true, [&] { return pg_insert_object(db_, r); });
  }
  Status update(const Record& r) override {
    return op(true, [&] { return pg_update_object(db_, r); });
  }
  Status remove(const std::string& kind, const std::string& id) override {
    return op(true, [&] { return pg_remove_object(db_, kind, id); });
  }
  Result<Record> get(const std::string& kind, const std::string& id) override {
    return op(false, [&] { return pg_get_object(db_, kind, id); });
  }
  Result<Page> list(const ListQuery& q) override {
    return op(false, [&] { return pg_list_objects(db_, q); });
  }
  Result<int64_t> count(const std::string& kind, const std::map<std::string, std::string>& eq) override {
    return op(false, [&] { return pg_count_objects(db_, kind, eq); });
  }
  Status insert_token(const TokenRow& t) override {
    return op(true, [&] { return pg_insert_token(db_, t); });
  }
  Status revoke_token(const std::string& id) override {
    return op(true, [&] { return pg_revoke_token(db_, id); });
  }
  Result<std::vector<TokenRow>> list_tokens(const std::map<std::string, std::string>& eq) override {
    return op(false, [&] { return pg_list_tokens(db_, eq); });
  }
  Status revoke_user_tokens(const std::string& user_id) override {
    return op(true, [&] { return pg_revoke_user_tokens(db_, user_id); });
  }
  Status append_job_event(const JobEvent& e) override {
    return op(true, [&] { return pg_append_job_event(db_, e); });
  }
  Status append_audit(const AuditEntry& a) override {
    return op(true, [&] { return pg_append_audit(db_, a); });
  }
  Result<UsageIngestOutcome> insert_usage_batch(const UsageBatchRows& b) override {
    return op(true, [&] { return pg_insert_usage_batch(db_, b); });
  }
  Result<UsageRollupStats> roll_up_usage(TimeMs raw_before, TimeMs keys_before) override {
    return op(true, [&] { return pg_roll_up_usage(db_, raw_before, keys_before); });
  }
  Status insert_job_metrics(const std::vector<JobMetricRow>& rows) override {
    return op(true, [&] { return pg_insert_job_metrics(db_, rows); });
  }

 private:
  template <class F>
  auto op(bool writes, F&& fn) -> decltype(fn()) {
    if (!intact()) return Error::make(Code::kInternal, "the transaction was lost after an earlier error");
    if (moved_on_) {
      if (auto s = db_.script("RELEASE SAVEPOINT op; SAVEPOINT op", "setting a savepoint"); !s) {
        lost_ = true;
        return s.error();
      }
      moved_on_ = false;
    }
    auto result = fn();
    if (result.ok()) {
      moved_on_ = moved_on_ || writes;
    } else if (writes || db_.tx_status() == PQTRANS_INERROR) {
      if (!db_.script("ROLLBACK TO SAVEPOINT op", "undoing a failed operation")) lost_ = true;
    }
    return result;
  }

  PgConn& db_;
  bool moved_on_ = false;  // an operation wrote since the savepoint was set
  bool lost_ = false;      // a savepoint command failed: the connection is gone or confused
};

class PostgresStore final : public Store {
 public:
  PostgresStore(PgConn writer, const PostgresOptions& opts, int version)
      : writer_(std::move(writer)), readers_(opts.url, opts.readers, opts.connect_timeout_s), version_(version) {}

  Status write(const std::function<Status(StoreTx&)>& fn) override {
    // A nested write() from the callback would deadlock on writer_mu_; refuse it instead.
    if (writer_thread_.load() == std::this_thread::get_id())
      return Error::make(Code::kInternal, "Store::write() called from inside a write() callback");
    std::lock_guard lock(writer_mu_);
    writer_thread_.store(std::this_thread::get_id());
    struct ClearOwner {
      std::atomic<std::thread::id>& owner;
      ~ClearOwner() { owner.store(std::thread::id()); }
    } clear_owner{writer_thread_};

    if (writer_.broken()) {  // the server restarted or the network dropped since the last write
      if (auto s = writer_.reset(); !s) return s;
    }
    if (writer_.tx_status() != PQTRANS_IDLE) rollback();  // left open by a failed ROLLBACK earlier
    Status begun = writer_.script("BEGIN; SAVEPOINT op", "starting a write");
    if (!begun && writer_.broken()) {  // dropped while idle (libpq learns it on use): nothing ran yet
      if (auto s = writer_.reset(); !s) return s;
      begun = writer_.script("BEGIN; SAVEPOINT op", "starting a write");
    }
    if (!begun) return begun;
    PgTx tx(writer_);
    Status result = ok_status();
    try {
      result = fn(tx);
    } catch (...) {
      rollback();
      throw;
    }
    if (!result) {
      rollback();
      return result;
    }
    if (!tx.intact()) {
      rollback();
      return Error::make(Code::kInternal, "write() not committed: the transaction was lost after an error");
    }
    if (auto s = writer_.script("COMMIT", "committing"); !s) {
      Error e = s.error();
      if (writer_.broken()) e.message += " (the connection was lost: whether the write was committed is unknown)";
      rollback();
      return e;
    }
    return ok_status();
  }

  Result<Record> get(const std::string& kind, const std::string& id) override {
    return readers_.with([&](PgConn& db) { return pg_get_object(db, kind, id); });
  }
  Result<Page> list(const ListQuery& q) override {
    return readers_.with([&](PgConn& db) { return pg_list_objects(db, q); });
  }
  Result<int64_t> count(const std::string& kind, const std::map<std::string, std::string>& eq) override {
    return readers_.with([&](PgConn& db) { return pg_count_objects(db, kind, eq); });
  }
  // A failed lookup reads as "no such token": the caller answers 401 rather than serving the request.
  std::optional<TokenRow> token_by_hash(const std::string& secret_hash) override {
    auto r = readers_.with([&](PgConn& db) { return pg_find_token_by_hash(db, secret_hash); });
    if (!r) return std::nullopt;
    return std::move(r).value();
  }
  Result<std::vector<TokenRow>> tokens(const std::map<std::string, std::string>& eq) override {
    return readers_.with([&](PgConn& db) { return pg_list_tokens(db, eq); });
  }
  Result<std::vector<JobEvent>> job_events(const std::string& job_id) override {
    return readers_.with([&](PgConn& db) { return pg_list_job_events(db, job_id); });
  }
  Result<std::vector<AuditEntry>> audit(const std::string& kind, int limit) override {
    return readers_.with([&](PgConn& db) { return pg_list_audit(db, kind, limit); });
  }
  Result<std::vector<GpuUsagePoint>> gpu_usage(const std::string& node_id, int64_t gpu, TimeMs from, TimeMs to,
                                               int limit) override {
    return readers_.with([&](PgConn& db) { return pg_gpu_usage(db, node_id, gpu, from, to, limit); });
  }
  Result<std::vector<JobUsagePoint>> job_usage(const std::string& job_id, TimeMs from, TimeMs to, int limit) override {
    return readers_.with([&](PgConn& db) { return pg_job_usage(db, job_id, from, to, limit); });
  }
  Result<std::vector<std::pair<std::string, JobUsagePoint>>> tenant_job_usage(const std::string& tenant_id, TimeMs from,
                                                                              TimeMs to, int limit) override {
    return readers_.with([&](PgConn& db) { return pg_tenant_job_usage(db, tenant_id, from, to, limit); });
  }
  Result<std::vector<JobUsageTotals>> job_usage_totals(const JobUsageFilter& f) override {
    return readers_.with([&](PgConn& db) { return pg_job_usage_totals(db, f); });
  }
  Result<std::vector<JobMetricRow>> job_metrics(const JobMetricFilter& f) override {
    return readers_.with([&](PgConn& db) { return pg_job_metrics(db, f); });
  }
  Result<std::vector<GpuBucket>> gpu_usage_buckets(const GpuBucketQuery& q) override {
    return readers_.with([&](PgConn& db) { return pg_gpu_usage_buckets(db, q); });
  }
  int schema_version() override { return version_; }
  bool healthy() override { return read_version().ok(); }

  // The schema version as a reader connection sees it.
  Result<int> read_version() {
    return readers_.with([](PgConn& db) { return pg_applied_schema_version(db); });
  }

 private:
  void rollback() {
    if (writer_.tx_status() != PQTRANS_IDLE) (void)writer_.script("ROLLBACK", "rolling back");
  }

  PgConn writer_;
  std::mutex writer_mu_;
  std::atomic<std::thread::id> writer_thread_{};
  PgPool readers_;
  const int version_;
};

Status check_options(const PostgresOptions& opts) {
  if (opts.url.empty()) return Error::invalid("url", "is required");
  if (const auto scheme = opts.url.find("://"); scheme != std::string::npos) {
    const std::string name = opts.url.substr(0, scheme);
    if (name != "postgresql" && name != "postgres")
      return Error::invalid("url",
                            "must be a postgresql:// URL or a libpq key=value string (got the scheme '" + name + "')");
  }
  char* err = nullptr;
  PQconninfoOption* parsed = PQconninfoParse(opts.url.c_str(), &err);
  if (parsed == nullptr) {
    std::string why = err != nullptr ? err : "cannot be parsed";
    if (err != nullptr) PQfreemem(err);
    while (!why.empty() && why.back() == '\n') why.pop_back();
    return Error::invalid("url", "is not a PostgreSQL connection string: " + why);
  }
  PQconninfoFree(parsed);
  if (opts.readers < 1 || opts.readers > 64)
    return Error::invalid("readers", "must be between 1 and 64 (got " + std::to_string(opts.readers) + ")");
  if (opts.connect_timeout_s < 1 || opts.connect_timeout_s > 3600)
    return Error::invalid("connect_timeout_s",
                          "must be between 1 and 3600 (got " + std::to_string(opts.connect_timeout_s) + ")");
  return ok_status();
}

}  // namespace

Result<std::unique_ptr<Store>> open_postgres_store(const PostgresOptions& opts) {
  if (auto s = check_options(opts); !s) return s.error();
  auto writer = PgConn::connect(opts.url, opts.connect_timeout_s, /*read_only=*/false);
  if (!writer) return writer.error();
  auto version = pg_apply_migrations(*writer, postgres_migrations(), SystemClock().now());
  if (!version) {
    Error e = version.error();
    e.message = pg_describe(opts.url) + ": " + e.message;
    return e;
  }
  auto store = std::make_unique<PostgresStore>(std::move(writer).value(), opts, *version);
  // Fail now, not on the first request, if reader connections cannot be opened.
  if (auto r = store->read_version(); !r) {
    Error e = r.error();
    e.message = pg_describe(opts.url) + ": " + e.message;
    return e;
  }
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace gpurent
