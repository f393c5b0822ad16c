// slurm_cli: the Slurm wrapper (src/exec/slurm_cli.h) against a real local Slurm cluster
// (scripts/slurm-local): inventory with fake GPUs, a job on named nodes with its environment and
// GPU indices, a failing job's exit code, cancel, requeue. Skipped without root or Slurm.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "exec/slurm_cli.h"
#include "server_fixture.h"

namespace gpurent {
namespace {

namespace fs = std::filesystem;

class LocalSlurm : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = testing::local_slurm_skip_reason(); !why.empty()) GTEST_SKIP() << why;
    char tmpl[] = "/tmp/gpurent-slurm-cli-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    const std::string start = std::string(GPURENT_SOURCE_DIR) + "/scripts/slurm-local start " + dir_ + " 2 4";
    ASSERT_EQ(std::system(start.c_str()), 0) << "the local cluster did not start";
    testing::use_local_slurm_tools(dir_);
    cli_ = std::make_unique<SlurmCli>(SlurmSettings{dir_ + "/slurm.conf", "", "h100", 20'000});
  }
  void TearDown() override {
    if (dir_.empty()) return;
    (void)std::system((std::string(GPURENT_SOURCE_DIR) + "/scripts/slurm-local stop " + dir_).c_str());
    fs::remove_all(dir_);
  }
  // Polls until the job is in one of `states` (10 s at most).
  SlurmJob wait_state(int64_t id, const std::vector<std::string>& states) {
    SlurmJob last;
    for (int i = 0; i < 100; ++i) {
      auto jobs = cli_->jobs();
      EXPECT_TRUE(jobs.ok()) << jobs.error().message;
      if (jobs)
        for (const auto& j : *jobs)
          if (j.id == id) {
            last = j;
            for (const auto& s : states)
              if (j.state == s) return j;
          }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "job " << id << " never reached the state; last " << last.state << " (" << last.reason << ")";
    return last;
  }
  std::string dir_;
  std::unique_ptr<SlurmCli> cli_;
};

TEST_F(LocalSlurm, slurm_cli_RunsTracksCancelsAndRequeuesRealJobs) {
  auto nodes = cli_->nodes();
  ASSERT_TRUE(nodes.ok()) << nodes.error().message;
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ((*nodes)[0].gpus, 4);
  EXPECT_EQ((*nodes)[0].gpu_type, "h100");

  SlurmSubmit s;
  s.name = "gpurent-echo";
  s.comment = "job_0000000000000001";
  s.nodes = {"gpn2"};
  s.gpus_per_node = 2;
  s.command = {"sh", "-c", "echo \"$CUDA_VISIBLE_DEVICES|$GREETING\" > " + dir_ + "/out.txt"};
  s.env = {{"GREETING", "hello, 世界"}};
  s.time_limit_s = 90;
  auto id = cli_->submit(s);
  ASSERT_TRUE(id.ok()) << id.error().message;
  SlurmJob done = wait_state(*id, {"COMPLETED", "FAILED"});
  EXPECT_EQ(done.state, "COMPLETED");
  EXPECT_EQ(done.comment, "job_0000000000000001");
  EXPECT_EQ(done.nodes, std::vector<std::string>{"gpn2"});
  std::ifstream out(dir_ + "/out.txt");
  std::string line;
  std::getline(out, line);
  EXPECT_EQ(line, "0,1|hello, 世界");

  s.command = {"sh", "-c", "exit 3"};
  auto failing = cli_->submit(s);
  ASSERT_TRUE(failing.ok());
  SlurmJob failed = wait_state(*failing, {"FAILED", "COMPLETED"});
  EXPECT_EQ(failed.state, "FAILED");
  EXPECT_EQ(failed.exit_code, 3);

  s.command = {"sleep", "60"};
  s.nodes = {"gpn1"};
  s.requeue = true;
  auto longer = cli_->submit(s);
  ASSERT_TRUE(longer.ok());
  SlurmJob running = wait_state(*longer, {"RUNNING"});
  EXPECT_EQ(running.gpu_indices, (std::vector<int64_t>{0, 1}));
  ASSERT_TRUE(cli_->requeue(*longer).ok());
  SlurmJob requeued = wait_state(*longer, {"PENDING", "RUNNING"});
  EXPECT_EQ(requeued.restarts, 1);
  ASSERT_TRUE(cli_->cancel(*longer).ok());
  EXPECT_EQ(wait_state(*longer, {"CANCELLED"}).state, "CANCELLED");

  s.nodes = {"no-such-node"};
  auto bad = cli_->submit(s);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("sbatch failed"), std::string::npos) << bad.error().message;
}

}  // namespace
}  // namespace gpurent
