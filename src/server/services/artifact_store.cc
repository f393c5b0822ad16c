#include "server/services/artifact_store.h"

// The digest is carried from chunk to chunk in OpenSSL's SHA256_CTX, a plain struct its header
// defines (EVP's contexts cannot be saved); its functions are marked deprecated in OpenSSL 3.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <fcntl.h>
#include <openssl/sha.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <utility>

namespace gpurent {

namespace {

namespace fs = std::filesystem;

constexpr char kStateMagic[8] = {'g', 'p', 'r', 's', 'h', 'a', '1', '\n'};

Error io_error(const std::string& what, const std::string& path) {
  return Error::make(Code::kUnavailable, what + " " + path + ": " + std::strerror(errno));
}

// The digest state beside an upload: magic, the bytes it covers, the context.
std::string state_path(const std::string& upload) { return upload + ".sha256state"; }

std::optional<SHA256_CTX> load_state(const std::string& upload, int64_t covers) {
  const int fd = ::open(state_path(upload).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buf[sizeof(kStateMagic) + sizeof(int64_t) + sizeof(SHA256_CTX)];
  const ssize_t n = ::read(fd, buf, sizeof(buf));
  ::close(fd);
  if (n != static_cast<ssize_t>(sizeof(buf)) || std::memcmp(buf, kStateMagic, sizeof(kStateMagic)) != 0)
    return std::nullopt;
  int64_t have = 0;
  std::memcpy(&have, buf + sizeof(kStateMagic), sizeof(have));
  if (have != covers) return std::nullopt;
  SHA256_CTX ctx;
  std::memcpy(&ctx, buf + sizeof(kStateMagic) + sizeof(int64_t), sizeof(ctx));
  // A context that is not the hash of `covers` bytes (a damaged file) would make SHA256_Update
  // write past its block: only one consistent with them is used, else the file is hashed again.
  const uint64_t bits = static_cast<uint64_t>(covers) * 8;
  if (ctx.num != static_cast<unsigned int>(covers % SHA256_CBLOCK) || ctx.md_len != SHA256_DIGEST_LENGTH ||
      ctx.Nl != static_cast<SHA_LONG>(bits & 0xffffffffu) || ctx.Nh != static_cast<SHA_LONG>(bits >> 32))
    return std::nullopt;
  return ctx;
}

// Written to a temporary name and renamed: a torn state is never read (a missing or stale one
// only costs a re-read of the file).
void save_state(const std::string& upload, int64_t covers, const SHA256_CTX& ctx) {
  char buf[sizeof(kStateMagic) + sizeof(int64_t) + sizeof(SHA256_CTX)];
  std::memcpy(buf, kStateMagic, sizeof(kStateMagic));
  std::memcpy(buf + sizeof(kStateMagic), &covers, sizeof(covers));
  std::memcpy(buf + sizeof(kStateMagic) + sizeof(int64_t), &ctx, sizeof(ctx));
  const std::string tmp = state_path(upload) + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;
  const bool ok = ::write(fd, buf, sizeof(buf)) == static_cast<ssize_t>(sizeof(buf));
  ::close(fd);
  if (ok) ::rename(tmp.c_str(), state_path(upload).c_str());
}

// The digest of the first `bytes` bytes of an open file.
Result<SHA256_CTX> hash_prefix(int fd, int64_t bytes, const std::string& path) {
  SHA256_CTX ctx;
  SHA256_Init(&ctx);
  std::array<char, 1 << 16> buf;
  int64_t at = 0;
  while (at < bytes) {
    const ssize_t n = ::pread(fd, buf.data(), static_cast<size_t>(std::min<int64_t>(buf.size(), bytes - at)), at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error::make(Code::kUnavailable, "the upload " + path + " is shorter than what was received");
    SHA256_Update(&ctx, buf.data(), static_cast<size_t>(n));
    at += n;
  }
  return ctx;
}

std::string hex(const unsigned char* md, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) out += kDigits[md[i] >> 4], out += kDigits[md[i] & 15];
  return out;
}

void sync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

std::string artifact_root(const ServerOptions& o) {
  std::error_code ec;
  const fs::path p = fs::absolute(o.artifact_dir.empty() ? o.file_prefix() + ".artifacts" : o.artifact_dir, ec);
  return (ec ? fs::path(o.artifact_dir.empty() ? o.file_prefix() + ".artifacts" : o.artifact_dir) : p.lexically_normal())
      .string();
}

Status ArtifactStore::init() const {
  std::error_code ec;
  for (const char* sub : {"/sha256", "/uploads"}) {
    fs::create_directories(root_ + sub, ec);
    if (ec) return Error::make(Code::kUnavailable, "cannot create the artifact store " + root_ + sub + ": " + ec.message());
  }
  ::chmod(root_.c_str(), 0755);
  ::chmod((root_ + "/sha256").c_str(), 0755);
  ::chmod((root_ + "/uploads").c_str(), 0700);
  return ok_status();
}

Result<std::optional<std::string>> ArtifactStore::write_chunk(const std::string& artifact_id, int64_t offset,
                                                              std::string_view data, int64_t total) const {
  if (auto s = init(); !s) return s.error();
  const std::string path = upload_path(artifact_id);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return io_error("cannot open the upload", path);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return io_error("cannot read the upload", path);
  if (st.st_size < offset)  // the bytes before this chunk are gone (a restore, a crash while publishing)
    return Error::make(Code::kConflict, "the upload " + path + " holds " + std::to_string(st.st_size) +
                                            " bytes, fewer than the offset " + std::to_string(offset));
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::pwrite(fd, data.data() + done, data.size() - done, offset + static_cast<int64_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return io_error("cannot write the upload", path);
    done += static_cast<size_t>(n);
  }
  const int64_t end = offset + static_cast<int64_t>(data.size());
  if (::ftruncate(fd, end) != 0 || ::fdatasync(fd) != 0) return io_error("cannot write the upload", path);
  std::optional<SHA256_CTX> ctx = load_state(path, offset);
  if (!ctx) {
    auto again = hash_prefix(fd, offset, path);
    if (!again) return again.error();
    ctx = *again;
  }
  SHA256_Update(&*ctx, data.data(), data.size());
  if (end < total) {
    save_state(path, end, *ctx);
    return std::optional<std::string>();
  }
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256_Final(md, &*ctx);
  ::unlink(state_path(path).c_str());
  return std::optional<std::string>(hex(md, sizeof(md)));
}

Status ArtifactStore::publish(const std::string& artifact_id, const std::string& sha256) const {
  ::unlink(state_path(upload_path(artifact_id)).c_str());
  return publish_file(upload_path(artifact_id), sha256);
}

Result<std::string> ArtifactStore::file_sha256(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error("cannot read", path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return io_error("cannot read", path);
  }
  auto ctx = hash_prefix(fd, st.st_size, path);
  ::close(fd);
  if (!ctx) return ctx.error();
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256_Final(md, &*ctx);
  return hex(md, sizeof(md));
}

Status ArtifactStore::publish_file(const std::string& from, const std::string& sha256) const {
  if (auto s = init(); !s) return s;
  // Renamed over a file already there: the same content, uploaded before, or a copy changed
  // since (then the verified upload repairs it).
  const std::string to = content_path(sha256);
  if (const int fd = ::open(from.c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) {  // on disk before it is named
    ::fsync(fd);
    ::close(fd);
  }
  if (::chmod(from.c_str(), 0444) != 0) return io_error("cannot publish the upload", from);
  if (::rename(from.c_str(), to.c_str()) != 0) return io_error("cannot publish the upload", from);
  sync_dir(root_ + "/sha256");
  sync_dir(root_ + "/uploads");
  return ok_status();
}

void ArtifactStore::discard_upload(const std::string& artifact_id) const {
  const std::string path = upload_path(artifact_id);
  ::unlink(state_path(path).c_str());
  ::unlink((state_path(path) + ".tmp").c_str());
  ::unlink(path.c_str());
}

void ArtifactStore::remove_content(const std::string& sha256) const {
  ::unlink(content_path(sha256).c_str());
  sync_dir(root_ + "/sha256");
}

int64_t ArtifactStore::free_bytes() const {
  struct statvfs v {};
  if (::statvfs(root_.c_str(), &v) != 0) return -1;
  return static_cast<int64_t>(v.f_bavail) * static_cast<int64_t>(v.f_frsize);
}

FolderLock::FolderLock(std::mutex& mu, const std::string& path) : mu_(mu) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  // An open file description lock (F_OFD_SETLKW): owned by this descriptor, not the process, so
  // the kernel's deadlock check (which sees processes, not threads) never refuses it falsely and
  // no other descriptor's close releases it.
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_pid = 0;
  int rc = -1;
  while (fd_ >= 0 && (rc = ::fcntl(fd_, F_OFD_SETLKW, &fl)) == -1 && errno == EINTR) {
  }
  if (fd_ < 0 || rc == -1) {
    spdlog::warn("{}",
                 nlohmann::json({{"event", "artifact_lock_unshared"}, {"path", path}, {"error", std::strerror(errno)}})
                     .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
}

FolderLock::FolderLock(FolderLock&& o) noexcept : mu_(std::move(o.mu_)), fd_(std::exchange(o.fd_, -1)) {}

FolderLock::~FolderLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the file lock, before the mutex
}

namespace {
// 64 locks for every upload (ids hashed by FNV-1a: the same on every server, whatever its
// standard library): the mutex and the file of one slot go together.
constexpr size_t kUploadLocks = 64;
size_t upload_slot(const std::string& id) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : id) h = (h ^ c) * 1099511628211ULL;
  return static_cast<size_t>(h % kUploadLocks);
}
}  // namespace

FolderLock ArtifactStore::upload_lock(const std::string& artifact_id) const {
  static std::array<std::mutex, kUploadLocks> locks;
  const size_t slot = upload_slot(artifact_id);
  return FolderLock(locks[slot], root_ + "/locks/upload-" + std::to_string(slot));
}

FolderLock ArtifactStore::content_lock() const {
  static std::mutex mu;
  return FolderLock(mu, root_ + "/locks/content");
}

}  // namespace gpurent
