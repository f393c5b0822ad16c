// ArtifactStore's locks hold across processes: servers sharing one artifact folder serialise an
// upload's chunks and the content files' publish and remove as one server's threads do.
#include "server/services/artifact_store.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

namespace gpurent {
namespace {

namespace fs = std::filesystem;

// Whether another process could take a write lock on every file under `dir` now (F_SETLK, never
// waiting): false while any of them is held.
bool another_process_could_lock_all(const std::string& dir) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const int fd = ::open(e.path().c_str(), O_RDWR | O_CLOEXEC);
      struct flock fl {};
      fl.l_type = F_WRLCK;
      fl.l_whence = SEEK_SET;
      if (fd < 0 || ::fcntl(fd, F_SETLK, &fl) == -1) ::_exit(1);
    }
    ::_exit(ec ? 2 : 0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST(ArtifactStore, ItsLocksHoldAcrossProcesses) {
  const std::string root = ::testing::TempDir() + "gpurent-artifact-locks-" + std::to_string(::getpid());
  fs::remove_all(root);
  ArtifactStore files(root);
  ASSERT_TRUE(files.init().ok());
  {
    auto upload = files.upload_lock("art_0123456789abcdef");
    ASSERT_TRUE(upload.shared());
    EXPECT_FALSE(another_process_could_lock_all(root + "/locks")) << "a second server would write the same upload";
  }
  EXPECT_TRUE(another_process_could_lock_all(root + "/locks")) << "released when it goes";
  {
    auto content = files.content_lock();
    ASSERT_TRUE(content.shared());
    EXPECT_FALSE(another_process_could_lock_all(root + "/locks"));
  }
  EXPECT_TRUE(another_process_could_lock_all(root + "/locks"));
  // Moved, it is still held once, and released once.
  {
    auto first = files.upload_lock("art_0123456789abcdef");
    FolderLock moved(std::move(first));
    EXPECT_FALSE(another_process_could_lock_all(root + "/locks"));
  }
  EXPECT_TRUE(another_process_could_lock_all(root + "/locks"));
  fs::remove_all(root);
}

}  // namespace
}  // namespace gpurent
