// backup.h's entry points: which backend's side a call goes to.
#include "store/backup.h"

#include "store/backup_files.h"
#include "store/backup_impl.h"
#include "store/store.h"

namespace gpurent {

Result<BackupReport> backup_store(const std::string& source, const std::string& dest) {
  if (source.empty()) return Error::invalid("source", "is required");
  if (dest.empty()) return Error::invalid("dest", "is required");
  return is_postgres_url(source) ? backup_postgres(source, dest) : backup_sqlite(source, dest);
}

Result<RestoreReport> restore_store(const std::string& backup, const std::string& dest, const RestoreOptions& opts) {
  if (backup.empty()) return Error::invalid("backup", "is required");
  if (dest.empty()) return Error::invalid("dest", "is required");
  if (is_postgres_url(dest)) return restore_postgres(backup, dest, opts.force);
  if (auto s = check_backup_kind(backup, BackupKind::kSqlite); !s) return s.error();
  return restore_sqlite(backup, dest, opts.force);
}

}  // namespace gpurent
