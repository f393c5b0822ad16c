// The log capper (services/log_capper.h) on real files in /tmp, one pass at a time: a watched log
// past the cap is capped, a log no longer watched is left alone, and an ended run's log is capped
// once more after it ended and then no longer.
#include "server/services/log_capper.h"

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

constexpr int64_t kCapMiB = 1024 * 1024;

struct CapperDir {
  std::string path;
  CapperDir() {
    char tmpl[] = "/tmp/gpurent-log-capper-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~CapperDir() { fs::remove_all(path); }
};

void append_bytes(const std::string& path, int64_t n) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  ASSERT_GE(fd, 0);
  const std::string line(99, 'x');
  for (int64_t done = 0; done < n; done += 100) ASSERT_EQ(::write(fd, (line + "\n").data(), 100), 100);
  ASSERT_EQ(::fsync(fd), 0);
  ::close(fd);
}

int64_t held_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0);
  return static_cast<int64_t>(st.st_blocks) * 512;
}

TEST(LogCapper, CapsWhatItWatchesAndAnEndedRunsLogOnceMore) {
  CapperDir d;
  const std::string running = d.path + "/job_1-5.log", ended = d.path + "/job_2-6.log", other = d.path + "/x.log";
  for (const auto& p : {running, ended, other}) append_bytes(p, 4 * kCapMiB);
  LogCapper capper(d.path, kCapMiB, 0);
  capper.watch({{running, {"job_1", 5, false}}, {ended, {"job_2", 6, true}}});
  capper.pass();
  EXPECT_LE(held_of(running), kCapMiB + 64 * 1024);
  EXPECT_LE(held_of(ended), kCapMiB + 64 * 1024);
  EXPECT_GE(held_of(other), 4 * kCapMiB) << "not watched";

  // Both grow again: the running one is capped again, the ended one (capped after its end) not.
  append_bytes(running, 3 * kCapMiB);
  append_bytes(ended, 3 * kCapMiB);
  capper.pass();
  EXPECT_LE(held_of(running), kCapMiB + 64 * 1024);
  EXPECT_GE(held_of(ended), 3 * kCapMiB);
  // Forgotten and seen ended anew (a run listed again): capped once more.
  capper.watch({});
  capper.pass();
  capper.watch({{ended, {"job_2", 6, true}}});
  capper.pass();
  EXPECT_LE(held_of(ended), kCapMiB + 64 * 1024);
}

TEST(LogCapper, AFolderThatIsNotThereYetIsLookedForAgain) {
  CapperDir d;
  const std::string dir = d.path + "/out";
  LogCapper capper(dir, kCapMiB, 0);
  capper.watch({{dir + "/job_1-5.log", {"job_1", 5, false}}});
  capper.pass();  // no folder: nothing to cap, and the probe waits for it
  fs::create_directory(dir);
  append_bytes(dir + "/job_1-5.log", 4 * kCapMiB);
  capper.pass();
  EXPECT_LE(held_of(dir + "/job_1-5.log"), kCapMiB + 64 * 1024);
}

}  // namespace
}  // namespace gpurent
