// local_containers fault retry: a worker killed from outside its job (kill -9 of its process on
// the node, what an operator, the host's OOM killer or a chaos tool does) requeues a job that asks
// for fault retries (job.h fault_retries): the run ends, a fault is recorded on the node, the job
// runs again with the count on its status; killed once more with no retry left, it fails saying
// so. The fault-injection step of the acceptance suite (docs/acceptance.md). Skipped without root
// or Podman, or (when the image is not built yet) the Debian archive.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "container_fixture.h"
#include "server_fixture.h"

namespace gpurent::testing {
namespace {

// The pids of processes on this machine whose command line holds `mark` (pgrep -f), one per line.
// (The worker's own: podman's command line and this shell's hold the mark too.)
std::string pids_marked(const std::string& mark) {
  std::string pids = run_cmd("pgrep -f -- '^python3 -c import time; mark = .?" + mark + "' || true");
  for (char& c : pids)
    if (c == '\n') c = ' ';
  return pids;
}

// Waits up to 60 s for the job's worker (its marked process) to run, then kills it with SIGKILL.
bool kill_worker(const std::string& mark) {
  for (int i = 0; i < 600; ++i) {
    const std::string pids = pids_marked(mark);
    if (pids.find_first_not_of(' ') != std::string::npos) {
      int rc = 1;
      run_cmd("kill -9 " + pids, &rc);
      return rc == 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

TEST(ContainerFaultRetry, local_containers_AKilledWorkerRequeuesTheJobUntilItsRetriesAreUsed) {
  GPURENT_NEED_LOCAL_CONTAINERS();

  ContainerTestBox b;
  ASSERT_EQ(prepare_local_box(b, "gpurent-fault", 2), "");
  ServerProcess s(local_executor_flags(b, {"--sched-interval-ms", "200"}));
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  wait_for(s, "/api/v1/nodes?supplier=dc", [](const json& j) { return j["items"].size() == 1; });
  const std::string tenant = expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme")), "tenant").body["id"];
  b.network = "gpurent-" + tenant;
  json p = project_doc("acme", "acme-proj");
  p["quota"]["gpus_per_model"] = {{"h100-sxm5-80gb", 2}};
  expect_2xx(s.admin("POST", "/api/v1/projects", p), "project");
  const std::string token = make_user_token(s, "acme-dev", "tenant_member", "acme");

  // The worker's command line carries a mark unique to this test run, so that only it is killed.
  const std::string mark = "gpurent-fault-mark-" + std::to_string(::getpid());
  json j = job_doc("acme-proj", "chaos");
  j["image"] = kImage;
  j["command"] = {"python3", "-c", "import time; mark = '" + mark + "'; time.sleep(600)"};
  j["constraints"] = {{"gpu_models", {"h100-sxm5-80gb"}}};
  j["resources"] = {{"cpu_cores", 1}, {"memory_gib", 1}};
  j["fault_retries"] = 11;
  Resp refused = s.req("POST", "/api/v1/jobs", token, j);
  EXPECT_EQ(refused.status, 422) << refused.describe();
  EXPECT_EQ(refused.body["errors"][0]["field"], "fault_retries") << refused.describe();
  j["fault_retries"] = 1;
  const json created = expect_2xx(s.req("POST", "/api/v1/jobs", token, j), "job").body;
  EXPECT_EQ(created["fault_retries"], 1) << created.dump();
  const std::string id = created["id"];
  const std::string path = "/api/v1/jobs/" + id;
  auto state_is = [](const std::string& want) { return [want](const json& x) { return x["status"]["state"] == want; }; };

  // First kill: requeued, the retry counted, a fault recorded on the node; then it runs again.
  ASSERT_EQ(wait_for(s, path, state_is("running"), 120)["status"]["state"], "running") << s.log();
  ASSERT_TRUE(kill_worker(mark)) << "the worker never appeared: " << run_cmd("ps -ef | grep python3");
  json again = wait_for(s, path, [](const json& x) { return x["status"].value("fault_retries_used", 0) == 1; }, 60);
  ASSERT_EQ(again["status"].value("fault_retries_used", 0), 1) << again.dump() << s.log();
  const json events = s.admin("GET", path + "/events").body.at("items");
  bool requeued = false;
  for (const json& e : events)
    if (e["to"] == "pending" && e["reason"].get<std::string>().find("requeued: a worker was killed by SIGKILL from "
                                                                    "outside the job on node box (local run ") == 0) {
      requeued = true;
      EXPECT_NE(e["reason"].get<std::string>().find("(fault retry 1 of 1)"), std::string::npos) << e.dump();
    }
  EXPECT_TRUE(requeued) << events.dump();
  const json faults = s.admin("GET", "/api/v1/faults").body.at("items");
  ASSERT_EQ(faults.size(), 1u) << faults.dump();
  EXPECT_EQ(faults[0]["job"], id);
  EXPECT_EQ(faults[0]["reason"].get<std::string>().rfind("a worker was killed by SIGKILL", 0), 0u) << faults.dump();
  Resp zh = s.req("GET", "/api/v1/faults?lang=zh", token);
  EXPECT_NE(zh.describe().find("被作业之外的 SIGKILL 杀死"), std::string::npos) << zh.describe();

  // Second kill, no retry left: the job fails and says why.
  ASSERT_EQ(wait_for(s, path, state_is("running"), 120)["status"]["state"], "running") << s.log();
  ASSERT_TRUE(kill_worker(mark));
  const json failed = wait_for(s, path, state_is("failed"), 60);
  ASSERT_EQ(failed["status"]["state"], "failed") << failed.dump() << s.log();
  EXPECT_NE(failed["status"]["reason"].get<std::string>().find("a worker was killed again after all 1 fault retries were used"),
            std::string::npos)
      << failed.dump();
  EXPECT_EQ(failed["status"]["fault_retries_used"], 1);
  // Two runs, both closed: the first ended at the kill, billing stops there.
  int runs = 0;
  const json all = s.admin("GET", "/api/v1/allocations?limit=100").body;
  for (const json& a : all["items"])
    if (a["job_id"] == id) {
      ++runs;
      EXPECT_EQ(a["state"], "closed") << a.dump();
    }
  EXPECT_EQ(runs, 2) << all.dump();
  EXPECT_EQ(s.admin("GET", "/api/v1/faults").body.at("items").size(), 1u) << "the last kill failed the job: no requeue";
}

}  // namespace
}  // namespace gpurent::testing
