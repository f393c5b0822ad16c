// slurm_executor: gpurent runs jobs on a real local Slurm cluster (scripts/slurm-local) with
// `gpurent serve --executor slurm`: the Slurm nodes become the supplier's nodes; twenty jobs of 1,
// 2, 4 and 8 GPUs (one a two-node gang) run there and succeed and reconcile with Slurm's accounting
// (sacct) to the second; a job starts in its workdir; a failing job reports its exit code; a job
// whose worker is killed from outside requeues while it has fault retries and then fails; a job
// past its time limit is killed by Slurm and reported so; a job keeps running across a restart of
// slurmctld and of gpurent; a node drained under a running job requeues it (fault record, closed
// allocation, an outage credit on the invoice) and it runs again on the other node; cancelling through gpurent cancels the
// Slurm job. Skipped without root or Slurm.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "core/clock.h"
#include "exec/slurm_cli.h"
#include "server_fixture.h"

namespace gpurent::testing {
namespace {

namespace fs = std::filesystem;

struct Cluster {
  std::string dir;
  ~Cluster() {
    if (dir.empty()) return;
    (void)std::system((std::string(GPURENT_SOURCE_DIR) + "/scripts/slurm-local stop " + dir).c_str());
    fs::remove_all(dir);
  }
};

std::string sh(const std::string& dir, const std::string& cmd) {
  const std::string full = "SLURM_CONF=" + dir + "/slurm.conf " + cmd + " 2>&1";
  std::string out;
  if (FILE* p = popen(full.c_str(), "r")) {
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    pclose(p);
  }
  return out;
}

json submit(const ServerProcess& s, const std::string& name, int workers, int gpus, const std::string& script,
            const json& extra = json::object()) {
  json j = job_doc("vision", name);
  j["workers"] = workers;
  j["gpus_per_worker"] = gpus;
  j["command"] = {"sh", "-c", script};
  j["expected_duration_seconds"] = 600;
  j["constraints"] = {{"gpu_models", {"h100-sxm5-80gb"}}};
  j["resources"] = {{"cpu_cores", 2}, {"memory_gib", 4}};
  j.merge_patch(extra);
  return expect_2xx(s.admin("POST", "/api/v1/jobs", j), name).body;
}

std::vector<std::string> server_args(const Cluster& c) {
  return {"--executor", "slurm", "--slurm-conf", c.dir + "/slurm.conf", "--slurm-gres-type", "h100",
          "--slurm-supplier", "dc", "--slurm-gpu-model", "h100-sxm5-80gb", "--slurm-driver", "550.90.07",
          "--slurm-cuda", "12.4", "--slurm-output-dir", c.dir + "/out", "--sched-interval-ms", "200",
          "--firewall-interval-s", "0"};
}

// The supplier whose nodes Slurm's become, tenant acme and its project vision; the nodes once seen.
json start_world(const ServerProcess& s, size_t nodes) {
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  json seen = wait_for(s, "/api/v1/nodes?supplier=dc", [&](const json& j) { return j["items"].size() == nodes; });
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme")), "tenant");
  json p = project_doc("acme", "vision");
  p["quota"]["gpus_per_model"] = {{"h100-sxm5-80gb", 64}};
  p["quota"].erase("max_gpus_per_job");
  p["quota"]["max_concurrent_jobs"] = 10;
  expect_2xx(s.admin("POST", "/api/v1/projects", p), "project");
  return seen;
}

// Starts scripts/slurm-local with `nodes` nodes of 8 GPUs in a fresh folder (slurmctld forgets a
// finished job `min_job_age` seconds after it ended; 0: its default).
void start_cluster(Cluster& c, int nodes, int min_job_age = 0) {
  char tmpl[] = "/tmp/gpurent-slurm-exec-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  c.dir = tmpl;
  const std::string env = min_job_age > 0 ? "SLURM_LOCAL_MIN_JOB_AGE=" + std::to_string(min_job_age) + " " : "";
  ASSERT_EQ(std::system((env + std::string(GPURENT_SOURCE_DIR) + "/scripts/slurm-local start " + c.dir + " " +
                         std::to_string(nodes) + " 8")
                            .c_str()),
            0);
  use_local_slurm_tools(c.dir);
  fs::create_directories(c.dir + "/out");
}

// Waits (90 s at most) until squeue lists no job at all (they ended and MinJobAge passed).
bool slurm_forgets_every_job(const Cluster& c) {
  for (int i = 0; i < 90; ++i) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    std::string listed = sh(c.dir, "squeue -h --states=all -o %i");
    listed.erase(std::remove_if(listed.begin(), listed.end(), ::isspace), listed.end());
    if (listed.empty()) return true;
  }
  return false;
}

auto state_is(const std::string& want) {
  return [want](const json& j) { return j["status"]["state"] == want; };
}

TEST(SlurmExecutor, slurm_JobsFlowThroughSlurmAndNodeFailuresRequeue) {
  if (const std::string why = local_slurm_skip_reason(); !why.empty()) GTEST_SKIP() << why;
  Cluster c;
  start_cluster(c, 2);
  if (HasFatalFailure()) return;

  ServerProcess s(server_args(c));
  json nodes = start_world(s, 2);
  for (const auto& n : nodes["items"]) {
    EXPECT_EQ(n["gpus"].size(), 8u);
    EXPECT_EQ(n["state"], "available");
  }

  // Twenty jobs of 1, 2, 4 and 8 GPUs (one a gang across both nodes) flow through Slurm and
  // succeed; one more fails with exit code 3.
  std::vector<std::string> ok;
  fs::create_directories(c.dir + "/work dir");
  // It runs long enough to be seen running (a loaded machine's ticks can be seconds apart: a job
  // that starts and ends between two looks keeps gpurent's GPU indices, docs/slurm.md).
  ok.push_back(submit(s, "echo", 1, 1, "echo $CUDA_VISIBLE_DEVICES $GPURENT_JOB_ID; pwd; sleep 8",
                      {{"workdir", c.dir + "/work dir"}})["id"]);
  ok.push_back(submit(s, "gang", 2, 8, "hostname")["id"]);
  const int sizes[] = {1, 2, 4, 8};
  for (int i = 0; ok.size() < 20; ++i)
    ok.push_back(submit(s, "job-" + std::to_string(i), 1, sizes[i % 4], "sleep 1")["id"]);
  const std::string bad = submit(s, "bad", 1, 1, "exit 3")["id"];
  for (const auto& id : ok) wait_for(s, "/api/v1/jobs/" + id, state_is("succeeded"), 60);
  json failed = wait_for(s, "/api/v1/jobs/" + bad, state_is("failed"), 30);
  EXPECT_EQ(failed["status"]["reason"].get<std::string>().rfind("exit code 3 (Slurm job ", 0), 0u) << failed.dump();
  // The output file is named <job id>-<Slurm job id>.log.
  bool found = false;
  for (const auto& e : fs::directory_iterator(c.dir + "/out"))
    if (e.path().filename().string().rfind(ok[0], 0) == 0) {
      std::ifstream f(e.path());
      std::string line;
      std::getline(f, line);
      // One GPU (Slurm picks which of the node's eight), and the job's id in its environment.
      EXPECT_TRUE(line.size() > 2 && line[0] >= '0' && line[0] <= '7' && line.substr(1) == " " + ok[0]) << line;
      // gpurent's placement took the index Slurm chose (seen while the job ran).
      json run = s.admin("GET", "/api/v1/allocations?state=closed&limit=100").body;
      for (const auto& al : run["items"])
        if (al["job_id"] == ok[0]) {
          EXPECT_EQ(al["placement"][0]["gpus"], json::array({line[0] - '0'})) << al.dump();
        }
      std::getline(f, line);
      EXPECT_EQ(line, c.dir + "/work dir") << "the job starts in its workdir";
      found = true;
    }
  EXPECT_TRUE(found) << "no output file for " << ok[0];
  // Every run is in the ledger, closed, with Slurm's job id and times; reconciliation against
  // Slurm's accounting (sacct: elapsed × AllocTRES gres/gpu) agrees to the second.
  json allocs = s.admin("GET", "/api/v1/allocations?state=closed&limit=100").body["items"];
  EXPECT_EQ(allocs.size(), 21u);
  for (const auto& a : allocs) EXPECT_TRUE(a.contains("slurm_job_id")) << a.dump();
  const std::string month = allocs[0]["running_at"].get<std::string>().substr(0, 7);
  // slurmctld sends finished jobs to slurmdbd in the background: wait until sacct has them all.
  json rec = wait_for(s, "/api/v1/reports/reconciliation?tenant=acme&month=" + month, [](const json& j) {
    for (const auto& row : j["rows"])
      if (row["slurm_gpu_seconds"].is_null()) return false;
    return true;
  }, 30);
  EXPECT_EQ(rec["slurm_source"], "sacct") << rec.dump();
  ASSERT_EQ(rec["rows"].size(), 21u) << rec.dump();
  for (const auto& row : rec["rows"]) {
    ASSERT_FALSE(row["slurm_gpu_seconds"].is_null()) << row.dump();
    EXPECT_EQ(row["slurm_gap_gpu_seconds"], "0") << row.dump();
    EXPECT_EQ(row["slurm_gpu_seconds"], row["allocated_gpu_seconds"]);
  }

  // A worker killed from outside (kill -9 of its process on the node) requeues a job that has a
  // fault retry left, with a fault record; killed again, the job fails saying its retries were used.
  const std::string chaos = submit(s, "chaos", 1, 1, "sleep 31337", {{"fault_retries", 1}})["id"];
  auto kill_chaos = [&] {
    for (int i = 0; i < 300; ++i) {
      std::string pids = sh(c.dir, "pgrep -f '^sleep 31337$' | tr '\\n' ' '");
      if (pids.find_first_of("0123456789") != std::string::npos) return sh(c.dir, "kill -9 " + pids + " && echo killed");
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return std::string("never ran");
  };
  wait_for(s, "/api/v1/jobs/" + chaos, state_is("running"), 30);
  EXPECT_EQ(kill_chaos(), "killed\n");
  json retried = wait_for(s, "/api/v1/jobs/" + chaos, [](const json& j) {
    return j["status"].value("fault_retries_used", 0) == 1 && j["status"]["state"] == "running";
  }, 30);
  ASSERT_EQ(retried["status"]["state"], "running") << retried.dump();
  const json chaos_events = s.admin("GET", "/api/v1/jobs/" + chaos + "/events").body.at("items");
  bool requeued = false;
  for (const json& e : chaos_events)
    requeued |= e["to"] == "pending" &&
                e["reason"].get<std::string>().rfind("requeued: a worker was killed by SIGKILL from outside the job on node ", 0) == 0;
  EXPECT_TRUE(requeued) << chaos_events.dump();
  EXPECT_EQ(kill_chaos(), "killed\n");
  json chaos_failed = wait_for(s, "/api/v1/jobs/" + chaos, state_is("failed"), 30);
  EXPECT_NE(chaos_failed["status"]["reason"].get<std::string>().find("after all 1 fault retries were used"), std::string::npos)
      << chaos_failed.dump();
  json chaos_faults = s.admin("GET", "/api/v1/faults").body.at("items");
  ASSERT_EQ(chaos_faults.size(), 1u) << chaos_faults.dump();
  EXPECT_EQ(chaos_faults[0]["job"], chaos);

  // A job that outruns its time limit: Slurm kills it a minute in (checked after the restarts).
  const std::string limited_id =
      submit(s, "limited", 1, 1, "sleep 600", {{"time_limit_seconds", 60}, {"expected_duration_seconds", 900}})["id"];
  // Restarts during running jobs: slurmctld, then gpurent; neither side loses the other's view.
  // Long enough to be seen running on a loaded machine (a 4-s job once finished between two polls).
  const std::string during = submit(s, "during-restarts", 1, 2, "sleep 12")["id"];
  wait_for(s, "/api/v1/jobs/" + during, state_is("running"), 30);
  ASSERT_EQ(std::system((std::string(GPURENT_SOURCE_DIR) + "/scripts/slurm-local restart-ctld " + c.dir).c_str()), 0);
  s.restart();
  json after = wait_for(s, "/api/v1/jobs/" + during, state_is("succeeded"), 30);
  EXPECT_NE(after["status"]["reason"].get<std::string>().find("completed (Slurm job "), std::string::npos) << after.dump();
  int runs = 0;
  json all = s.admin("GET", "/api/v1/allocations?limit=100").body;
  for (const auto& a : all["items"]) runs += a["job_id"] == during;
  EXPECT_EQ(runs, 1) << "the job ran once, across both restarts; "
                     << s.admin("GET", "/api/v1/jobs/" + during + "/events").body.dump() << "\n"
                     << s.admin("GET", "/api/v1/faults").body.dump() << "\n"
                     << s.admin("GET", "/api/v1/nodes").body.dump().substr(0, 3000);
  // The limited job was killed by Slurm at its time limit and says so (Slurm checks limits about
  // every 30 s, so this takes up to a minute and a half).
  json killed = wait_for(s, "/api/v1/jobs/" + limited_id, state_is("failed"), 150);
  EXPECT_EQ(killed["status"]["reason"].get<std::string>().rfind("killed by its time limit of 60 s (Slurm job ", 0), 0u)
      << killed.dump();

  // A node is drained under a running job: requeued with a fault, runs again on the other node —
  // only once the first run is gone. Its script ignores SIGTERM, so Slurm kills it after KillWait
  // (5 s); a run that finds the previous run's shell still alive writes its pid to `overlaps`.
  const std::string pid_file = c.dir + "/long.pid", overlaps = c.dir + "/long.overlaps";
  const std::string id = submit(s, "long", 1, 4,
                                "trap '' TERM; p=$(cat " + pid_file +
                                    " 2>/dev/null); if [ -n \"$p\" ] && kill -0 \"$p\" "
                                    "2>/dev/null; then echo \"$p\" >> " +
                                    overlaps + "; fi; echo $$ > " + pid_file + "; sleep 300 & wait")["id"];
  json running = wait_for(s, "/api/v1/jobs/" + id, state_is("running"), 30);
  auto read_pid = [&] {
    std::ifstream in(pid_file);
    std::string pid;
    in >> pid;
    return pid;
  };
  std::string first_pid;
  for (int i = 0; i < 100 && (first_pid = read_pid()).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_FALSE(first_pid.empty()) << "the first run never wrote its pid";
  const std::string node_id = running["status"]["placement"][0]["node"];
  const std::string node = s.admin("GET", "/api/v1/nodes/" + node_id).body["name"];
  sh(c.dir, "scontrol update nodename=" + node + " state=drain reason=test-psu");
  wait_for(s, "/api/v1/nodes/" + node_id, [](const json& n) { return n["state"] == "unavailable"; }, 30);
  json faults = wait_for(s, "/api/v1/faults", [](const json& j) { return j["items"].size() == 2; }, 30);
  EXPECT_TRUE(faults["items"][0]["job"] == id || faults["items"][1]["job"] == id) << faults.dump();
  // Billing stopped at the fault: the first run is closed with the requeue as its reason.
  json closed_runs = wait_for(s, "/api/v1/allocations?state=closed&limit=100", [&](const json& j) {
    for (const auto& a : j["items"])
      if (a["job_id"] == id) return true;
    return false;
  });
  for (const auto& a : closed_runs["items"]) {
    if (a["job_id"] == id) {
      EXPECT_EQ(a["end_reason"].get<std::string>().rfind("requeued: node", 0), 0u) << a.dump();
    }
  }
  json again = wait_for(s, "/api/v1/jobs/" + id, [&](const json& j) {
    return j["status"]["state"] == "running" && j["status"]["placement"][0]["node"] != node_id;
  }, 30);
  std::string second_pid;  // the second run has written its pid once it has looked at the first's
  for (int i = 0; i < 100 && (second_pid = read_pid()) == first_pid; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_NE(second_pid, first_pid);
  EXPECT_FALSE(fs::exists(overlaps)) << "the requeued job's second run started while its first still ran";
  // Cancelling through gpurent cancels the Slurm job.
  expect_2xx(s.admin("POST", "/api/v1/jobs/" + id + "/cancel", json{{"reason", "test"}}), "cancel");
  bool cancelled = false;
  for (int i = 0; i < 100 && !cancelled; ++i) {
    auto jobs = parse_squeue_json(sh(c.dir, "squeue --json"));
    ASSERT_TRUE(jobs.ok());
    int active = 0;
    for (const auto& j : *jobs)
      if (j.comment == id && (j.state == "RUNNING" || j.state == "PENDING")) ++active;
    cancelled = active == 0;
    if (!cancelled) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(cancelled) << sh(c.dir, "squeue");
  // The node comes back when Slurm resumes it.
  sh(c.dir, "scontrol update nodename=" + node + " state=resume");
  wait_for(s, "/api/v1/nodes/" + node_id, [](const json& n) { return n["state"] == "available"; }, 30);
}

// A job that ends while gpurent is down, and that slurmctld has forgotten by the time it is back
// (MinJobAge), takes its end from Slurm's accounting: it succeeded, its run billed to Slurm's end —
// not running (and billed) forever, as it did before.
TEST(SlurmExecutor, slurm_AJobThatEndedWhileTheServerWasDownTakesItsEndFromAccounting) {
  if (const std::string why = local_slurm_skip_reason(); !why.empty()) GTEST_SKIP() << why;
  Cluster c;
  start_cluster(c, 1, 3);
  if (HasFatalFailure()) return;
  ServerProcess s(server_args(c));
  start_world(s, 1);
  const std::string id = submit(s, "unwatched", 1, 1, "sleep 5")["id"];
  ASSERT_EQ(wait_for(s, "/api/v1/jobs/" + id, state_is("running"), 60)["status"]["state"], "running");
  s.kill9();
  const bool forgotten = slurm_forgets_every_job(c);  // it ends, then slurmctld forgets it
  // Slurm 22.05 purges it within a minute of MinJobAge; the 24.11 image here keeps it longer (so
  // CMakeLists.txt leaves this test out of its run), and then there is nothing this test can show.
  if (!forgotten) GTEST_SKIP() << "slurmctld still lists the finished job 90 s after it ended (MinJobAge=3)";
  const TimeMs back = SystemClock().now();
  s.start();
  const json done = wait_for(s, "/api/v1/jobs/" + id, [](const json& j) { return j["status"]["state"] != "running"; }, 120);
  EXPECT_EQ(done["status"]["state"], "succeeded") << done.dump() << s.log();
  const json runs = s.admin("GET", "/api/v1/allocations?state=closed").body;
  ASSERT_EQ(runs["items"].size(), 1u) << runs.dump();
  const TimeMs ended = *parse_rfc3339(runs["items"][0]["ended_at"].get<std::string>(), "ended_at");
  EXPECT_LT(ended, back) << "billed to Slurm's end, not to when the server came back: " << runs.dump();
  EXPECT_NE(s.log().find("slurm_ended_unwatched"), std::string::npos) << "logged (a warning: it ended unwatched)";
}

// The server is killed just after sbatch answered, before the tick that would have stored the
// submission: the job is still admitted in the store. Slurm runs it, it ends, and slurmctld
// forgets it (MinJobAge) before the server comes back. The server finds it in Slurm's accounting
// by its name and takes that end: the job is not run a second time.
TEST(SlurmExecutor, slurm_AJobThatEndedWhileTheServerWasDownBeforeItsSubmissionWasStoredRunsOnce) {
  if (const std::string why = local_slurm_skip_reason(); !why.empty()) GTEST_SKIP() << why;
  Cluster c;
  start_cluster(c, 1, 3);
  if (HasFatalFailure()) return;
  std::string real = sh(c.dir, "command -v sbatch");
  real.erase(std::remove_if(real.begin(), real.end(), ::isspace), real.end());
  ASSERT_FALSE(real.empty());
  // An sbatch that, while the flag file is there, submits and then kills its caller (the server).
  const std::string wrap = c.dir + "/wrap", flag = c.dir + "/kill-after-sbatch";
  fs::create_directories(wrap);
  std::ofstream(wrap + "/sbatch") << "#!/bin/sh\nout=$(" << real << " \"$@\"); rc=$?\nprintf '%s\\n' \"$out\"\n"
                                  << "if [ -e " << flag << " ]; then rm -f " << flag << "; kill -9 $PPID; fi\nexit $rc\n";
  fs::permissions(wrap + "/sbatch", fs::perms::owner_all);
  const std::string old_path = getenv("PATH") ? getenv("PATH") : "";
  setenv("PATH", (wrap + ":" + old_path).c_str(), 1);
  struct RestorePath {
    std::string p;
    ~RestorePath() { setenv("PATH", p.c_str(), 1); }
  } restore{old_path};

  ServerProcess s(server_args(c));
  start_world(s, 1);
  std::ofstream(flag) << "armed\n";
  const std::string id = submit(s, "once", 1, 1, "sleep 3")["id"];
  ASSERT_TRUE(s.wait_exited(std::chrono::seconds(60))) << "the sbatch wrapper kills the server" << s.log();
  s.kill9();  // reaps it
  ASSERT_FALSE(fs::exists(flag));
  if (!slurm_forgets_every_job(c)) GTEST_SKIP() << "slurmctld still lists the finished job 90 s after it ended (MinJobAge=3)";
  const TimeMs back = SystemClock().now();
  s.start();
  const json done = wait_for(
      s, "/api/v1/jobs/" + id, [](const json& j) { return j["status"]["state"] == "succeeded"; }, 120);
  EXPECT_EQ(done["status"]["state"], "succeeded") << done.dump() << s.log();
  std::ifstream comp(c.dir + "/jobcomp.log");
  std::string line;
  int runs = 0;
  while (std::getline(comp, line)) runs += line.find("JobId=") != std::string::npos;
  EXPECT_EQ(runs, 1) << "Slurm ran the job once, not again after the restart";
  const json allocs = s.admin("GET", "/api/v1/allocations?state=closed").body;
  ASSERT_EQ(allocs["items"].size(), 1u) << allocs.dump();
  const TimeMs ended = *parse_rfc3339(allocs["items"][0]["ended_at"].get<std::string>(), "ended_at");
  EXPECT_LT(ended, back) << "billed to Slurm's end: " << allocs.dump();
  EXPECT_NE(s.log().find("slurm_ran_unwatched"), std::string::npos) << s.log();
}

// A job printing far past the log cap (--job-log-max-mib 1): while it runs and after, its log
// holds about its last MiB on disk, the file's size stays all it wrote, and the logs API reads the
// end of it (the first whole line kept, and the last lines by tail). Halfway, the job waits for the
// test to have seen the cap at work (it waits at most 2 minutes): on a saturated machine the server
// may see the job running only after it has written everything, and the passes come late.
TEST(SlurmExecutor, slurm_AJobPrintingWithoutEndKeepsOnlyTheEndOfItsLog) {
  if (const std::string why = local_slurm_skip_reason(); !why.empty()) GTEST_SKIP() << why;
  Cluster c;
  start_cluster(c, 1);
  if (HasFatalFailure()) return;
  std::vector<std::string> args = server_args(c);
  args.insert(args.end(), {"--job-log-max-mib", "1"});
  ServerProcess s(args);
  start_world(s, 1);
  const std::string go = c.dir + "/go-on-printing";
  // 20 rounds of 4 MB of 17-byte lines (235,294 each): 80 MB, the second half once `go` exists.
  const std::string id = submit(s, "chatty", 1, 1,
                                "for i in $(seq 20); do yes 0123456789abcdef | head -c 3999998; "
                                "if [ $i = 10 ]; then n=0; while [ ! -e " +
                                    go +
                                    " ] && [ $n -lt 600 ]; do sleep 0.2; n=$((n+1)); done; fi; done; "
                                    "echo the end")["id"];
  const auto log_space = [&]() -> std::pair<int64_t, int64_t> {  // size, bytes held on disk
    std::error_code ec;
    for (fs::directory_iterator it(c.dir + "/out", ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      struct stat st {};
      if (name.starts_with(id + "-") && name.ends_with(".log") && ::stat(it->path().c_str(), &st) == 0)
        return {st.st_size, static_cast<int64_t>(st.st_blocks) * 512};
    }
    return {0, 0};
  };
  // The first half written (39,999,980 bytes) and the job waiting: a pass of the cap must leave
  // at most the cap and its margin held while it still runs.
  int64_t size = 0, held = 0, polls = 0;
  for (std::tie(size, held) = log_space(); size < 39'999'980 || held > 1'114'112 + 4096;
       std::tie(size, held) = log_space()) {
    ASSERT_LT(++polls, 1000) << "after 100 s: " << size << " bytes written, " << held << " held on disk" << s.log();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(size, 39'999'980);
  EXPECT_EQ(wait_for(s, "/api/v1/jobs/" + id, state_is("running"), 60)["status"]["state"], "running")
      << "the job waits for " << go;
  std::ofstream(go) << "go\n";
  for (polls = 0; size < 79'999'960; std::tie(size, held) = log_space()) {
    ASSERT_LT(++polls, 1200) << "the job wrote " << size << " bytes in 2 minutes";
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  wait_for(s, "/api/v1/jobs/" + id, state_is("succeeded"), 60);
  // The last pass after it ended: at most the cap and its margin (64 KiB) are held.
  std::tie(size, held) = log_space();
  for (int i = 0; i < 100 && held > 1'114'112; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::tie(size, held) = log_space();
  }
  EXPECT_EQ(size, 79'999'968);
  EXPECT_LE(held, 1'114'112 + 4096) << "bytes held on disk";

  Resp last = s.admin("GET", "/api/v1/jobs/" + id + "/logs?tail=2");
  ASSERT_EQ(last.status, 200) << last.describe();
  EXPECT_EQ(last.body["data"], "0123456789abcdef\nthe end\n");
  Resp from_start = s.admin("GET", "/api/v1/jobs/" + id + "/logs?limit=34");
  ASSERT_EQ(from_start.status, 200) << from_start.describe();
  const int64_t discarded = from_start.body["discarded"];
  EXPECT_GE(discarded, 79'999'968 - 1'114'112 - 4096);
  EXPECT_LE(discarded, 79'999'968 - 1'048'576);
  EXPECT_GT(from_start.body["offset"].get<int64_t>(), discarded);
  EXPECT_EQ(from_start.body["data"].get<std::string>().substr(0, 17), "0123456789abcdef\n");
  EXPECT_EQ(from_start.body["size"], 79'999'968);
  EXPECT_EQ(from_start.body["complete"], false);
}

// Topology from Slurm (scripts/slurm-local: 2 sockets x 8 cores, each half of the GPUs bound to
// one socket's cores in gres.conf, gpn1 feature ib400, gpn2 roce200): the nodes gpurent makes say
// which NUMA node each GPU is on and which RDMA NICs they have; jobs that need InfiniBand land on
// gpn1; and Slurm gives each job the CPUs and memory it states (--cpus-per-task, --mem), the CPUs
// on its GPUs' socket (--gres-flags=enforce-binding).
TEST(SlurmExecutor, slurm_NodesTakeTheirTopologyFromSlurmAndJobsTheirBinding) {
  if (const std::string why = local_slurm_skip_reason(); !why.empty()) GTEST_SKIP() << why;
  Cluster c;
  start_cluster(c, 3);
  if (HasFatalFailure()) return;
  ServerProcess s(server_args(c));
  json nodes = start_world(s, 3);
  std::map<std::string, json> by_name;
  for (const auto& n : nodes["items"]) by_name[n["name"]] = n;
  ASSERT_EQ(by_name.size(), 3u);
  for (const auto& [name, n] : by_name) {
    EXPECT_EQ(n["numa_nodes"], 2) << name;
    EXPECT_EQ(n["cpu"]["sockets"], 2) << name;
    ASSERT_EQ(n["gpus"].size(), 8u) << name;
    for (int g = 0; g < 8; ++g) EXPECT_EQ(n["gpus"][g]["numa_node"], g < 4 ? 0 : 1) << name << " GPU " << g;
  }
  EXPECT_EQ(by_name["gpn1"]["nics"], json::parse(R"([{"name": "ib400", "rdma": "infiniband", "gbps": 400}])"));
  EXPECT_EQ(by_name["gpn2"]["nics"], json::parse(R"([{"name": "roce200", "rdma": "roce_v2", "gbps": 200}])"));
  EXPECT_TRUE(by_name["gpn3"]["nics"].empty());

  // Two InfiniBand jobs of 4 GPUs: both on gpn1, one on each socket's GPUs.
  const json ib = {{"constraints", {{"gpu_models", {"h100-sxm5-80gb"}}, {"rdma", "infiniband"}}}};
  std::vector<std::string> ids;
  for (const char* name : {"ib-a", "ib-b"}) ids.push_back(submit(s, name, 1, 4, "sleep 120", ib)["id"]);
  for (const auto& id : ids) {
    json j = wait_for(s, "/api/v1/jobs/" + id, state_is("running"), 60);
    EXPECT_EQ(j["status"]["placement"][0]["node"], by_name["gpn1"]["id"]) << j.dump();
  }
  std::set<int> sockets_seen;
  auto jobs = parse_squeue_json(sh(c.dir, "squeue --json"));
  ASSERT_TRUE(jobs.ok());
  for (const auto& sj : *jobs) {
    if (std::find(ids.begin(), ids.end(), sj.comment) == ids.end() || sj.state != "RUNNING") continue;
    // "Nodes=gpn1 CPU_IDs=8-9 Mem=4096 GRES=gpu:h100:4(IDX:4-7)": the 2 cores and 4 GiB the job
    // states, on its GPUs' socket.
    const std::string detail = sh(c.dir, "scontrol -d show job " + std::to_string(sj.id));
    const size_t cpu_at = detail.find("CPU_IDs="), idx_at = detail.find("IDX:");
    ASSERT_TRUE(cpu_at != std::string::npos && idx_at != std::string::npos) << detail;
    const std::string cpu_ids = detail.substr(cpu_at + 8, detail.find_first_of(" \n", cpu_at) - cpu_at - 8);
    const size_t dash = cpu_ids.find('-');
    ASSERT_NE(dash, std::string::npos) << "two CPUs: " << detail;
    const int first = std::stoi(cpu_ids), last = std::stoi(cpu_ids.substr(dash + 1));
    const int gpu = std::stoi(detail.substr(idx_at + 4));
    EXPECT_EQ(last - first + 1, 2) << detail;
    EXPECT_EQ(first / 8, gpu / 4) << "its CPUs on its GPUs' socket: " << detail;
    EXPECT_EQ(last / 8, gpu / 4) << "its CPUs on its GPUs' socket: " << detail;
    EXPECT_NE(detail.find("Mem=4096"), std::string::npos) << detail;
    sockets_seen.insert(gpu / 4);
  }
  EXPECT_EQ(sockets_seen, (std::set<int>{0, 1})) << sh(c.dir, "squeue");
  for (const auto& id : ids) expect_2xx(s.admin("POST", "/api/v1/jobs/" + id + "/cancel", json{{"reason", "test"}}), "cancel");
}

}  // namespace
}  // namespace gpurent::testing
