#include "store/pg_db.h"

#include <charconv>
#include <chrono>
#include <cstring>
#include <utility>

namespace gpurent {
namespace {

// libpq prints notices (NOTICE, WARNING) to stderr by default; the store reports errors as values.
void ignore_notice(void*, const char*) {}

std::string trimmed(const char* s) {
  std::string out = s != nullptr ? s : "";
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

void append_quoted(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
}

}  // namespace

Code pg_code(std::string_view sqlstate) {
  if (sqlstate.starts_with("23")) return Code::kConflict;
  if (sqlstate.starts_with("22")) return Code::kInvalid;
  if (sqlstate.starts_with("08") || sqlstate.starts_with("53") || sqlstate.starts_with("57") ||
      sqlstate.starts_with("40") || sqlstate == "55P03")
    return Code::kUnavailable;
  return Code::kInternal;
}

std::string pg_describe(const std::string& url) {
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(url.c_str(), &err);
  if (err != nullptr) PQfreemem(err);
  if (opts == nullptr) return {};
  constexpr const char* kShown[] = {"host", "hostaddr", "port", "dbname", "user"};  // never the password
  std::string out;
  for (const char* key : kShown) {
    for (PQconninfoOption* o = opts; o->keyword != nullptr; ++o) {
      if (std::string_view(o->keyword) != key || o->val == nullptr || *o->val == '\0') continue;
      if (!out.empty()) out += ' ';
      out += std::string(key) + "=" + o->val;
    }
  }
  PQconninfoFree(opts);
  return out;
}

// ---- PgParams ----

PgParams& PgParams::add(std::string_view text) {
  if (nul_param_ == 0 && text.find('\0') != std::string_view::npos) nul_param_ = size() + 1;
  values_.emplace_back(text);
  null_.push_back(false);
  return *this;
}

PgParams& PgParams::add(int64_t value) {
  values_.push_back(std::to_string(value));
  null_.push_back(false);
  return *this;
}

PgParams& PgParams::add_bool(bool value) {
  values_.emplace_back(value ? "t" : "f");
  null_.push_back(false);
  return *this;
}

PgParams& PgParams::add_null() {
  values_.emplace_back();
  null_.push_back(true);
  return *this;
}

PgParams& PgParams::add_array(const std::vector<std::string>& items) {
  std::string lit = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) lit += ',';
    append_quoted(lit, items[i]);
  }
  return add(lit + "}");  // a NUL in an element makes the literal's check catch it
}

PgParams& PgParams::add_array(const std::vector<int64_t>& items) {
  std::string lit = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) lit += ',';
    lit += std::to_string(items[i]);
  }
  return add(lit + "}");
}

PgParams& PgParams::add_array(const std::vector<std::optional<int64_t>>& items) {
  std::string lit = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) lit += ',';
    lit += items[i] ? std::to_string(*items[i]) : "NULL";
  }
  return add(lit + "}");
}

PgParams& PgParams::add_array(const std::vector<double>& items) {
  std::string lit = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) lit += ',';
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, items[i]);  // shortest text that reads back exactly
    lit.append(buf, ec == std::errc() ? end : buf);
  }
  return add(lit + "}");
}

PgParams& PgParams::add_array(const std::vector<bool>& items) {
  std::string lit = "{";
  for (size_t i = 0; i < items.size(); ++i) lit += (i > 0 ? "," : "") + std::string(items[i] ? "t" : "f");
  return add(lit + "}");
}

std::vector<const char*> PgParams::pointers() const {
  std::vector<const char*> out(values_.size());
  for (size_t i = 0; i < values_.size(); ++i) out[i] = null_[i] ? nullptr : values_[i].c_str();
  return out;
}

std::optional<Error> PgParams::problem() const {
  if (nul_param_ == 0) return std::nullopt;
  return Error::make(Code::kInvalid, "parameter $" + std::to_string(nul_param_) +
                                         " contains a NUL character, which PostgreSQL text cannot hold");
}

// ---- PgRows ----

std::string PgRows::text(int row, int col) const {
  if (is_null(row, col)) return {};
  return std::string(PQgetvalue(res_.get(), row, col), static_cast<size_t>(PQgetlength(res_.get(), row, col)));
}

int64_t PgRows::integer(int row, int col) const {
  const char* p = PQgetvalue(res_.get(), row, col);
  int64_t v = 0;
  std::from_chars(p, p + PQgetlength(res_.get(), row, col), v);  // NULL is "": stays 0
  return v;
}

double PgRows::real(int row, int col) const {
  const char* p = PQgetvalue(res_.get(), row, col);
  double v = 0;
  std::from_chars(p, p + PQgetlength(res_.get(), row, col), v);
  return v;
}

bool PgRows::boolean(int row, int col) const { return PQgetvalue(res_.get(), row, col)[0] == 't'; }

int64_t PgRows::affected() const {
  const char* p = PQcmdTuples(res_.get());
  int64_t v = 0;
  std::from_chars(p, p + std::strlen(p), v);
  return v;
}

// ---- PgRow ----

std::string PgRow::text(int col) const { return rows_->text(row_, col); }
int64_t PgRow::integer(int col) const { return rows_->integer(row_, col); }
double PgRow::real(int col) const { return rows_->real(row_, col); }
bool PgRow::flag(int col) const { return rows_->boolean(row_, col) || rows_->integer(row_, col) != 0; }
bool PgRow::is_null(int col) const { return rows_->is_null(row_, col); }

// ---- PgConn ----

Result<PgConn> PgConn::connect(const std::string& url, int connect_timeout_s, bool read_only) {
  // Our defaults come first: the URL, expanded in place of "dbname", overrides them. A database
  // host that dies without closing its connections (power, network, a failover) is noticed within
  // about a minute (TCP keepalives, and unacknowledged data given up after 60 s), not the kernel's
  // 15 minutes to 2 hours in which every call on the connection would hang.
  const std::string timeout = std::to_string(connect_timeout_s);
  const char* keys[] = {"connect_timeout",    "fallback_application_name", "keepalives",       "keepalives_idle",
                        "keepalives_interval", "keepalives_count",          "tcp_user_timeout", "dbname",
                        nullptr};
  const char* values[] = {timeout.c_str(), "gpurent", "1", "30", "10", "3", "60000", url.c_str(), nullptr};
  PgConn c;
  c.read_only_ = read_only;
  c.conn_.reset(PQconnectdbParams(keys, values, /*expand_dbname=*/1));
  if (!c.conn_) return Error::make(Code::kUnavailable, "out of memory opening a PostgreSQL connection");
  if (PQstatus(c.conn_.get()) != CONNECTION_OK) {
    return Error::make(Code::kUnavailable, "connecting to PostgreSQL (" + pg_describe(url) +
                                               "): " + trimmed(PQerrorMessage(c.conn_.get())));
  }
  if (auto s = c.setup(); !s) return s.error();
  return c;
}

Status PgConn::setup() {
  PQsetNoticeProcessor(conn_.get(), ignore_notice, nullptr);
  prepared_.clear();
  // extra_float_digits > 0: doubles come back in their shortest exact form. synchronous_commit on:
  // COMMIT returns only once the commit is flushed to disk (and to synchronous standbys).
  std::string sql =
      "SET client_encoding = 'UTF8'; SET TimeZone = 'UTC'; SET extra_float_digits = 3;"
      " SET client_min_messages = warning; SET synchronous_commit = on;";
  sql += read_only_ ? " SET default_transaction_read_only = on" : " SET default_transaction_read_only = off";
  return script(sql, "preparing the session");
}

Status PgConn::reset() {
  PQreset(conn_.get());
  if (broken())
    return Error::make(Code::kUnavailable, "reconnecting to PostgreSQL: " + trimmed(PQerrorMessage(conn_.get())));
  return setup();
}

Error PgConn::fail(const PGresult* res, std::string_view what) {
  const char* state = res != nullptr ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
  const char* constraint = res != nullptr ? PQresultErrorField(res, PG_DIAG_CONSTRAINT_NAME) : nullptr;
  const char* primary = res != nullptr ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
  // No SQLSTATE: libpq failed on its side, which is the connection (lost, or never there).
  sqlstate_ = state != nullptr ? state : "08006";
  constraint_ = constraint != nullptr ? constraint : "";
  std::string detail = primary != nullptr ? primary : trimmed(PQerrorMessage(conn_.get()));
  if (detail.empty()) detail = "no result (connection lost?)";
  return Error::make(pg_code(sqlstate_), std::string(what) + ": " + detail);
}

Result<PgRows> PgConn::query(const std::string& sql, const PgParams& params, std::string_view what) {
  if (auto bad = params.problem()) {
    sqlstate_ = "22021";
    constraint_.clear();
    bad->message = std::string(what) + ": " + bad->message;
    return *bad;
  }
  auto it = prepared_.find(sql);
  if (it == prepared_.end()) {
    std::string name = "g" + std::to_string(prepared_.size() + 1);
    PGresult* res = PQprepare(conn_.get(), name.c_str(), sql.c_str(), 0, nullptr);
    PgRows prepared(res);  // owns and clears the result
    if (res == nullptr || PQresultStatus(res) != PGRES_COMMAND_OK) return fail(res, std::string(what) + " (preparing)");
    it = prepared_.emplace(sql, std::move(name)).first;
  }
  const auto values = params.pointers();
  PGresult* res = PQexecPrepared(conn_.get(), it->second.c_str(), params.size(), values.data(), nullptr, nullptr, 0);
  PgRows rows(res);
  const ExecStatusType st = res != nullptr ? PQresultStatus(res) : PGRES_FATAL_ERROR;
  if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) return fail(res, what);
  sqlstate_.clear();
  constraint_.clear();
  return rows;
}

Result<int64_t> PgConn::exec(const std::string& sql, const PgParams& params, std::string_view what) {
  auto rows = query(sql, params, what);
  if (!rows) return rows.error();
  return rows->affected();
}

Status PgConn::script(const std::string& sql, std::string_view what) {
  PGresult* res = PQexec(conn_.get(), sql.c_str());
  PgRows rows(res);
  const ExecStatusType st = res != nullptr ? PQresultStatus(res) : PGRES_FATAL_ERROR;
  if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) return fail(res, what);
  sqlstate_.clear();
  constraint_.clear();
  return ok_status();
}

Result<int64_t> PgConn::copy_in(const std::string& sql, const std::function<Result<bool>(std::string&)>& fill,
                                std::string_view what) {
  {
    PGresult* res = PQexec(conn_.get(), sql.c_str());
    PgRows started(res);
    if (res == nullptr || PQresultStatus(res) != PGRES_COPY_IN) return fail(res, what);
  }
  std::optional<Error> failed;
  std::string buf;
  for (bool more = true; more;) {
    buf.clear();
    auto r = fill(buf);
    if (!r) {
      failed = r.error();
      break;
    }
    more = *r;
    if (!buf.empty() && PQputCopyData(conn_.get(), buf.data(), static_cast<int>(buf.size())) != 1) {
      failed = Error::make(Code::kUnavailable, std::string(what) + ": " + trimmed(PQerrorMessage(conn_.get())));
      break;
    }
  }
  PQputCopyEnd(conn_.get(), failed ? "aborted by gpurent" : nullptr);
  Result<int64_t> out = int64_t{0};
  while (PGresult* res = PQgetResult(conn_.get())) {  // the COPY's own result, then the end
    PgRows rows(res);
    if (failed) continue;
    if (PQresultStatus(res) == PGRES_COMMAND_OK) {
      out = rows.affected();
    } else {
      out = fail(res, what);
    }
  }
  if (failed) return *failed;
  if (out.ok()) {
    sqlstate_.clear();
    constraint_.clear();
  }
  return out;
}

// ---- PgPool ----

Result<PgPool::Pooled> PgPool::acquire() {
  uint64_t generation = 0;
  {
    std::unique_lock lock(mu_);
    const bool got =
        freed_.wait_for(lock, std::chrono::milliseconds(wait_ms_), [&] { return !idle_.empty() || open_ < size_; });
    if (!got) {
      return Error::make(Code::kUnavailable, "every one of the " + std::to_string(size_) +
                                                 " PostgreSQL reader connections stayed busy for " +
                                                 std::to_string(wait_ms_) + " ms");
    }
    if (!idle_.empty()) {
      auto conn = std::move(idle_.back());
      idle_.pop_back();
      return conn;
    }
    ++open_;  // reserve the slot, connect outside the lock
    generation = generation_;
  }
  auto conn = PgConn::connect(url_, connect_timeout_s_, /*read_only=*/true);
  if (!conn) {
    std::lock_guard lock(mu_);
    --open_;
    freed_.notify_one();
    return conn.error();
  }
  return Pooled{std::make_unique<PgConn>(std::move(conn).value()), generation};
}

void PgPool::release(Pooled p, bool discard) {
  std::vector<Pooled> stale;  // closed outside the lock
  {
    std::lock_guard lock(mu_);
    if (discard) {
      --open_;
      // What broke one (a restarted or failed-over server) broke every one opened before: leave
      // those idle behind, so the retry and the reads after it start on fresh connections. One
      // opened since is fresh already (a second broken one of the old generation purges nothing).
      if (p.generation == generation_) {
        ++generation_;
        for (Pooled& i : idle_)
          if (i.generation < generation_) stale.push_back(std::move(i));
        std::erase_if(idle_, [](const Pooled& i) { return !i.conn; });
        open_ -= static_cast<int>(stale.size());
      }
    } else {
      idle_.push_back(std::move(p));
    }
  }
  freed_.notify_one();
}

}  // namespace gpurent
