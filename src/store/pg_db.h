// Small RAII layer over libpq (PostgreSQL's C API) used by PostgresStore: PgConn owns one
// connection and a cache of its prepared statements; PgRows owns one query result; PgParams holds
// a statement's parameters as text (libpq's text format), so values always travel as parameters
// ($1, $2, ...), never spliced into SQL; PgPool hands reader connections to one thread at a time.
// Errors come back as values (core/result.h), never as exceptions.
//
// Thread-safety: a PgConn belongs to one thread at a time (libpq allows that across threads);
// callers serialize access (PostgresStore's writer mutex). PgPool is thread-safe.
#pragma once

#include <libpq-fe.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/result.h"

namespace gpurent {

// Maps an SQLSTATE to an Error code: class 23 (integrity) -> kConflict (as SQLite's CONSTRAINT),
// 22 (data exception) -> kInvalid, 08/53/57/40/55P03 (connection, resources, shutdown,
// serialization, lock timeout) -> kUnavailable, anything else -> kInternal.
Code pg_code(std::string_view sqlstate);

// The connection options of `url` (a postgresql:// URL or a key=value string) without secrets,
// for messages: "host=/tmp port=5432 dbname=gpurent user=app". Empty when it does not parse.
std::string pg_describe(const std::string& url);

// A statement's parameters, numbered from $1 in the order added. Strings are sent as text; a
// string with a NUL byte cannot be (libpq strings end at NUL): the statement then fails with
// kInvalid naming the parameter instead of silently storing a shortened value.
class PgParams {
 public:
  PgParams& add(std::string_view text);
  PgParams& add(int64_t value);
  PgParams& add_bool(bool value);
  PgParams& add_null();
  // A PostgreSQL array literal ('{...}') for unnest(): texts, integers, optional integers (NULL),
  // doubles (each in its shortest text that reads back exactly), booleans.
  PgParams& add_array(const std::vector<std::string>& items);
  PgParams& add_array(const std::vector<int64_t>& items);
  PgParams& add_array(const std::vector<std::optional<int64_t>>& items);
  PgParams& add_array(const std::vector<double>& items);
  PgParams& add_array(const std::vector<bool>& items);

  int size() const { return static_cast<int>(values_.size()); }
  // Pointers into the values (nullptr for NULL), valid while this object lives unchanged.
  std::vector<const char*> pointers() const;
  // The first parameter that cannot be sent, as an error; empty when every one can.
  std::optional<Error> problem() const;

 private:
  std::vector<std::string> values_;
  std::vector<bool> null_;
  int nul_param_ = 0;  // 1-based index of the first string with a NUL byte, 0 = none
};

class PgRows;

// One row of a PgRows, read by column (0-based) like SQLite's Query: the shape the shared row
// readers take (store_rows.h). Valid while its PgRows lives.
class PgRow {
 public:
  PgRow(const PgRows& rows, int row) : rows_(&rows), row_(row) {}
  std::string text(int col) const;
  int64_t integer(int col) const;
  double real(int col) const;
  bool flag(int col) const;  // a boolean ('t') or an integer other than 0
  bool is_null(int col) const;

 private:
  const PgRows* rows_;
  int row_;
};

// The rows of one query. Rows and columns are 0-based; values are read from libpq's text format.
class PgRows {
 public:
  explicit PgRows(PGresult* res) : res_(res) {}
  int size() const { return PQntuples(res_.get()); }
  bool is_null(int row, int col) const { return PQgetisnull(res_.get(), row, col) != 0; }
  std::string text(int row, int col) const;  // NULL reads as ""
  int64_t integer(int row, int col) const;   // NULL reads as 0; bigint, int and numeric integers
  double real(int row, int col) const;       // NULL reads as 0.0
  bool boolean(int row, int col) const;      // 't' is true
  PgRow row(int i) const { return PgRow(*this, i); }
  // Every row as `read(PgRow)` gives it, in order.
  template <class F>
  auto collect(F&& read) const -> std::vector<decltype(read(std::declval<PgRow>()))> {
    std::vector<decltype(read(std::declval<PgRow>()))> out;
    out.reserve(static_cast<size_t>(size()));
    for (int i = 0; i < size(); ++i) out.push_back(read(row(i)));
    return out;
  }
  // Rows a command changed (INSERT/UPDATE/DELETE), from its command tag.
  int64_t affected() const;

 private:
  struct Clear {
    void operator()(PGresult* r) const { PQclear(r); }
  };
  std::unique_ptr<PGresult, Clear> res_;
};

class PgConn {
 public:
  // Connects to `url` and prepares the session (UTF-8, UTC, exact floats). `read_only` makes every
  // transaction of the session read-only (reader connections).
  static Result<PgConn> connect(const std::string& url, int connect_timeout_s, bool read_only);

  PgConn(PgConn&&) noexcept = default;
  PgConn& operator=(PgConn&&) noexcept = default;
  ~PgConn() = default;

  // Runs one statement with parameters through the per-connection cache of prepared statements
  // (`sql` must contain no values: those are in `params`). Errors carry the context `what`.
  Result<PgRows> query(const std::string& sql, const PgParams& params, std::string_view what);
  // query() for a command; returns the rows it changed.
  Result<int64_t> exec(const std::string& sql, const PgParams& params, std::string_view what);
  // Runs one or more parameterless statements (DDL, BEGIN/COMMIT, SAVEPOINT) in one round trip.
  Status script(const std::string& sql, std::string_view what);
  // Runs `COPY ... FROM STDIN` (`sql`, text format), sending what `fill` appends to the buffer it
  // is handed (whole rows), call after call until it returns false. An error from `fill` aborts the
  // COPY and is returned. Returns the rows copied.
  Result<int64_t> copy_in(const std::string& sql, const std::function<Result<bool>(std::string&)>& fill,
                          std::string_view what);

  // SQLSTATE and constraint name of the last failed statement ("" when it succeeded).
  const std::string& last_sqlstate() const { return sqlstate_; }
  const std::string& last_constraint() const { return constraint_; }

  // PQTRANS_IDLE, PQTRANS_INTRANS, PQTRANS_INERROR (a statement failed: only ROLLBACK [TO] works)...
  PGTransactionStatusType tx_status() const { return PQtransactionStatus(conn_.get()); }
  bool broken() const { return PQstatus(conn_.get()) != CONNECTION_OK; }
  // Reconnects a broken connection with the same options (prepared statements are forgotten).
  Status reset();

 private:
  struct Finish {
    void operator()(PGconn* c) const { PQfinish(c); }
  };
  PgConn() = default;
  Status setup();
  Error fail(const PGresult* res, std::string_view what);

  std::unique_ptr<PGconn, Finish> conn_;
  bool read_only_ = false;
  std::unordered_map<std::string, std::string> prepared_;  // sql -> statement name
  std::string sqlstate_, constraint_;
};

// Connections handed out one caller at a time, at most `size` open. A caller finding every one
// busy waits (up to wait_ms, then kUnavailable). A connection found broken after a call is closed
// with every idle one opened before it (a restarted server broke them all; those opened since are
// kept) and the call retried once on a fresh one (reads are idempotent), so a restarted server
// costs no failed read. Thread-safe.
class PgPool {
 public:
  PgPool(std::string url, int size, int connect_timeout_s, int wait_ms = 30'000)
      : url_(std::move(url)), size_(size), connect_timeout_s_(connect_timeout_s), wait_ms_(wait_ms) {}

  // Runs fn(PgConn&) on a connection no other thread is using; fn returns a Result.
  template <class F>
  auto with(F&& fn) -> decltype(fn(std::declval<PgConn&>())) {
    for (int attempt = 0;; ++attempt) {
      auto conn = acquire();
      if (!conn) return conn.error();
      auto result = fn(*conn->conn);
      const bool broken = conn->conn->broken();
      release(std::move(conn).value(), broken);
      if (result.ok() || !broken || attempt == 1) return result;
    }
  }

 private:
  struct Pooled {
    std::unique_ptr<PgConn> conn;
    uint64_t generation = 0;  // the pool's generation when it was opened
  };
  Result<Pooled> acquire();
  void release(Pooled p, bool discard);

  const std::string url_;
  const int size_;
  const int connect_timeout_s_;
  const int wait_ms_;
  std::mutex mu_;
  std::condition_variable freed_;
  std::vector<Pooled> idle_;
  int open_ = 0;              // connections out or idle
  uint64_t generation_ = 0;   // moves on when a broken connection of the current one is found
};

}  // namespace gpurent
