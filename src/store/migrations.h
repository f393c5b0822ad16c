// Versioned schema migrations for the SQLite store. The applied versions live in
// schema_migrations(version, applied_at, description); each pending migration runs in its own
// transaction together with the row recording it, so a failure leaves the previous version intact.
// Not thread-safe: runs once at open, on the writer connection, before the store is shared.
#pragma once

#include <functional>
#include <span>

#include "core/clock.h"
#include "core/result.h"
#include "store/sqlite_db.h"

namespace gpurent {

struct Migration {
  int version;              // strictly increasing, starting at 1
  const char* description;  // one line, recorded in schema_migrations
  const char* sql;          // one or more statements, no parameters
};

// The schema this binary knows, oldest first.
std::span<const Migration> sqlite_migrations();

// Creates schema_migrations if missing, then applies every migration newer than the file's
// version, recording `now` as applied_at. Returns the resulting version. A file whose version is
// newer than the newest migration in `migrations` is refused (it was written by a newer binary).
Result<int> apply_migrations(Db& db, std::span<const Migration> migrations, TimeMs now);

// The highest applied version (0 for a fresh file).
Result<int> applied_schema_version(Db& db);
// A stored schema version as an int; an error for one past int or below 0 (never written by
// gpurent: a crafted or damaged backup), which must not wrap to an old version.
Result<int> schema_version_of(int64_t stored);

// ---- shared by the SQLite and PostgreSQL schemas (pg_migrations.cc) ----

// How one backend runs the steps of applying migrations.
struct MigrationSteps {
  std::function<Status()> bootstrap;                  // creates schema_migrations if missing
  std::function<Result<int>()> read_version;          // the highest applied version
  std::function<Status(const Migration&)> apply_one;  // one migration and its record, atomically
};
// Checks that `migrations` is in strictly increasing order, bootstraps, refuses a database newer
// than the newest migration (check_schema_not_newer), applies each pending migration in order and
// returns the version read afterwards.
Result<int> run_migrations(std::span<const Migration> migrations, const MigrationSteps& steps);
// kInternal "database schema version N is newer than this binary supports (M); ..." when
// current > the newest version of `migrations`.
Status check_schema_not_newer(int current, std::span<const Migration> migrations);

}  // namespace gpurent
