// The files of backups, shared by the SQLite and PostgreSQL sides (sqlite_backup.cc,
// pg_backup.cc): what kind of backup a file is, and writing a new file under a temporary name
// that is renamed into place (never over an existing file) only once complete and synced.
// Internal to src/store. Functions are thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "core/result.h"

namespace gpurent {

enum class BackupKind {
  kSqlite,  // begins with "SQLite format 3\0"
  kPgDump,  // pg_dump's custom format: begins with "PGDMP"
  kOther,   // anything else, an empty file included
};

// What the file at `path` is, from its first bytes. kInvalid naming `field` when it does not exist
// or cannot be read.
Result<BackupKind> backup_kind(const std::string& field, const std::string& path);

// Checks that the backup file `path` is of the kind a restore into the destination needs
// (kSqlite for a file, kPgDump for a postgresql:// database); kInvalid naming "backup" with what
// it is instead and where it restores.
Status check_backup_kind(const std::string& path, BackupKind wanted);

// A new file's path: kInvalid naming `field` when empty, when something exists there, or when
// its folder does not.
Status check_new_file(const std::string& field, const std::string& path);

// Where a file for `dest` is written until it is complete: "<dest>.partial-<pid>".
std::string partial_path(const std::string& dest);

// Syncs `partial` to disk, renames it to `dest` (kConflict when `dest` appeared meanwhile: it is
// never replaced) and syncs the folder, so the new name survives a crash.
Status publish_file(const std::string& partial, const std::string& dest);

// The file's size in bytes (0 when it cannot be read).
int64_t file_size(const std::string& path);

// Removes `path` and SQLite's companions of it (-journal, -wal, -shm), ignoring errors.
void remove_with_companions(const std::string& path);

}  // namespace gpurent
