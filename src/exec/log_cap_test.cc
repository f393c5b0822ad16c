// exec/log_cap.h on a real file in /tmp: a log past the cap keeps its last bytes and its size, the
// space before them is given back (a hole reading as zeros, skipped by first_kept_byte), a writer
// appending through a descriptor opened before goes on at the end, a log under the cap (or just
// capped) is left alone, links, FIFOs, files with a second name and missing files are refused,
// never followed; the probe finds /tmp's file system usable and leaves nothing behind.
#include "exec/log_cap.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace gpurent {
namespace {

namespace fs = std::filesystem;

struct CapTempDir {
  std::string path;
  CapTempDir() {
    char tmpl[] = "/tmp/gpurent-log-cap-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~CapTempDir() { fs::remove_all(path); }
};

constexpr int64_t kMiB = 1024 * 1024;

void append_text(int fd, const std::string& s) {
  ASSERT_EQ(::write(fd, s.data(), s.size()), static_cast<ssize_t>(s.size()));
}

// `n` bytes of numbered lines ("line 000123\n", 12 bytes each).
std::string numbered_lines(int64_t n, int64_t first = 0) {
  std::string s;
  char buf[32];
  for (int64_t i = first; static_cast<int64_t>(s.size()) < n; ++i) {
    std::snprintf(buf, sizeof buf, "line %06lld\n", static_cast<long long>(i % 1000000));
    s += buf;
  }
  s.resize(static_cast<size_t>(n));
  return s;
}

struct LogSpace {
  int64_t size = 0, held = 0;
};
LogSpace space_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return {static_cast<int64_t>(st.st_size), static_cast<int64_t>(st.st_blocks) * 512};
}

std::string read_log_range(const std::string& path, int64_t at, int64_t n) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  std::string buf(static_cast<size_t>(n), '\0');
  const ssize_t got = ::pread(fd, buf.data(), buf.size(), at);
  ::close(fd);
  buf.resize(got > 0 ? static_cast<size_t>(got) : 0);
  return buf;
}

TEST(LogCap, KeepsTheLastBytesAndTheSizeAndGivesTheRestBack) {
  CapTempDir d;
  const std::string path = d.path + "/job_1-7.log";
  const int writer = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  ASSERT_GE(writer, 0);
  const std::string text = numbered_lines(8 * kMiB);
  append_text(writer, text);
  ASSERT_EQ(::fsync(writer), 0);
  ASSERT_GE(space_of(path).held, 8 * kMiB);

  auto freed = cap_log(path, kMiB);
  ASSERT_TRUE(freed.ok()) << freed.error().message;
  EXPECT_GE(*freed, 6 * kMiB);
  const LogSpace after = space_of(path);
  EXPECT_EQ(after.size, 8 * kMiB);  // offsets stay where they were
  EXPECT_LE(after.held, kMiB + 64 * 1024);
  EXPECT_GE(after.held, kMiB - 64 * 1024);

  const int rd = ::open(path.c_str(), O_RDONLY);
  const int64_t kept = first_kept_byte(rd, after.size);
  ::close(rd);
  EXPECT_GT(kept, 8 * kMiB - kMiB - 64 * 1024);
  EXPECT_LE(kept, 7 * kMiB);
  EXPECT_EQ(read_log_range(path, kept, 8 * kMiB - kept), text.substr(static_cast<size_t>(kept)));
  EXPECT_EQ(read_log_range(path, 0, 4096), std::string(4096, '\0'));  // the hole

  // The writer goes on at the end; capped again only once it passes the cap again.
  append_text(writer, "the end\n");
  EXPECT_EQ(space_of(path).size, 8 * kMiB + 8);
  EXPECT_EQ(read_log_range(path, 8 * kMiB, 8), "the end\n");
  auto again = cap_log(path, kMiB);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, 0);
  append_text(writer, numbered_lines(3 * kMiB));
  ASSERT_EQ(::fsync(writer), 0);
  auto third = cap_log(path, kMiB);
  ASSERT_TRUE(third.ok());
  EXPECT_GE(*third, 2 * kMiB);
  ::close(writer);  // (a file system that preallocates for an open writer trims it at close)
  EXPECT_LE(space_of(path).held, kMiB + 64 * 1024);
}

TEST(LogCap, ALogUnderTheCapIsLeftAlone) {
  CapTempDir d;
  const std::string path = d.path + "/small.log";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT, 0600);
  append_text(fd, numbered_lines(kMiB + 32 * 1024));  // over the cap, within its margin
  ::fsync(fd);
  ::close(fd);
  auto freed = cap_log(path, kMiB);
  ASSERT_TRUE(freed.ok());
  EXPECT_EQ(*freed, 0);
  const int rd = ::open(path.c_str(), O_RDONLY);
  EXPECT_EQ(first_kept_byte(rd, space_of(path).size), 0);
  ::close(rd);
  EXPECT_EQ(read_log_range(path, 0, 12), "line 000000\n");
}

TEST(LogCap, AnEmptyFileAndAFileThatIsAllHoleHoldNothing) {
  CapTempDir d;
  const std::string path = d.path + "/empty.log";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT, 0600);
  EXPECT_EQ(first_kept_byte(fd, 0), 0);
  ASSERT_EQ(::ftruncate(fd, 3 * kMiB), 0);  // all hole
  EXPECT_EQ(first_kept_byte(fd, 3 * kMiB), 3 * kMiB);
  ::close(fd);
}

TEST(LogCap, LinksFifosAndMissingFilesAreRefused) {
  CapTempDir d;
  const std::string target = d.path + "/target";
  const int fd = ::open(target.c_str(), O_WRONLY | O_CREAT, 0600);
  append_text(fd, numbered_lines(4 * kMiB));
  ::fsync(fd);
  ::close(fd);
  fs::create_symlink(target, d.path + "/link.log");
  auto link = cap_log(d.path + "/link.log", kMiB);
  ASSERT_FALSE(link.ok());
  EXPECT_EQ(space_of(target).held >= 4 * kMiB, true) << "the link's target is untouched";

  ASSERT_EQ(::mkfifo((d.path + "/fifo.log").c_str(), 0600), 0);
  auto fifo = cap_log(d.path + "/fifo.log", kMiB);  // returns at once: no reader, no blocking
  ASSERT_FALSE(fifo.ok());

  auto missing = cap_log(d.path + "/none.log", kMiB);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, Code::kNotFound);
  EXPECT_FALSE(cap_log(target, 0).ok());

  // A second name for another file: neither name is capped.
  ASSERT_EQ(::link(target.c_str(), (d.path + "/hard.log").c_str()), 0);
  auto hard = cap_log(d.path + "/hard.log", kMiB);
  ASSERT_FALSE(hard.ok());
  EXPECT_NE(hard.error().message.find("other hard links"), std::string::npos) << hard.error().message;
  EXPECT_GE(space_of(target).held, 4 * kMiB);
}

TEST(LogCap, TheProbeSaysWhetherAFoldersFileSystemPunchesAndFindsTheDataAfter) {
  CapTempDir d;
  Status usable = probe_hole_punching(d.path);
  EXPECT_TRUE(usable.ok()) << usable.error().message << " (/tmp is expected on ext4, XFS, btrfs or tmpfs)";
  EXPECT_TRUE(fs::is_empty(d.path)) << "the probe's scratch file is removed";
  Status none = probe_hole_punching(d.path + "/not-there");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, Code::kNotFound);
}

}  // namespace
}  // namespace gpurent
