// Each backend's side of backup.h, and what migrate.cc shares with the SQLite side. Internal to
// src/store; backup.cc picks the side from the store's name and the backup file's kind.
#pragma once

#include <string>

#include "store/backup.h"
#include "store/sqlite_db.h"

namespace gpurent {

// sqlite_backup.cc
Result<BackupReport> backup_sqlite(const std::string& path, const std::string& dest);
Result<RestoreReport> restore_sqlite(const std::string& backup, const std::string& dest, bool force);

// pg_backup.cc
Result<BackupReport> backup_postgres(const std::string& url, const std::string& dest);
Result<RestoreReport> restore_postgres(const std::string& backup, const std::string& url, bool force);

// A gpurent SQLite file opened read-only, and its schema version.
struct GpurentSqlite {
  Db db;
  int schema_version = 0;
};
// Opens `path` read-only and checks it is a gpurent store: a SQLite database (kInvalid naming
// `field` otherwise) with the schema_migrations and objects tables, at a schema version this
// binary knows (not newer). `quick_check` also runs PRAGMA quick_check (a backup file's
// integrity; too slow to ask of a large live store).
Result<GpurentSqlite> open_gpurent_sqlite(const std::string& field, const std::string& path, bool quick_check);

}  // namespace gpurent
