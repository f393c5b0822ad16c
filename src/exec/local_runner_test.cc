// The local runner (exec/local_runner.h) with plain batch scripts (no container): runs go through
// PENDING/RUNNING to COMPLETED, FAILED with the exit status, TIMEOUT at the time limit and
// CANCELLED; they run on exactly the GPUs given; they outlive the runner that started them (a new
// runner on the same folder finds them, as a restarted server does); a run whose wrapper was killed
// reads as NODE_FAIL; ids are never reused; submissions for another node or GPU are refused.
#include "exec/local_runner.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace gpurent {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/gpurent-local-runner-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() {
    // Runs still going (a failed test) are stopped, then the folder goes.
    for (const auto& e : fs::directory_iterator(path))
      if (std::ifstream f(e.path() / "pid"); f) {
        pid_t pid = 0;
        f >> pid;
        if (pid > 1) ::kill(pid, SIGKILL);
      }
    fs::remove_all(path);
  }
};

std::string slurp(const std::string& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

SlurmSubmit job(const std::string& comment, const std::string& body, const std::string& out_dir) {
  SlurmSubmit s;
  s.name = "gpurent-" + comment;
  s.comment = comment;
  s.nodes = {"box"};
  s.script = body;
  s.output = out_dir + "/" + comment + "-%j.log";
  return s;
}

// Waits until run `id` is in `state` (or 30 s pass); returns what the runner last said of it.
SlurmJob wait_state(LocalRunner& r, int64_t id, const std::string& state) {
  SlurmJob last;
  for (int i = 0; i < 300; ++i) {
    auto jobs = r.jobs();
    EXPECT_TRUE(jobs) << jobs.error().message;
    if (jobs)
      for (const auto& j : *jobs)
        if (j.id == id) last = j;
    if (last.state == state) return last;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ADD_FAILURE() << "run " << id << " is " << last.state << ", not " << state;
  return last;
}

TEST(LocalRunner, RunsFailsTimesOutAndCancelsOnExactlyItsGpus) {
  TempDir d;
  const std::string runs = d.path + "/runs", out = d.path + "/out";
  fs::create_directories(out);
  auto r = LocalRunner::open({runs, "box", 4, 0, 0});
  ASSERT_TRUE(r) << r.error().message;
  auto nodes = (*r)->nodes();
  ASSERT_TRUE(nodes);
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_EQ((*nodes)[0].name, "box");
  EXPECT_EQ((*nodes)[0].gpus, 4);
  EXPECT_GT((*nodes)[0].cpus, 0);
  EXPECT_GT((*nodes)[0].memory_mb, 0);

  SlurmSubmit ok = job("job_ok", "echo \"gpus=$GPURENT_RUN_GPUS node=$GPURENT_RUN_NODE run=$GPURENT_RUN_ID $GREETING\"\n", out);
  ok.env["GREETING"] = "你好 'quoted'";
  ok.gpu_indices["box"] = {1, 3};
  auto id = (*r)->submit(ok);
  ASSERT_TRUE(id) << id.error().message;
  SlurmJob done = wait_state(**r, *id, "COMPLETED");
  EXPECT_EQ(done.comment, "job_ok");
  EXPECT_EQ(done.gpu_indices, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(done.gpus_by_node["box"], (std::vector<int64_t>{1, 3}));
  ASSERT_TRUE(done.start && done.end && done.submit_time);
  EXPECT_LE(*done.submit_time, *done.start);
  EXPECT_LE(*done.start, *done.end);
  EXPECT_EQ(slurp(out + "/job_ok-" + std::to_string(*id) + ".log"),
            "gpus=1,3 node=box run=" + std::to_string(*id) + " 你好 'quoted'\n");

  auto bad = (*r)->submit(job("job_bad", "echo oops; exit 3\n", out));
  ASSERT_TRUE(bad);
  EXPECT_GT(*bad, *id);
  SlurmJob failed = wait_state(**r, *bad, "FAILED");
  EXPECT_EQ(failed.exit_code, 3);

  SlurmSubmit slow = job("job_slow", "sleep 30\n", out);
  slow.time_limit_s = 1;
  auto limited = (*r)->submit(slow);
  ASSERT_TRUE(limited);
  wait_state(**r, *limited, "TIMEOUT");

  // The server blocks the signals it handles itself; a run must not inherit that (or it could not
  // be stopped).
  sigset_t term, old;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sigprocmask(SIG_BLOCK, &term, &old);
  // Its trap takes a while (as stopping a container does); the server asks again meanwhile, as it
  // does on every tick until the run is gone: the script is signalled once.
  auto cancelled =
      (*r)->submit(job("job_cancel", "trap 'echo stopping; sleep 1; exit 0' TERM; echo armed; sleep 30 & wait\n", out));
  sigprocmask(SIG_SETMASK, &old, nullptr);
  ASSERT_TRUE(cancelled);
  wait_state(**r, *cancelled, "RUNNING");
  // The script's trap is set once it says so (a loaded machine may take a while to get there).
  const std::string cancel_log = out + "/job_cancel-" + std::to_string(*cancelled) + ".log";
  for (int i = 0; i < 300 && slurp(cancel_log).find("armed") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE((*r)->cancel(*cancelled));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  wait_state(**r, *cancelled, "CANCELLED");
  const std::string said = slurp(cancel_log);
  EXPECT_NE(said.find("stopping"), std::string::npos) << "the script's own SIGTERM trap ran (it stops its container)";
  EXPECT_EQ(said.find("stopping"), said.rfind("stopping")) << "once: " << said;
  EXPECT_TRUE((*r)->cancel(*cancelled)) << "cancelling an ended run is a no-op";
  EXPECT_FALSE((*r)->cancel(9999));

  // Refused: another node, a GPU the node does not have.
  SlurmSubmit elsewhere = job("job_x", "true\n", out);
  elsewhere.nodes = {"other"};
  EXPECT_FALSE((*r)->submit(elsewhere));
  SlurmSubmit no_gpu = job("job_y", "true\n", out);
  no_gpu.gpu_indices["box"] = {4};
  EXPECT_FALSE((*r)->submit(no_gpu));
}

TEST(LocalRunner, RunsOutliveTheRunnerAndAKilledWrapperIsANodeFailure) {
  TempDir d;
  const std::string runs = d.path + "/runs", out = d.path + "/out";
  fs::create_directories(out);
  int64_t going = 0, killed = 0;
  {
    auto r = LocalRunner::open({runs, "box", 0, 0, 0});
    ASSERT_TRUE(r);
    auto a = (*r)->submit(job("job_going", "sleep 1; echo finished\n", out));
    auto b = (*r)->submit(job("job_killed", "sleep 30\n", out));
    ASSERT_TRUE(a && b);
    going = *a, killed = *b;
    wait_state(**r, going, "RUNNING");
    wait_state(**r, killed, "RUNNING");
  }  // the runner (the server) is gone; its runs are not
  pid_t pid = 0;
  std::ifstream(runs + "/" + std::to_string(killed) + "/pid") >> pid;
  ASSERT_GT(pid, 1);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);  // as a machine restart would leave it: no exit recorded

  auto r = LocalRunner::open({runs, "box", 0, 0, 0});
  ASSERT_TRUE(r);
  wait_state(**r, going, "COMPLETED");
  SlurmJob lost = wait_state(**r, killed, "NODE_FAIL");
  EXPECT_FALSE(lost.reason.empty());
  EXPECT_EQ(slurp(out + "/job_going-" + std::to_string(going) + ".log"), "finished\n");
  // Ids are never reused, even once the folders are gone.
  fs::remove_all(runs + "/" + std::to_string(going));
  fs::remove_all(runs + "/" + std::to_string(killed));
  auto again = LocalRunner::open({runs, "box", 0, 0, 0});
  ASSERT_TRUE(again);
  auto next = (*again)->submit(job("job_next", "true\n", out));
  ASSERT_TRUE(next);
  EXPECT_GT(*next, killed);
  wait_state(**again, *next, "COMPLETED");
}

// The server signals the pid it reads from the pid file: the wrapper traps its signals before it
// writes that file (a signal before the trap ended the wrapper unrecorded and left its script
// running), and a cancel that came before the script started stops it once it has.
TEST(LocalRunner, TheWrapperTrapsItsSignalsBeforeItNamesItsPid) {
  const std::string w = local_run_wrapper("/tmp/run", "n1", {0}, 7, "", 60);
  const size_t trap = w.find("trap 'stop cancelled' TERM"), pid = w.find("> pid.tmp"), child = w.find("child=$!"),
               late = w.find("[ -e ending ] && stop");
  ASSERT_NE(trap, std::string::npos) << w;
  ASSERT_NE(pid, std::string::npos) << w;
  ASSERT_NE(late, std::string::npos) << w;
  EXPECT_LT(trap, pid) << w;
  EXPECT_LT(child, late) << w;
}

TEST(LocalRunner, RefusesBadSettings) {
  EXPECT_FALSE(LocalRunner::open({"relative/dir", "box", 0, 0, 0}));
  EXPECT_FALSE(LocalRunner::open({"/tmp/x", "", 0, 0, 0}));
  EXPECT_FALSE(LocalRunner::open({"/tmp/x", "box", -1, 0, 0}));
  EXPECT_FALSE(LocalRunner::open({"/proc/no-such-place/runs", "box", 0, 0, 0}));
}

}  // namespace
}  // namespace gpurent
