// exec/log_cap.h: a run's log keeps its last bytes; the space before them is a hole.
#include "exec/log_cap.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

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

}  // namespace

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
  // Write access is what fallocate needs; O_NONBLOCK: a FIFO put there never blocks the caller.
  LogFd f(::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY));
  if (f.fd < 0) {
    if (errno == ENOENT) return Error::make(Code::kNotFound, "no log " + path);
    return Error::make(Code::kUnavailable, "cannot open log " + path + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(f.fd, &st) != 0)
    return Error::make(Code::kUnavailable, "cannot read log " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return Error::make(Code::kUnavailable, "log " + path + " is not a regular file");
  const int64_t held = static_cast<int64_t>(st.st_blocks) * 512;
  const int64_t margin = std::max<int64_t>(keep_bytes / 16, 64 * 1024);
  if (held <= keep_bytes + margin) return 0;
  const int64_t block = st.st_blksize > 0 ? st.st_blksize : 4096;
  const int64_t cut = (st.st_size - keep_bytes) / block * block;
  if (cut <= first_kept_byte(f.fd, st.st_size)) return 0;
  if (::fallocate(f.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, cut) != 0) {
    const int e = errno;
    if (e == EOPNOTSUPP)
      return Error::make(Code::kUnavailable,
                         "cannot cap log " + path + ": its file system cannot punch holes (fallocate PUNCH_HOLE)");
    return Error::make(Code::kUnavailable, "cannot cap log " + path + ": " + std::strerror(e));
  }
  struct stat after {};
  if (::fstat(f.fd, &after) != 0) return held;
  return std::max<int64_t>(0, held - static_cast<int64_t>(after.st_blocks) * 512);
}

}  // namespace gpurent
