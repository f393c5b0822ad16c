// Versioned schema migrations for the SQLite store. The applied versions live in
// schema_migrations(version, applied_at, description); each pending migration runs in its own
// transaction together with the row recording it, so a failure leaves the previous version intact.
// Not thread-safe: runs once at open, on the writer connection, before the store is shared.
#pragma once

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

}  // namespace gpurent
