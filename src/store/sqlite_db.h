// Small RAII layer over the SQLite C API used by SqliteStore: Db owns one connection (sqlite3*)
// and a cache of its prepared statements; Query is one use of a cached statement (bind, step,
// read columns) that resets the statement when it goes out of scope. Errors come back as values
// (core/result.h), never as exceptions.
//
// Thread-safety: a Db and its Queries belong to one thread at a time (connections are opened
// with SQLITE_OPEN_NOMUTEX); callers serialize access (SqliteStore's writer mutex, reader pool).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/result.h"

namespace gpurent {

// Maps a SQLite result code to an Error: BUSY/LOCKED -> kUnavailable, CONSTRAINT -> kConflict,
// anything else -> kInternal. The message is "<context>: <sqlite message>".
Error sqlite_error(sqlite3* db, int rc, std::string_view context);

class Db;

// One execution of a prepared statement. Bind parameters are 1-based, columns 0-based.
// Bind failures are remembered and reported by the next step().
class Query {
 public:
  Query(Db& db, sqlite3_stmt* stmt) : db_(&db), stmt_(stmt) {}
  Query(Query&& other) noexcept;
  Query& operator=(Query&&) = delete;
  ~Query();

  Query& bind(int index, std::string_view text);
  Query& bind(int index, int64_t value);
  Query& bind_null(int index);
  // REAL values (job metrics). Named, not a bind() overload: an int argument would be ambiguous.
  Query& bind_real(int index, double value);

  // true: a row is available; false: the statement finished. Errors carry the context `what`.
  Result<bool> step(std::string_view what);
  // Steps a statement that returns no rows (INSERT/UPDATE/DELETE).
  Status run(std::string_view what);
  // Extended result code of the last step (e.g. SQLITE_CONSTRAINT_UNIQUE).
  int rc() const { return rc_; }

  std::string text(int col) const;  // NULL reads as ""
  int64_t integer(int col) const;   // NULL reads as 0
  double real(int col) const;       // NULL reads as 0.0
  // Booleans are stored as 0/1.
  bool flag(int col) const { return integer(col) != 0; }
  bool is_null(int col) const;
  // Steps through every row, each as `read(*this)` gives it, in order; errors carry `what`.
  template <class F>
  auto collect(std::string_view what, F&& read) -> Result<std::vector<decltype(read(*this))>> {
    std::vector<decltype(read(*this))> out;
    for (;;) {
      auto more = step(what);
      if (!more) return more.error();
      if (!*more) return out;
      out.push_back(read(*this));
    }
  }

 private:
  Db* db_;
  sqlite3_stmt* stmt_;  // owned by db_'s cache; nullptr once moved from
  int bind_rc_ = SQLITE_OK;
  int rc_ = SQLITE_OK;
};

class Db {
 public:
  // Opens `path` with the given sqlite3_open_v2 flags (SQLITE_OPEN_NOMUTEX is added), turns on
  // extended result codes and sets the busy timeout.
  static Result<Db> open(const std::string& path, int flags, int busy_timeout_ms);

  Db(Db&&) noexcept = default;
  Db& operator=(Db&&) noexcept = default;
  ~Db();

  // Runs one or more statements that take no parameters (DDL, PRAGMA, BEGIN/COMMIT).
  Status exec(std::string_view sql);
  // Runs one parameterless statement through the statement cache (BEGIN/COMMIT on hot paths).
  Status run(const std::string& sql);
  // Runs a statement returning one text value (e.g. "PRAGMA journal_mode=WAL").
  Result<std::string> scalar_text(const std::string& sql);
  // A Query over the statement compiled from `sql`, prepared once per connection and cached.
  // `sql` must contain no values: those are bound. At most one live Query per statement text
  // (a second would share, and reset, the same compiled statement).
  Result<Query> query(const std::string& sql);
  // Rows changed by the last INSERT/UPDATE/DELETE on this connection.
  int64_t changes() const;
  bool in_transaction() const;
  sqlite3* raw() const { return db_.get(); }

 private:
  struct Closer {
    // close_v2 defers the close until every statement is finalized, whatever the order.
    void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
  };
  struct Finalizer {
    void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
  };
  Db() = default;

  // Declared in this order so statements are finalized before the connection closes.
  std::unique_ptr<sqlite3, Closer> db_;
  std::unordered_map<std::string, std::unique_ptr<sqlite3_stmt, Finalizer>> cache_;
};

}  // namespace gpurent
