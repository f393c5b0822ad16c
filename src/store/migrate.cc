// migrate_store: a SQLite store into an empty PostgreSQL database. The SQLite file is read in one
// read transaction (one snapshot, while a server may still write to it); the PostgreSQL side is
// one transaction that locks the gpurent tables, checks they are empty, copies every table
// (migrate_copy.cc), verifies the copy (migrate_verify.cc) and only then commits. Any failure
// rolls it back: the target is left as it was (its schema created, its tables empty).
#include <set>

#include "store/backup.h"
#include "store/backup_impl.h"
#include "store/migrate_impl.h"
#include "store/migrations.h"
#include "store/pg_queries.h"
#include "store/pg_tools.h"

namespace gpurent {
namespace {

constexpr int kConnectTimeoutS = 10;

// Refuses a SQLite file with a table the mapping does not cover (written by a newer gpurent, or
// not by gpurent at all): copying only some of its tables would lose records silently.
Status check_every_table_mapped(Db& db, const std::string& path) {
  std::set<std::string> known;
  for (const auto& t : migration_tables()) known.insert(t.name);
  for (const auto& t : tables_not_copied()) known.insert(t.name);
  auto q = db.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'");
  if (!q) return q.error();
  for (;;) {
    auto row = q->step("listing the tables of " + path);
    if (!row) return row.error();
    if (!*row) return ok_status();
    if (!known.contains(q->text(0)))
      return Error::invalid("sqlite_path", path + " has a table '" + q->text(0) +
                                               "' that this gpurent does not know how to move to PostgreSQL");
  }
}

// The target's gpurent tables must be empty; they are locked against other writers (a server
// started on the target meanwhile) until the transaction ends.
Status lock_and_check_empty(PgConn& db, const std::string& url) {
  std::string names;
  for (const auto& t : migration_tables()) names += (names.empty() ? "" : ", ") + t.name;
  if (auto s = db.script("LOCK TABLE " + names + " IN EXCLUSIVE MODE", "locking the target's tables"); !s) return s;
  for (const auto& t : migration_tables()) {
    auto rows = db.query("SELECT EXISTS (SELECT 1 FROM " + t.name + ")", PgParams(), "looking into " + t.name);
    if (!rows) return rows.error();
    if (rows->boolean(0, 0))
      return Error::make(Code::kConflict, pg_describe(url) + " is not empty (its table " + t.name +
                                              " has rows): migrate into an empty database");
  }
  return ok_status();
}

// Ends an open transaction with ROLLBACK when it goes out of scope uncommitted.
struct PgRollback {
  PgConn& db;
  ~PgRollback() {
    if (db.tx_status() != PQTRANS_IDLE) (void)db.script("ROLLBACK", "rolling back the migration");
  }
};

}  // namespace

Result<MigrationReport> migrate_store(const std::string& sqlite_path, const std::string& postgres_url) {
  if (sqlite_path.empty()) return Error::invalid("sqlite_path", "is required");
  if (is_postgres_url(sqlite_path))
    return Error::invalid("sqlite_path", "must be a SQLite file (the store to move), not a PostgreSQL URL");
  if (postgres_url.empty()) return Error::invalid("postgres_url", "is required");
  if (auto c = pg_tool_connection(postgres_url); !c) return Error::invalid("postgres_url", c.error().fields[0].reason);

  auto source = open_gpurent_sqlite("sqlite_path", sqlite_path, /*quick_check=*/false);
  if (!source) return source.error();
  const int newest = sqlite_migrations().back().version;
  if (source->schema_version != newest)
    return Error::invalid("sqlite_path", sqlite_path + " is at schema version " +
                                             std::to_string(source->schema_version) + ", older than this gpurent's (" +
                                             std::to_string(newest) +
                                             "): open it once with this gpurent (gpurent serve --db FILE) to upgrade "
                                             "it, then migrate");
  Db& from = source->db;
  // One snapshot for everything read below (the copy and the verification).
  if (auto s = from.exec("BEGIN"); !s) return s.error();
  struct EndRead {
    Db& db;
    ~EndRead() { (void)db.exec("COMMIT"); }
  } end_read{from};
  if (auto s = check_every_table_mapped(from, sqlite_path); !s) return s.error();

  auto to = PgConn::connect(postgres_url, kConnectTimeoutS, /*read_only=*/false);
  if (!to) return to.error();
  MigrationReport report;
  report.sqlite_schema_version = source->schema_version;
  auto pg_version = apply_migrations(*to, postgres_migrations(), SystemClock().now());
  if (!pg_version) return pg_version.error();
  report.postgres_schema_version = *pg_version;

  if (auto s = to->script("BEGIN", "starting the migration"); !s) return s.error();
  PgRollback rollback{*to};
  if (auto s = lock_and_check_empty(*to, postgres_url); !s) return s.error();
  for (const TableMap& t : migration_tables()) {
    auto n = copy_table(from, *to, t);
    if (!n) return n.error();
  }
  if (auto s = verify_counts(from, *to, migration_tables(), report.tables); !s) return s.error();
  auto objects = verify_objects(from, *to);
  if (!objects) return objects.error();
  report.objects_verified = *objects;
  if (auto s = to->script("COMMIT", "committing the migration"); !s) return s.error();
  return report;
}

}  // namespace gpurent
