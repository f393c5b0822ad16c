// SqliteStore: the embedded Store. One writer connection (guarded by a mutex, used by write())
// and a pool of read-only connections for reads from any thread. The file is in WAL mode, so
// readers see the last committed state and never wait for the writer.
#include <filesystem>
#include <mutex>
#include <utility>
#include <vector>

#include "store/backend_store.h"
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
    if (db.in_transaction()) return;  // a read left open would pin an old snapshot: closed instead
    std::lock_guard lock(mu_);
    if (idle_.size() < kMaxIdle) idle_.push_back(std::move(db));
  }

  const std::string path_;
  const int busy_timeout_ms_;
  std::mutex mu_;
  std::vector<Db> idle_;
};

// The guard of the StoreTx handed to a write() callback (it lives on write()'s stack: valid only
// during the callback). Operations run only while SQLite still has the transaction open: some
// errors (disk full, I/O) make SQLite roll back on its own, and statements run after that would
// otherwise autocommit one by one outside the transaction.
class SqliteTxGuard {
 public:
  explicit SqliteTxGuard(Db& db) : db_(db) {}
  // Whether the transaction is still open; false once SQLite rolled it back by itself.
  bool intact() const { return db_.in_transaction(); }

  template <class F>
  auto op(bool /*writes*/, F&& fn) -> decltype(fn(std::declval<Db&>())) {
    if (!intact()) return Error::make(Code::kInternal, "the transaction was rolled back after an earlier error");
    return fn(db_);
  }

 private:
  Db& db_;
};

class SqliteStore final : public PooledReads<SqliteStore> {
 public:
  SqliteStore(Db writer, std::string path, int busy_timeout_ms, int version)
      : writer_(std::move(writer)), readers_(std::move(path), busy_timeout_ms), version_(version) {}

  Status write(const std::function<Status(StoreTx&)>& fn) override {
    return slot_.run([&]() -> Status {
      if (writer_.in_transaction()) rollback();  // left open by a failed ROLLBACK earlier
      if (auto s = writer_.run("BEGIN IMMEDIATE"); !s) return s;
      SqliteTxGuard guard(writer_);
      GuardedTx<SqliteTxGuard> tx(guard);
      if (auto s = run_write_callback(fn, tx, [this] { rollback(); }); !s) return s;
      if (!guard.intact())
        return Error::make(Code::kInternal, "write() not committed: the transaction was rolled back after an error");
      if (auto s = writer_.run("COMMIT"); !s) {
        rollback();
        return s;
      }
      return ok_status();
    });
  }

  int schema_version() override { return version_; }
  ReaderPool& readers() { return readers_; }

 private:
  void rollback() {
    if (writer_.in_transaction()) (void)writer_.run("ROLLBACK");
  }

  // writer_ is declared first so that it closes last, after the readers.
  Db writer_;
  WriterSlot slot_;
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
