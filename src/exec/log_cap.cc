// exec/log_cap.h: a run's log keeps its last bytes; the space before them is a hole.
#include "exec/log_cap.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace gpurent {

namespace {

struct LogFd {
  int fd;
  explicit LogFd(int f) : fd(f) {}
  ~LogFd() {
    if (fd >= 0) ::close(fd);
  }
  LogFd(const LogFd&) = delete;
  LogFd& operator=(const LogFd&) = delete;
};

Error cannot(const std::string& what, const std::string& path, int e) {
  return Error::make(Code::kUnavailable, "cannot " + what + " " + path + ": " + std::strerror(e));
}

}  // namespace

int64_t log_cap_margin(int64_t keep_bytes) { return std::max<int64_t>(keep_bytes / 16, 64 * 1024); }

int64_t first_kept_byte(int fd, int64_t size) {
  if (size <= 0) return 0;
  const off_t at = ::lseek(fd, 0, SEEK_DATA);
  if (at >= 0) return std::min<int64_t>(at, size);
  // ENXIO: no data at or after 0 (all hole). Other errors (a file system without SEEK_DATA answers
  // as if the file were all data): read it all.
  return errno == ENXIO ? size : 0;
}

Result<int64_t> cap_log(const std::string& path, int64_t keep_bytes) {
  if (keep_bytes <= 0) return Error::make(Code::kInternal, "cap_log: keep_bytes must be positive");
  const int64_t margin = log_cap_margin(keep_bytes);
  struct stat seen {};
  if (::lstat(path.c_str(), &seen) != 0) {
    if (errno == ENOENT) return Error::make(Code::kNotFound, "no log " + path);
    return cannot("read log", path, errno);
  }
  if (!S_ISREG(seen.st_mode)) return Error::make(Code::kUnavailable, "log " + path + " is not a regular file");
  if (seen.st_size <= keep_bytes + margin) return 0;  // the common case: not even opened
  if (seen.st_nlink != 1)  // a run's log has one name: another one could be a file it must not touch
    return Error::make(Code::kUnavailable, "log " + path + " has other hard links: not capped");
  // Write access is what fallocate needs; O_NONBLOCK: a FIFO put there since never blocks the caller.
  LogFd f(::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY));
  if (f.fd < 0) {
    if (errno == ENOENT) return Error::make(Code::kNotFound, "no log " + path);
    return cannot("open log", path, errno);
  }
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) return cannot("read log", path, errno);
  if (!S_ISREG(st.st_mode) || st.st_dev != seen.st_dev || st.st_ino != seen.st_ino || st.st_nlink != 1)
    return Error::make(Code::kUnavailable, "log " + path + " changed while it was capped");
  // What is kept, not the space held: that may be more (preallocation) or less (compression).
  const int64_t kept_from = first_kept_byte(f.fd, st.st_size);
  if (st.st_size - kept_from <= keep_bytes + margin) return 0;
  const int64_t block = st.st_blksize > 0 ? st.st_blksize : 4096;
  const int64_t from = kept_from / block * block, cut = (st.st_size - keep_bytes) / block * block;
  if (cut <= from) return 0;
  const int64_t held = static_cast<int64_t>(st.st_blocks) * 512;
  if (::fallocate(f.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, from, cut - from) != 0) {
    const int e = errno;
    if (e == EOPNOTSUPP)
      return Error::make(Code::kUnavailable,
                         "cannot cap log " + path + ": its file system cannot punch holes (fallocate PUNCH_HOLE)");
    return cannot("cap log", path, e);
  }
  struct stat after {};
  if (::fstat(f.fd, &after) != 0) return cut - from;
  return std::max<int64_t>(0, held - static_cast<int64_t>(after.st_blocks) * 512);
}

Status probe_hole_punching(const std::string& dir) {
  struct stat d {};
  if (::stat(dir.c_str(), &d) != 0 || !S_ISDIR(d.st_mode)) return Error::make(Code::kNotFound, "no folder " + dir);
  // A new file of a name no one could have guessed (never an existing one, nor a link put there).
  std::string path = dir + "/.gpurent-hole-probe-XXXXXX";
  LogFd f(::mkostemp(path.data(), O_CLOEXEC));
  if (f.fd < 0) return cannot("create a file in", dir, errno);
  struct Unlink {
    const std::string& p;
    ~Unlink() { ::unlink(p.c_str()); }
  } unlink_after{path};
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) return cannot("read", path, errno);
  const int64_t block = st.st_blksize > 0 ? st.st_blksize : 4096;
  const std::string bytes(static_cast<size_t>(2 * block), 'x');
  const ssize_t wrote = ::pwrite(f.fd, bytes.data(), bytes.size(), 0);
  if (wrote != static_cast<ssize_t>(bytes.size()))
    return wrote < 0 ? cannot("write", path, errno)
                     : Error::make(Code::kUnavailable, "cannot write " + path + ": short write");
  if (::fsync(f.fd) != 0) return cannot("write", path, errno);
  if (::fallocate(f.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, block) != 0) {
    const int e = errno;
    if (e == EOPNOTSUPP || e == ENOSYS)
      return Error::make(Code::kInvalid, "the file system of " + dir + " cannot punch holes (fallocate PUNCH_HOLE)");
    return cannot("punch a hole in", path, e);
  }
  const off_t data = ::lseek(f.fd, 0, SEEK_DATA);
  if (data != block)
    return Error::make(Code::kInvalid, "the file system of " + dir +
                                           " punches holes but lseek SEEK_DATA does not find where the data starts "
                                           "after one (found " +
                                           std::to_string(static_cast<int64_t>(data)) + ", not " +
                                           std::to_string(block) + ")");
  return ok_status();
}

}  // namespace gpurent
