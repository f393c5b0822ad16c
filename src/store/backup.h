// Backups of a store, and moving a SQLite store to PostgreSQL (`gpurent backup`, `gpurent
// restore`, `gpurent migrate`; docs/user-guide.md#backups-and-migration). A store is named as
// `gpurent serve --db` names it: a file path (SQLite) or a postgresql:// URL (is_postgres_url).
//
//  * SQLite backup: the online backup API copies a consistent snapshot (one read transaction of
//    the WAL-mode file, so a server may keep writing meanwhile) into one self-contained SQLite
//    file (rollback journal mode, checked with quick_check).
//  * PostgreSQL backup: pg_dump --format=custom (a consistent snapshot too; pg_dump's own).
//  * Restore checks the backup first (it opens, it has the gpurent schema, its schema version is
//    not newer than this binary's), then copies it in: SQLite through the backup API into the
//    file (safe against other connections to it), PostgreSQL through pg_restore --clean
//    --if-exists --no-owner --single-transaction (all or nothing). It refuses an existing
//    non-empty database unless `force`. The restored store is then opened once, which applies
//    any newer schema migrations.
//  * Migrate copies every table of a SQLite store into an empty PostgreSQL database in one
//    PostgreSQL transaction, and verifies (row counts per table, every object) before committing.
//
// Backups are written under a temporary name beside `dest` and renamed into place only when
// complete, so a failed backup leaves no file that looks whole. None of these stop a running
// server: restore into a store a server is using only with that server stopped.
// Errors: kInvalid naming the argument ("source", "dest", "backup", "sqlite_path",
// "postgres_url") when it is malformed, missing, or names something that is not a gpurent store
// or backup; kConflict when a destination exists or is not empty; kUnavailable when a database
// or a PostgreSQL client program cannot be reached; kInternal when a step fails (the message
// names the step, and a program's own error output). Thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"

namespace gpurent {

struct BackupReport {
  std::string backend;     // "sqlite" or "postgres"
  int schema_version = 0;  // the store's, in its backend's numbering (the two are numbered apart)
  int64_t bytes = 0;       // size of the backup file
};

// Backs up the store `source` into the new file `dest` (which must not exist; its folder must).
Result<BackupReport> backup_store(const std::string& source, const std::string& dest);

struct RestoreOptions {
  bool force = false;  // replace an existing, non-empty database
};

struct RestoreReport {
  std::string backend;            // "sqlite" or "postgres"
  int backup_schema_version = 0;  // the backup's
  int schema_version = 0;         // the restored store's, once opened (migrated when the backup was older)
};

// Restores the backup file `backup` into the store `dest`. A SQLite backup restores into a file
// (created when missing), a PostgreSQL dump into a postgresql:// database that exists.
Result<RestoreReport> restore_store(const std::string& backup, const std::string& dest, const RestoreOptions& opts);

struct TableCount {
  std::string table;
  int64_t rows = 0;
};

struct MigrationReport {
  int sqlite_schema_version = 0;
  int postgres_schema_version = 0;
  std::vector<TableCount> tables;  // every table copied, in copy order, with its rows
  int64_t objects_verified = 0;    // objects compared field by field after the copy
};

// Copies the SQLite store at `sqlite_path` (at this binary's schema version) into the
// PostgreSQL database `postgres_url`, whose gpurent tables must be empty (its schema is created
// when missing). Reads one snapshot of the SQLite file; writes that a server makes after it are
// not copied.
Result<MigrationReport> migrate_store(const std::string& sqlite_path, const std::string& postgres_url);

}  // namespace gpurent
