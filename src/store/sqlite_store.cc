// SqliteStore: the embedded Store. One writer connection (guarded by a mutex, used by write())
// and a pool of read-only connections for reads from any thread. The file is in WAL mode, so
// readers see the last committed state and never wait for the writer.
#include <atomic>
#include <filesystem>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "store/migrations.h"
#include "store/sqlite_queries.h"
#include "store/sqlite_usage.h"
#include "store/store.h"

namespace gpurent {
namespace {

// Read-only connections handed out one caller at a time. Opens a new one when none is idle, keeps
// at most kMaxIdle for reuse. Thread-safe.
class ReaderPool {
 public:
  ReaderPool(std::string path, int busy_timeout_ms) : path_(std::move(path)), busy_timeout_ms_(busy_timeout_ms) {}

  // Runs fn(Db&) on a connection no other thread is using; fn returns a Result.
  template <class F>
  auto with(F&& fn) -> decltype(fn(std::declval<Db&>())) {
    auto db = acquire();
    if (!db) return db.error();
    auto result = fn(*db);
    release(std::move(db).value());
    return result;
  }

 private:
  static constexpr size_t kMaxIdle = 8;

  Result<Db> acquire() {
    {
      std::lock_guard lock(mu_);
      if (!idle_.empty()) {
        Db db = std::move(idle_.back());
        idle_.pop_back();
        return db;
      }
    }
    return Db::open(path_, SQLITE_OPEN_READONLY, busy_timeout_ms_);
  }

  void release(Db db) {
    std::lock_guard lock(mu_);
    if (idle_.size() < kMaxIdle) idle_.push_back(std::move(db));
  }

  const std::string path_;
  const int busy_timeout_ms_;
  std::mutex mu_;
  std::vector<Db> idle_;
};

// The StoreTx handed to a write() callback (it lives on write()'s stack: valid only during the
// callback). Operations run only while SQLite still has the transaction open: some errors (disk
// full, I/O) make SQLite roll back on its own, and statements run after that would otherwise
// autocommit one by one outside the transaction.
class SqliteTx final : public StoreTx {
 public:
  explicit SqliteTx(Db& db) : db_(db) {}
  // Whether the transaction is still open; false once SQLite rolled it back by itself.
  bool intact() const { return db_.in_transaction(); }

  Status insert(const Record& r) override { return guarded([&] { return insert_object(db_, r); }); }
  Status update(const Record& r) override { return guarded([&] { return update_object(db_, r); }); }
  Status remove(const std::string& kind, const std::string& id) override {
    return guarded([&] { return remove_object(db_, kind, id); });
  }
  Result<Record> get(const std::string& kind, const std::string& id) override {
    return guarded([&] { return get_object(db_, kind, id); });
  }
  Result<Page> list(const ListQuery& q) override { return guarded([&] { return list_objects(db_, q); }); }
  Result<int64_t> count(const std::string& kind, const std::map<std::string, std::string>& eq) override {
    return guarded([&] { return count_objects(db_, kind, eq); });
  }
  Status insert_token(const TokenRow& t) override { return guarded([&] { return gpurent::insert_token(db_, t); }); }
  Status revoke_token(const std::string& id) override {
    return guarded([&] { return gpurent::revoke_token(db_, id); });
  }
  Result<std::vector<TokenRow>> list_tokens(const std::map<std::string, std::string>& eq) override {
    return guarded([&] { return gpurent::list_tokens(db_, eq); });
  }
  Status revoke_user_tokens(const std::string& user_id) override {
    return guarded([&] { return gpurent::revoke_user_tokens(db_, user_id); });
  }
  Status append_job_event(const JobEvent& e) override {
    return guarded([&] { return gpurent::append_job_event(db_, e); });
  }
  Status append_audit(const AuditEntry& a) override {
    return guarded([&] { return gpurent::append_audit(db_, a); });
  }
  Result<UsageIngestOutcome> insert_usage_batch(const UsageBatchRows& b) override {
    return guarded([&] { return gpurent::insert_usage_batch(db_, b); });
  }
  Result<UsageRollupStats> roll_up_usage(TimeMs raw_before, TimeMs keys_before) override {
    return guarded([&] { return gpurent::roll_up_usage(db_, raw_before, keys_before); });
  }
  Status insert_job_metrics(const std::vector<JobMetricRow>& rows) override {
    return guarded([&] { return gpurent::insert_job_metrics(db_, rows); });
  }

 private:
  template <class F>
  auto guarded(F&& fn) -> decltype(fn()) {
    if (!intact()) return Error::make(Code::kInternal, "the transaction was rolled back after an earlier error");
    return fn();
  }

  Db& db_;
};

class SqliteStore final : public Store {
 public:
  SqliteStore(Db writer, std::string path, int busy_timeout_ms, int version)
      : writer_(std::move(writer)), readers_(std::move(path), busy_timeout_ms), version_(version) {}

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

    if (writer_.in_transaction()) rollback();  // left open by a failed ROLLBACK earlier
    if (auto s = writer_.run("BEGIN IMMEDIATE"); !s) return s;
    SqliteTx tx(writer_);
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
    if (!tx.intact())
      return Error::make(Code::kInternal, "write() not committed: the transaction was rolled back after an error");
    if (auto s = writer_.run("COMMIT"); !s) {
      rollback();
      return s;
    }
    return ok_status();
  }

  Result<Record> get(const std::string& kind, const std::string& id) override {
    return readers_.with([&](Db& db) { return get_object(db, kind, id); });
  }
  Result<Page> list(const ListQuery& q) override {
    return readers_.with([&](Db& db) { return list_objects(db, q); });
  }
  Result<int64_t> count(const std::string& kind, const std::map<std::string, std::string>& eq) override {
    return readers_.with([&](Db& db) { return count_objects(db, kind, eq); });
  }
  // A failed lookup reads as "no such token": the caller answers 401 rather than serving the request.
  std::optional<TokenRow> token_by_hash(const std::string& secret_hash) override {
    auto r = readers_.with([&](Db& db) { return find_token_by_hash(db, secret_hash); });
    if (!r) return std::nullopt;
    return std::move(r).value();
  }
  Result<std::vector<TokenRow>> tokens(const std::map<std::string, std::string>& eq) override {
    return readers_.with([&](Db& db) { return list_tokens(db, eq); });
  }
  Result<std::vector<JobEvent>> job_events(const std::string& job_id) override {
    return readers_.with([&](Db& db) { return list_job_events(db, job_id); });
  }
  Result<std::vector<AuditEntry>> audit(const std::string& kind, int limit) override {
    return readers_.with([&](Db& db) { return list_audit(db, kind, limit); });
  }
  Result<std::vector<GpuUsagePoint>> gpu_usage(const std::string& node_id, int64_t gpu, TimeMs from, TimeMs to,
                                               int limit) override {
    return readers_.with([&](Db& db) { return query_gpu_usage(db, node_id, gpu, from, to, limit); });
  }
  Result<std::vector<JobUsagePoint>> job_usage(const std::string& job_id, TimeMs from, TimeMs to,
                                               int limit) override {
    return readers_.with([&](Db& db) { return query_job_usage(db, job_id, from, to, limit); });
  }
  Result<std::vector<std::pair<std::string, JobUsagePoint>>> tenant_job_usage(const std::string& tenant_id, TimeMs from,
                                                                             TimeMs to, int limit) override {
    return readers_.with([&](Db& db) { return query_tenant_job_usage(db, tenant_id, from, to, limit); });
  }
  Result<std::vector<JobUsageTotals>> job_usage_totals(const JobUsageFilter& f) override {
    return readers_.with([&](Db& db) { return query_job_usage_totals(db, f); });
  }
  Result<std::vector<JobMetricRow>> job_metrics(const JobMetricFilter& f) override {
    return readers_.with([&](Db& db) { return query_job_metrics(db, f); });
  }
  Result<std::vector<GpuBucket>> gpu_usage_buckets(const GpuBucketQuery& q) override {
    return readers_.with([&](Db& db) { return query_gpu_usage_buckets(db, q); });
  }
  int schema_version() override { return version_; }
  bool healthy() override { return read_version().ok(); }

  // The schema version as a reader connection sees it.
  Result<int> read_version() {
    return readers_.with([](Db& db) { return applied_schema_version(db); });
  }

 private:
  void rollback() {
    if (writer_.in_transaction()) (void)writer_.run("ROLLBACK");
  }

  // writer_ is declared first so that it closes last, after the readers.
  Db writer_;
  std::mutex writer_mu_;
  std::atomic<std::thread::id> writer_thread_{};
  ReaderPool readers_;
  const int version_;
};

Status check_options(const SqliteOptions& opts) {
  if (opts.path.empty()) return Error::invalid("path", "is required");
  if (opts.path == ":memory:" || opts.path.starts_with("file:"))
    return Error::invalid("path", "must be a file path (readers use their own connections to the file)");
  if (opts.busy_timeout_ms < 0)
    return Error::invalid("busy_timeout_ms", "must be at least 0 (got " + std::to_string(opts.busy_timeout_ms) + ")");
  std::filesystem::path dir = std::filesystem::path(opts.path).parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return Error::invalid("path", "directory '" + dir.string() + "' does not exist");
  return ok_status();
}

}  // namespace

Result<std::unique_ptr<Store>> open_sqlite_store(const SqliteOptions& opts) {
  if (auto s = check_options(opts); !s) return s.error();
  auto writer = Db::open(opts.path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, opts.busy_timeout_ms);
  if (!writer) return writer.error();
  // WAL: readers never block the writer nor the writer them; survives a crash at any point.
  auto mode = writer->scalar_text("PRAGMA journal_mode=WAL");
  if (!mode) return mode.error();
  if (*mode != "wal")
    return Error::make(Code::kInternal, opts.path + ": could not switch to WAL journal mode (got '" + *mode + "')");
  // FULL fsyncs the WAL on every commit (durable on power loss); NORMAL only at checkpoints
  // (durable on process crash, may lose the last commits on power loss).
  if (auto s = writer->exec(opts.synchronous_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL"); !s)
    return s.error();
  if (auto s = writer->exec("PRAGMA foreign_keys=ON"); !s) return s.error();
  auto version = apply_migrations(*writer, sqlite_migrations(), SystemClock().now());
  if (!version) {
    Error e = version.error();
    e.message = opts.path + ": " + e.message;
    return e;
  }
  auto store = std::make_unique<SqliteStore>(std::move(writer).value(), opts.path, opts.busy_timeout_ms, *version);
  // Fail now, not on the first request, if read-only connections cannot be opened.
  if (auto r = store->read_version(); !r) {
    Error e = r.error();
    e.message = opts.path + ": " + e.message;
    return e;
  }
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace gpurent
