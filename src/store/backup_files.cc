#include "store/backup_files.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace gpurent {
namespace {

Status sync_path(const std::string& path, int flags) {
  const int fd = open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return Error::make(Code::kInternal, "opening " + path + " to sync it: " + strerror(errno));
  const int rc = fsync(fd);
  const int err = errno;
  close(fd);
  if (rc != 0) return Error::make(Code::kInternal, "syncing " + path + ": " + strerror(err));
  return ok_status();
}

std::string folder_of(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

}  // namespace

Result<BackupKind> backup_kind(const std::string& field, const std::string& path) {
  if (path.empty()) return Error::invalid(field, "is required");
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return Error::invalid(field, path + " does not exist");
  if (std::filesystem::is_directory(path, ec)) return Error::invalid(field, path + " is a folder, not a file");
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error::invalid(field, "cannot read " + path + ": " + strerror(errno));
  char head[16] = {};
  const ssize_t n = read(fd, head, sizeof head);
  close(fd);
  if (n == static_cast<ssize_t>(sizeof head) && std::memcmp(head, "SQLite format 3", 16) == 0)
    return BackupKind::kSqlite;
  if (n >= 5 && std::memcmp(head, "PGDMP", 5) == 0) return BackupKind::kPgDump;
  return BackupKind::kOther;
}

Status check_backup_kind(const std::string& path, BackupKind wanted) {
  auto kind = backup_kind("backup", path);
  if (!kind) return kind.error();
  if (*kind == wanted) return ok_status();
  if (*kind == BackupKind::kPgDump)
    return Error::invalid("backup", path +
                                        " is a PostgreSQL dump (pg_dump's custom format): restore it into a "
                                        "postgresql:// database");
  if (*kind == BackupKind::kSqlite)
    return Error::invalid("backup", path +
                                        " is a SQLite backup: restore it into a SQLite file (and move that to "
                                        "PostgreSQL with `gpurent migrate`)");
  return Error::invalid("backup", path +
                                      " is not a gpurent backup (neither a SQLite database nor a pg_dump "
                                      "custom-format dump)");
}

Status check_new_file(const std::string& field, const std::string& path) {
  if (path.empty()) return Error::invalid(field, "is required");
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::symlink_status(path, ec)))
    return Error::invalid(field, path + " already exists; give a new file name");
  const std::string dir = folder_of(path);
  if (!std::filesystem::is_directory(dir, ec)) return Error::invalid(field, "folder '" + dir + "' does not exist");
  return ok_status();
}

std::string partial_path(const std::string& dest) { return dest + ".partial-" + std::to_string(getpid()); }

Status publish_file(const std::string& partial, const std::string& dest) {
  if (auto s = sync_path(partial, O_RDONLY); !s) return s;
  if (renameat2(AT_FDCWD, partial.c_str(), AT_FDCWD, dest.c_str(), RENAME_NOREPLACE) != 0) {
    if (errno == EEXIST) return Error::make(Code::kConflict, dest + " appeared while the backup was written; kept it");
    return Error::make(Code::kInternal, "renaming " + partial + " to " + dest + ": " + strerror(errno));
  }
  return sync_path(folder_of(dest), O_RDONLY | O_DIRECTORY);
}

int64_t file_size(const std::string& path) {
  std::error_code ec;
  const auto n = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<int64_t>(n);
}

void remove_with_companions(const std::string& path) {
  std::error_code ec;
  for (const char* suffix : {"", "-journal", "-wal", "-shm"}) std::filesystem::remove(path + suffix, ec);
}

}  // namespace gpurent
