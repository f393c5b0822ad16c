#include "store/sqlite_db.h"

#include <utility>

namespace gpurent {

Error sqlite_error(sqlite3* db, int rc, std::string_view context) {
  Code code = Code::kInternal;
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      code = Code::kUnavailable;
      break;
    case SQLITE_CONSTRAINT:
      code = Code::kConflict;
      break;
    default:
      break;
  }
  // The connection's message describes the latest failure on it; fall back to the code's text.
  const char* detail = db != nullptr && sqlite3_extended_errcode(db) == rc ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  return Error::make(code, std::string(context) + ": " + detail);
}

// ---- Query ----

Query::Query(Query&& other) noexcept
    : db_(other.db_), stmt_(std::exchange(other.stmt_, nullptr)), bind_rc_(other.bind_rc_), rc_(other.rc_) {}

Query::~Query() {
  if (stmt_ != nullptr) {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
}

Query& Query::bind(int index, std::string_view text) {
  int rc = sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  return *this;
}

Query& Query::bind(int index, int64_t value) {
  int rc = sqlite3_bind_int64(stmt_, index, value);
  if (bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  return *this;
}

Query& Query::bind_real(int index, double value) {
  int rc = sqlite3_bind_double(stmt_, index, value);
  if (bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  return *this;
}

Query& Query::bind_null(int index) {
  int rc = sqlite3_bind_null(stmt_, index);
  if (bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  return *this;
}

Result<bool> Query::step(std::string_view what) {
  if (bind_rc_ != SQLITE_OK) {
    rc_ = bind_rc_;
    return sqlite_error(nullptr, bind_rc_, std::string(what) + " (binding parameters)");
  }
  rc_ = sqlite3_step(stmt_);
  if (rc_ == SQLITE_ROW) return true;
  if (rc_ == SQLITE_DONE) return false;
  return sqlite_error(db_->raw(), rc_, what);
}

Status Query::run(std::string_view what) {
  auto r = step(what);
  if (!r) return r.error();
  if (*r) return Error::make(Code::kInternal, std::string(what) + ": statement unexpectedly returned rows");
  return ok_status();
}

std::string Query::text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  if (p == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

int64_t Query::integer(int col) const { return sqlite3_column_int64(stmt_, col); }

double Query::real(int col) const { return sqlite3_column_double(stmt_, col); }

bool Query::is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

// ---- Db ----

Result<Db> Db::open(const std::string& path, int flags, int busy_timeout_ms) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  Db db;
  db.db_.reset(raw);  // sqlite3_open_v2 may hand back a handle even on failure; it must be closed
  if (rc != SQLITE_OK) return sqlite_error(raw, rc, "opening " + path);
  sqlite3_extended_result_codes(raw, 1);
  rc = sqlite3_busy_timeout(raw, busy_timeout_ms);
  if (rc != SQLITE_OK) return sqlite_error(raw, rc, "setting busy_timeout on " + path);
  return db;
}

Db::~Db() = default;

Status Db::exec(std::string_view sql) {
  std::string owned(sql);  // sqlite3_exec wants a NUL-terminated string
  char* msg = nullptr;
  int rc = sqlite3_exec(db_.get(), owned.c_str(), nullptr, nullptr, &msg);
  if (rc == SQLITE_OK) return ok_status();
  std::string detail = msg != nullptr ? msg : sqlite3_errstr(rc);
  sqlite3_free(msg);
  Error e = sqlite_error(nullptr, rc, "");
  e.message = "executing \"" + owned.substr(0, 60) + (owned.size() > 60 ? "...\"" : "\"") + ": " + detail;
  return e;
}

Status Db::run(const std::string& sql) {
  auto q = query(sql);
  if (!q) return q.error();
  return q->run(sql);
}

Result<std::string> Db::scalar_text(const std::string& sql) {
  auto q = query(sql);
  if (!q) return q.error();
  auto row = q->step(sql);
  if (!row) return row.error();
  if (!*row) return Error::make(Code::kInternal, sql + ": returned no row");
  return q->text(0);
}

Result<Query> Db::query(const std::string& sql) {
  auto it = cache_.find(sql);
  if (it == cache_.end()) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v3(db_.get(), sql.c_str(), static_cast<int>(sql.size() + 1),
                                SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
    if (rc != SQLITE_OK) {
      sqlite3_finalize(stmt);
      return sqlite_error(db_.get(), rc, "preparing \"" + sql + "\"");
    }
    it = cache_.emplace(sql, std::unique_ptr<sqlite3_stmt, Finalizer>(stmt)).first;
  }
  return Query(*this, it->second.get());
}

int64_t Db::changes() const { return sqlite3_changes64(db_.get()); }

bool Db::in_transaction() const { return sqlite3_get_autocommit(db_.get()) == 0; }

}  // namespace gpurent
