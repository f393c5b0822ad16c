// The scheduler inside the real server: the control loop admits and places pending jobs, the
// simulated executor runs them for their expected duration, pending jobs say why they wait, a
// failed node requeues its jobs and records a fault, and placements survive kill -9.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <set>
#include <thread>

#include "server_fixture.h"

namespace gpurent::testing {
namespace {

auto state_is(const std::string& want) {
  return [want](const json& j) { return j.at("status").at("state") == want; };
}

void world(const ServerProcess& s, int nodes) {
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  for (int i = 1; i <= nodes; ++i)
    expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "n" + std::to_string(i))), "node");
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme")), "tenant");
  json p = project_doc("acme", "vision");
  p["quota"]["max_concurrent_jobs"] = 3;
  expect_2xx(s.admin("POST", "/api/v1/projects", p), "project");
}

json job(const std::string& name, int workers, int gpus, std::optional<int> seconds) {
  json j = job_doc("vision", name);
  j["workers"] = workers;
  j["gpus_per_worker"] = gpus;
  j["constraints"] = {{"gpu_models", {"h100-sxm5-80gb"}}};
  if (seconds) j["expected_duration_seconds"] = *seconds; else j.erase("expected_duration_seconds");
  return j;
}

// Submits a job and waits until it runs; returns (job id, node of its first worker).
std::pair<std::string, std::string> run_job(const ServerProcess& s, const std::string& name, int gpus) {
  std::string id = expect_2xx(s.admin("POST", "/api/v1/jobs", job(name, 1, gpus, std::nullopt)), name).body.at("id");
  json running = wait_for(s, "/api/v1/jobs/" + id, state_is("running"));
  return {id, running["status"]["placement"][0]["node"]};
}

// Marks a node unavailable with a reason, through the API.
void fail_node(const ServerProcess& s, const std::string& node, const std::string& why) {
  json n = s.admin("GET", "/api/v1/nodes/" + node).body;
  n["state"] = "unavailable";
  n["state_reason"] = why;
  expect_2xx(s.admin("PUT", "/api/v1/nodes/" + node, n), "node down");
}

TEST(Scheduler, PlacesRunsAndFinishesJobsAndSaysWhyOthersWait) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "100"});
  world(s, 1);
  std::string id = expect_2xx(s.admin("POST", "/api/v1/jobs", job("short", 1, 4, 1)), "job").body.at("id");
  json admitted = wait_for(s, "/api/v1/jobs/" + id, [](const json& j) { return j["status"]["state"] != "pending"; });
  const json& w = admitted.at("status").at("placement").at(0);
  EXPECT_EQ(w.at("gpus").size(), 4u);
  EXPECT_EQ(w.at("nvlink_domain"), "nvswitch-0");
  EXPECT_EQ(s.admin("GET", "/api/v1/nodes/" + w.at("node").get<std::string>()).body.at("name"), "n1");
  wait_for(s, "/api/v1/jobs/" + id, state_is("succeeded"));
  json events = s.admin("GET", "/api/v1/jobs/" + id + "/events").body.at("items");
  std::vector<std::string> path;
  for (const auto& e : events) path.push_back(e.at("to"));
  EXPECT_EQ(path, (std::vector<std::string>{"pending", "admitted", "running", "succeeded"})) << events.dump();

  // Too big for the one node: waits, and says it never fits and what would.
  std::string big = expect_2xx(s.admin("POST", "/api/v1/jobs", job("big", 2, 8, std::nullopt)), "big").body.at("id");
  json waiting = wait_for(s, "/api/v1/jobs/" + big, [](const json& j) {
    return j["status"]["reason"].get<std::string>().rfind("capacity:", 0) == 0;
  });
  EXPECT_EQ(waiting["status"]["state"], "pending");
  EXPECT_EQ(waiting["status"]["reason"],
            "capacity: never fits: 2 × 8 GPU (NVIDIA H100 SXM5 80GB): it needs 16 GPUs and the allowed nodes have 8 in "
            "all; the largest shape that fits is 1 × 8 GPU")
      << waiting.dump();
  // The concurrent-jobs quota (3) holds the fourth small job back.
  for (const char* n : {"a", "b", "c", "d"}) expect_2xx(s.admin("POST", "/api/v1/jobs", job(n, 1, 1, std::nullopt)), n);
  json d = wait_for(s, "/api/v1/jobs/d", [](const json& j) {
    return j["status"]["reason"].get<std::string>().find("concurrent jobs") != std::string::npos;
  });
  EXPECT_EQ(d["status"]["reason"], "quota: project vision runs 3 of 3 concurrent jobs");
  // The reason is a message code with arguments, rendered in the reader's language: ?lang= or
  // Accept-Language; an unknown ?lang= is an error naming it.
  EXPECT_EQ(d["status"]["reason_message"],
            json::parse(R"({"code":"sched.quota.concurrent_jobs","args":{"limit":"3","project":"vision","running":"3"}})"));
  EXPECT_EQ(s.admin("GET", "/api/v1/jobs/d?lang=zh").body["status"]["reason"], "配额：项目 vision 已在运行 3 个作业，并发上限为 3 个");
  auto cli = s.client();
  auto zh = cli.Get("/api/v1/jobs/d", {{"Authorization", "Bearer " + s.admin_token()},
                                       {"Accept-Language", "zh-CN,zh;q=0.9,en;q=0.8"}});
  ASSERT_TRUE(zh);
  EXPECT_EQ(json::parse(zh->body)["status"]["reason"], "配额：项目 vision 已在运行 3 个作业，并发上限为 3 个");
  json big_zh = s.admin("GET", "/api/v1/jobs/" + big + "?lang=zh-CN").body;
  EXPECT_EQ(big_zh["status"]["reason"].get<std::string>().rfind("容量：永远无法放下：2 × 8 张 GPU（NVIDIA H100 SXM5 80GB）", 0), 0u)
      << big_zh.dump();
  json events_zh = s.admin("GET", "/api/v1/jobs/" + id + "/events?lang=zh").body.at("items");
  EXPECT_EQ(events_zh.back().at("reason"), "运行满预计时长后结束（模拟执行器）") << events_zh.dump();
  EXPECT_EQ(events_zh.back().at("reason_message").at("code"), "exec.sim.finished");
  auto bad = s.admin("GET", "/api/v1/jobs/d?lang=klingon");
  EXPECT_EQ(bad.status, 422);
  EXPECT_NE(bad.reason_for("lang").find("unknown language 'klingon' (available: en, zh)"), std::string::npos) << bad.describe();
  // Cancelling one lets it start.
  expect_2xx(s.admin("POST", "/api/v1/jobs/a/cancel"), "cancel a");
  json d_running = wait_for(s, "/api/v1/jobs/d", state_is("running"));
  // Its time in the queue is not cold start: the run's capacity was committed (requested_at) when
  // the scheduler placed it, not when it was submitted.
  const json runs = s.admin("GET", "/api/v1/allocations?limit=100").body;
  int d_runs = 0;
  for (const auto& r : runs["items"]) {
    if (r["job"] != "d") continue;
    ++d_runs;
    EXPECT_EQ(r["requested_at"], r["admitted_at"]) << r.dump();
    EXPECT_GT(r["requested_at"].get<std::string>(), d_running["created_at"].get<std::string>()) << r.dump();
    EXPECT_LE(r["requested_at"].get<std::string>(), r["running_at"].get<std::string>()) << r.dump();
  }
  EXPECT_EQ(d_runs, 1) << runs.dump();
}

// fgdauto in the server: its rehearsal runs off the control loop (jobs are placed under FGD's
// scores meanwhile) and its choice is adopted at a later tick; jobs keep being placed throughout.
TEST(Scheduler, FgdautoRehearsesOffTheControlLoop) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--sched-policy", "fgdauto"});
  world(s, 2);
  std::vector<std::string> ids;
  for (const char* n : {"a", "b", "c"})
    ids.push_back(expect_2xx(s.admin("POST", "/api/v1/jobs", job(n, 1, 2, 1)), n).body.at("id"));
  for (const auto& id : ids) wait_for(s, "/api/v1/jobs/" + id, state_is("succeeded"));
  // Later submissions (after the choice is adopted) are placed too.
  std::string late = expect_2xx(s.admin("POST", "/api/v1/jobs", job("late", 1, 4, std::nullopt)), "late").body.at("id");
  wait_for(s, "/api/v1/jobs/" + late, state_is("running"));
  EXPECT_EQ(s.log().find("policy_preparation_failed"), std::string::npos) << s.log();
}

// The simulated executor stops a job that would outrun its time limit, as Slurm would; a job
// that ends within its limit succeeds.
TEST(Scheduler, TheSimulatedExecutorStopsAJobAtItsTimeLimit) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "0"});
  world(s, 1);
  json over = job("over", 1, 1, 30);
  over["time_limit_seconds"] = 1;
  json within = job("within", 1, 1, 1);
  within["time_limit_seconds"] = 60;
  const std::string a = expect_2xx(s.admin("POST", "/api/v1/jobs", over), "over").body.at("id");
  const std::string b = expect_2xx(s.admin("POST", "/api/v1/jobs", within), "within").body.at("id");
  json killed = wait_for(s, "/api/v1/jobs/" + a, state_is("failed"));
  EXPECT_EQ(killed["status"]["reason"], "killed by its time limit of 1 s (simulated executor)");
  EXPECT_EQ(killed["time_limit_seconds"], 1);
  wait_for(s, "/api/v1/jobs/" + b, state_is("succeeded"));
}

TEST(Scheduler, NodeFailureRequeuesAndRecordsAFault) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50"});
  world(s, 2);
  const auto [id, node] = run_job(s, "long", 8);
  run_job(s, "other", 8);  // fills the other node, so the requeued job has to wait
  fail_node(s, node, "Xid 79: GPU has fallen off the bus");
  json requeued = wait_for(s, "/api/v1/jobs/" + id, state_is("pending"));
  EXPECT_TRUE(requeued["status"]["placement"].empty());
  json events = s.admin("GET", "/api/v1/jobs/" + id + "/events").body.at("items");
  ASSERT_GE(events.size(), 5u);
  EXPECT_EQ(events[3]["to"], "preempted");
  // Reasons name the node by its name, as its users know it.
  const std::string node_name = s.admin("GET", "/api/v1/nodes/" + node).body.at("name");
  EXPECT_EQ(events[3]["reason"], "requeued: node " + node_name + " failed: Xid 79: GPU has fallen off the bus");
  EXPECT_EQ(events[4]["to"], "pending");
  json faults = s.admin("GET", "/api/v1/faults").body.at("items");
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults[0]["job"], id);
  EXPECT_EQ(faults[0]["node"], node);
  EXPECT_EQ(faults[0]["reason"], "node " + node_name + " failed: Xid 79: GPU has fallen off the bus");
  // Back in service: the requeued job runs again.
  json n = s.admin("GET", "/api/v1/nodes/" + node).body;
  n["state"] = "available";
  n.erase("state_reason");
  expect_2xx(s.admin("PUT", "/api/v1/nodes/" + node, n), "node up");
  wait_for(s, "/api/v1/jobs/" + id, state_is("running"));
}

TEST(Scheduler, ReadsItsPolicyFileAndRefusesABadOne) {
  char name[] = "/tmp/gpurent_sched_XXXXXX";
  const int fd = mkstemp(name);
  ASSERT_GE(fd, 0);
  const std::string good = "policy: bestfit\nspot_notice_seconds: 5\ntenant_weights: {acme: 3}\n";
  ASSERT_EQ(write(fd, good.data(), good.size()), static_cast<ssize_t>(good.size()));
  close(fd);
  {
    ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--sched-config", name});
    world(s, 1);
    expect_2xx(s.admin("POST", "/api/v1/jobs", job("a", 1, 2, std::nullopt)), "a");
    wait_for(s, "/api/v1/jobs/a", state_is("running"));
  }
  std::ofstream(name) << "policy: best-guess\n";
  try {
    ServerProcess bad({"--sched-config", name});
    ADD_FAILURE() << "the server started with an unknown policy in its --sched-config file";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("policy: unknown policy \"best-guess\""), std::string::npos) << e.what();
  }
  std::remove(name);
}

TEST(Scheduler, ANodeThatFailedWhileTheSchedulerWasDownStillRecordsAFault) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50"});
  world(s, 1);
  const auto [id, node] = run_job(s, "a", 8);
  s.set_extra_args({"--no-scheduler"});
  s.restart();
  fail_node(s, node, "PSU failure");
  s.set_extra_args({"--sched-interval-ms", "20"});
  s.restart();
  json requeued = wait_for(s, "/api/v1/jobs/" + id, state_is("pending"));
  const std::string node_name = s.admin("GET", "/api/v1/nodes/" + node).body.at("name");
  EXPECT_EQ(requeued["status"]["reason"].get<std::string>().rfind("requeued: node " + node_name + " failed: PSU failure", 0), 0u)
      << requeued.dump();
  json faults = s.admin("GET", "/api/v1/faults").body.at("items");
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults[0]["node"], node);
  EXPECT_EQ(faults[0]["reason"], "node " + node_name + " failed: PSU failure");
}

TEST(Scheduler, ReservedNodesServeTheirTenantFirstAndOthersOnlyPreemptibly) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50"});
  world(s, 1);
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("labs")), "tenant labs");
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("labs", "web")), "project web");
  const json rsv = {{"name", "acme-2027"},          {"tenant", "acme"},
                    {"nodes", {"n1"}},              {"starts_at", "2026-01-01T00:00:00Z"},
                    {"ends_at", "2036-01-01T00:00:00Z"}, {"note", "12-month reserved"}};
  // Validation: unknown node, overlapping window on the same node.
  json bad = rsv;
  bad["nodes"] = {"n1", "nope"};
  Resp r = s.admin("POST", "/api/v1/reservations", bad);
  EXPECT_EQ(r.status, 422) << r.describe();
  EXPECT_EQ(r.error_fields(), std::vector<std::string>{"nodes[1]"}) << r.describe();
  const std::string rid = expect_2xx(s.admin("POST", "/api/v1/reservations", rsv), "reservation").body.at("id");
  json twice = rsv;
  twice["name"] = "acme-again";
  EXPECT_EQ(s.admin("POST", "/api/v1/reservations", twice).status, 409);
  // A stored reservation that no longer decodes is not skipped (which would double-book n1): the
  // overlap check fails naming it, until it is mended.
  edit_database(s, "UPDATE objects SET body = json_set(body, '$.ends_at', 'never') WHERE id = '" + rid + "'");
  Resp broken = s.admin("POST", "/api/v1/reservations", twice);
  EXPECT_EQ(broken.status, 500) << broken.describe();
  EXPECT_EQ(broken.error_fields(), std::vector<std::string>{"reservations/" + rid}) << broken.describe();
  edit_database(s, "UPDATE objects SET body = json_set(body, '$.ends_at', '2036-01-01T00:00:00Z') WHERE id = '" + rid + "'");
  EXPECT_EQ(s.admin("POST", "/api/v1/reservations", twice).status, 409);
  // labs borrows the idle reserved node...
  json guest = job_doc("web", "guest");
  guest["gpus_per_worker"] = 8;
  guest["priority_class"] = "high";
  std::string gid = expect_2xx(s.admin("POST", "/api/v1/jobs", guest), "guest").body.at("id");
  json g = wait_for(s, "/api/v1/jobs/" + gid, state_is("running"));
  json events = s.admin("GET", "/api/v1/jobs/" + gid + "/events").body.at("items");
  EXPECT_NE(events[1]["reason"].get<std::string>().find("capacity reserved for tenant"), std::string::npos)
      << events.dump();
  // ... and gives it back, whatever the priorities, when acme needs it.
  json mine = job("mine", 1, 8, std::nullopt);
  mine["priority_class"] = "low";
  expect_2xx(s.admin("POST", "/api/v1/jobs", mine), "mine");
  wait_for(s, "/api/v1/jobs/mine", state_is("running"));
  json after = s.admin("GET", "/api/v1/jobs/" + gid).body;
  EXPECT_EQ(after["status"]["state"], "pending");
  EXPECT_EQ(after["status"]["reason"].get<std::string>().rfind("preempted by job", 0), 0u) << after.dump();
  EXPECT_NE(after["status"]["reason"].get<std::string>().find("its tenant's reserved capacity"), std::string::npos)
      << after.dump();
}

// A pending job, a project and an idle node whose stored records no longer decode (a codec
// tightened since, an edit by hand) are reported and left out: the scheduler goes on for
// everyone else, and a record mended by hand is taken up again.
TEST(Scheduler, RecordsThatNoLongerDecodeHoldBackOnlyThemselves) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50"});
  world(s, 2);
  const std::string web =
      expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "web")), "web").body.at("id");
  const std::string n2 = s.admin("GET", "/api/v1/nodes/n2").body.at("id");
  // Three workers of 8 GPUs never fit on two 8-GPU nodes: it waits.
  const std::string waiting =
      expect_2xx(s.admin("POST", "/api/v1/jobs", job("waiting", 3, 8, std::nullopt)), "waiting").body.at("id");
  json other = job_doc("web", "other");
  other["workers"] = 3;
  other["gpus_per_worker"] = 8;
  const std::string other_id = expect_2xx(s.admin("POST", "/api/v1/jobs", other), "other").body.at("id");
  for (const std::string& id : {waiting, other_id})
    wait_for(s, "/api/v1/jobs/" + id,
             [](const json& j) { return j["status"].value("reason", "").find("never fits") != std::string::npos; });
  s.stop();
  edit_database(s,
                "UPDATE objects SET body = json_set(body, '$.gpus_per_worker', 'lots') WHERE id = '" + waiting + "'");
  edit_database(s, "UPDATE objects SET body = json_set(body, '$.quota', 'none') WHERE id = '" + web + "'");
  edit_database(s, "UPDATE objects SET body = json_set(body, '$.gpus', 'many') WHERE id = '" + n2 + "'");
  s.start();
  // The rest of the cluster is scheduled: a job of a sound project runs on the sound node.
  json ok = job("ok", 1, 4, std::nullopt);
  const std::string ok_id = expect_2xx(s.admin("POST", "/api/v1/jobs", ok), "ok").body.at("id");
  json running = wait_for(s, "/api/v1/jobs/" + ok_id, state_is("running"));
  EXPECT_EQ(running["status"]["placement"][0]["node"], s.admin("GET", "/api/v1/nodes/n1").body.at("id"));
  // A job of the broken project is held: its quota cannot be read (and a new one is refused,
  // naming the record: its quota cannot be checked).
  Resp refused = s.admin("POST", "/api/v1/jobs", job_doc("web", "another"));
  EXPECT_EQ(refused.status, 500) << refused.describe();
  EXPECT_EQ(refused.error_fields(), std::vector<std::string>{"projects/" + web}) << refused.describe();
  json held = wait_for(s, "/api/v1/jobs/" + other_id, [](const json& j) {
    return j["status"].value("reason", "").find("the project's stored record no longer decodes") != std::string::npos;
  });
  EXPECT_EQ(held["status"]["state"], "pending") << held.dump();
  // Each broken record is listed by /readyz to an operator, and counted to anyone; it stays ready.
  Resp anonymous = s.req("GET", "/readyz", "");
  EXPECT_EQ(anonymous.status, 200) << anonymous.describe();
  EXPECT_EQ(anonymous.body["checks"]["records"], "3 undecodable") << anonymous.describe();
  EXPECT_FALSE(anonymous.body.contains("undecodable_records")) << "ids and reasons are the tenants' data";
  EXPECT_EQ(s.req("GET", "/readyz", make_user_token(s, "sched-viewer", "viewer", "acme")).status, 403);
  Resp ready = s.req("GET", "/readyz", s.admin_token());
  EXPECT_EQ(ready.status, 200) << ready.describe();
  std::set<std::string> listed;
  for (const json& r : ready.body.at("undecodable_records"))
    listed.insert(r.at("kind").get<std::string>() + "/" + r.at("id").get<std::string>());
  EXPECT_EQ(listed, (std::set<std::string>{"jobs/" + waiting, "projects/" + web, "nodes/" + n2})) << ready.describe();
  // Mended, the job is scheduled again (three single-GPU workers fit beside the 4-GPU job).
  edit_database(s, "UPDATE objects SET body = json_set(body, '$.gpus_per_worker', 1) WHERE id = '" + waiting + "'");
  EXPECT_EQ(wait_for(s, "/api/v1/jobs/" + waiting, state_is("running"))["status"]["state"], "running");
}

TEST(Scheduler, PlacementsSurviveKill9) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50"});
  world(s, 1);
  std::string a = expect_2xx(s.admin("POST", "/api/v1/jobs", job("a", 1, 4, std::nullopt)), "a").body.at("id");
  json before = wait_for(s, "/api/v1/jobs/" + a, state_is("running"));
  s.kill9();
  s.start();
  // After the restart the engine is rebuilt from the store: a keeps its GPUs, and a new job that
  // needs the other four gets exactly those.
  std::string b = expect_2xx(s.admin("POST", "/api/v1/jobs", job("b", 1, 4, std::nullopt)), "b").body.at("id");
  json bj = wait_for(s, "/api/v1/jobs/" + b, state_is("running"));
  json after = s.admin("GET", "/api/v1/jobs/" + a).body;
  EXPECT_EQ(after["status"], before["status"]);
  std::vector<int> gpus;
  for (const auto& g : before["status"]["placement"][0]["gpus"]) gpus.push_back(g);
  for (const auto& g : bj["status"]["placement"][0]["gpus"]) gpus.push_back(g);
  std::sort(gpus.begin(), gpus.end());
  EXPECT_EQ(gpus, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

}  // namespace
}  // namespace gpurent::testing
