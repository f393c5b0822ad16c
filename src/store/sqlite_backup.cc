// SQLite backups through the online backup API (https://sqlite.org/backup.html). A backup is one
// sqlite3_backup_step(-1): a single read transaction on the source, which in WAL mode sees one
// committed state and never blocks the server's writer (chunked steps would restart whenever
// another connection writes, and could never finish under a steady load). Restoring uses the
// same API in the other direction, so the destination is written under SQLite's own locks and
// journal, all or nothing, even when the file exists.
#include <chrono>
#include <filesystem>
#include <thread>

#include "store/backup_files.h"
#include "store/backup_impl.h"
#include "store/migrations.h"
#include "store/store.h"

namespace gpurent {
namespace {

constexpr int kBusyTimeoutMs = 5000;

// Copies every page of `from`'s main database into `to`'s, retrying while either is busy (a
// writer committing, a checkpoint) for up to kBusyTimeoutMs.
Status copy_database(Db& from, Db& to, const std::string& what) {
  sqlite3_backup* b = sqlite3_backup_init(to.raw(), "main", from.raw(), "main");
  if (b == nullptr) return sqlite_error(to.raw(), sqlite3_extended_errcode(to.raw()), what);
  int rc = SQLITE_OK;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  for (;;) {
    rc = sqlite3_backup_step(b, -1);
    if (rc == SQLITE_DONE) break;
    const int base = rc & 0xff;
    if ((base == SQLITE_BUSY || base == SQLITE_LOCKED) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    break;
  }
  const int finished = sqlite3_backup_finish(b);
  if (rc != SQLITE_DONE) return sqlite_error(nullptr, rc, what);
  if (finished != SQLITE_OK) return sqlite_error(to.raw(), finished, what);
  return ok_status();
}

Result<bool> has_table(Db& db, const std::string& name) {
  auto q = db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1");
  if (!q) return q.error();
  q->bind(1, name);
  return q->step("reading the schema");
}

}  // namespace

Result<GpurentSqlite> open_gpurent_sqlite(const std::string& field, const std::string& path, bool quick_check) {
  auto kind = backup_kind(field, path);
  if (!kind) return kind.error();
  if (*kind == BackupKind::kPgDump)
    return Error::invalid(field, path + " is a PostgreSQL dump (pg_dump's custom format), not a SQLite database");
  if (*kind != BackupKind::kSqlite) return Error::invalid(field, path + " is not a SQLite database");
  auto db = Db::open(path, SQLITE_OPEN_READONLY, kBusyTimeoutMs);
  if (!db) return Error::invalid(field, db.error().message);
  if (quick_check) {
    auto ok = db->scalar_text("PRAGMA quick_check");
    if (!ok) return Error::invalid(field, path + " cannot be checked: " + ok.error().message);
    if (*ok != "ok") return Error::invalid(field, path + " is damaged (quick_check: " + *ok + ")");
  }
  for (const char* table : {"schema_migrations", "objects"}) {
    auto has = has_table(*db, table);
    if (!has) return Error::invalid(field, path + ": " + has.error().message);
    if (!*has)
      return Error::invalid(
          field, path + " is a SQLite database but not a gpurent store (it has no " + std::string(table) + " table)");
  }
  auto version = applied_schema_version(*db);
  if (!version) return Error::invalid(field, path + ": " + version.error().message);
  if (auto s = check_schema_not_newer(*version, sqlite_migrations()); !s)
    return Error::invalid(field, path + ": " + s.error().message);
  return GpurentSqlite{std::move(db).value(), *version};
}

Result<BackupReport> backup_sqlite(const std::string& path, const std::string& dest) {
  auto source = open_gpurent_sqlite("source", path, /*quick_check=*/false);
  if (!source) return source.error();
  if (auto s = check_new_file("dest", dest); !s) return s.error();
  const std::string partial = partial_path(dest);
  auto fail = [&](Error e) {
    remove_with_companions(partial);
    return e;
  };
  {
    auto out = Db::open(partial, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, kBusyTimeoutMs);
    if (!out) return fail(out.error());
    if (auto s = copy_database(source->db, *out, "backing up " + path); !s) return fail(s.error());
    // One self-contained file: the copy carries the source's WAL mode, which would keep part of a
    // later change in a -wal file beside it.
    auto mode = out->scalar_text("PRAGMA journal_mode=DELETE");
    if (!mode) return fail(mode.error());
    auto check = out->scalar_text("PRAGMA quick_check");
    if (!check) return fail(check.error());
    if (*check != "ok") return fail(Error::make(Code::kInternal, "the backup failed its quick_check: " + *check));
  }
  if (auto s = publish_file(partial, dest); !s) return fail(s.error());
  return BackupReport{"sqlite", source->schema_version, file_size(dest)};
}

Result<RestoreReport> restore_sqlite(const std::string& backup, const std::string& dest, bool force) {
  auto from = open_gpurent_sqlite("backup", backup, /*quick_check=*/true);
  if (!from) return from.error();
  if (dest.empty()) return Error::invalid("dest", "is required");
  std::error_code ec;
  const bool existed = std::filesystem::exists(dest, ec);
  if (existed) {
    if (std::filesystem::is_directory(dest, ec)) return Error::invalid("dest", dest + " is a folder, not a file");
    if (file_size(dest) > 0) {
      auto kind = backup_kind("dest", dest);
      if (!kind) return kind.error();
      if (*kind != BackupKind::kSqlite)
        return Error::invalid("dest", dest + " exists and is not a SQLite database; refusing to overwrite it");
      if (!force)
        return Error::make(Code::kConflict, dest +
                                                " already exists and is not empty; restore into a new file, or "
                                                "replace it with --force (stop any server using it first)");
    }
  } else if (auto s = check_new_file("dest", dest); !s) {
    return s.error();
  }
  {
    auto to = Db::open(dest, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, kBusyTimeoutMs);
    if (!to) return to.error();
    if (auto s = copy_database(from->db, *to, "restoring " + backup + " into " + dest); !s) {
      if (!existed) remove_with_companions(dest);
      return s.error();
    }
  }
  // Opening it as the server would: WAL mode, pending migrations applied, readers checked.
  auto store = open_sqlite_store({.path = dest});
  if (!store) return store.error();
  return RestoreReport{"sqlite", from->schema_version, (*store)->schema_version()};
}

}  // namespace gpurent
