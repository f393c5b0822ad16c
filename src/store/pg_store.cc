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
#include <utility>

#include "store/backend_store.h"
#include "store/pg_queries.h"
#include "store/store.h"

namespace gpurent {
namespace {

// The guard of the StoreTx handed to a write() callback; lives on write()'s stack. The savepoint
// "op" marks the state after the last operation that succeeded and wrote something: it is moved
// forward (one round trip) before the next operation, and a failed operation rolls back to it.
class PgTxGuard {
 public:
  explicit PgTxGuard(PgConn& db) : db_(db) {}
  // Whether the transaction is still open and usable.
  bool intact() const { return !lost_ && db_.tx_status() == PQTRANS_INTRANS; }

  template <class F>
  auto op(bool writes, F&& fn) -> decltype(fn(std::declval<PgConn&>())) {
    if (!intact()) return Error::make(Code::kInternal, "the transaction was lost after an earlier error");
    if (moved_on_) {
      if (auto s = db_.script("RELEASE SAVEPOINT op; SAVEPOINT op", "setting a savepoint"); !s) {
        lost_ = true;
        return s.error();
      }
      moved_on_ = false;
    }
    auto result = fn(db_);
    if (result.ok()) {
      moved_on_ = moved_on_ || writes;
    } else if (writes || db_.tx_status() == PQTRANS_INERROR) {
      if (!db_.script("ROLLBACK TO SAVEPOINT op", "undoing a failed operation")) lost_ = true;
    }
    return result;
  }

 private:
  PgConn& db_;
  bool moved_on_ = false;  // an operation wrote since the savepoint was set
  bool lost_ = false;      // a savepoint command failed: the connection is gone or confused
};

class PostgresStore final : public PooledReads<PostgresStore> {
 public:
  PostgresStore(PgConn writer, const PostgresOptions& opts, int version)
      : writer_(std::move(writer)), readers_(opts.url, opts.readers, opts.connect_timeout_s), version_(version) {}

  Status write(const std::function<Status(StoreTx&)>& fn) override {
    return slot_.run([&]() -> Status {
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
      PgTxGuard guard(writer_);
      GuardedTx<PgTxGuard> tx(guard);
      if (auto s = run_write_callback(fn, tx, [this] { rollback(); }); !s) return s;
      if (!guard.intact()) {
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
    });
  }

  int schema_version() override { return version_; }
  PgPool& readers() { return readers_; }

 private:
  void rollback() {
    if (writer_.tx_status() != PQTRANS_IDLE) (void)writer_.script("ROLLBACK", "rolling back");
  }

  PgConn writer_;
  WriterSlot slot_;
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
  auto version = apply_migrations(*writer, postgres_migrations(), SystemClock().now());
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
