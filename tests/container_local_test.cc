// local_containers: `gpurent serve --executor local --containers` runs jobs in Podman containers on
// this machine, without Slurm (exec/local_runner.h): the machine becomes the supplier's one node
// with its GPU device files (fake ones here); a job sees exactly its GPUs and its volume, runs as a
// non-root user, and its tenant reads its output through the API; a failing job says its exit
// code and last lines; a kill -9 of the server does not stop a running job, and the restarted
// server finishes it once; a cancelled job's container is stopped and removed.
// Skipped without root or Podman, or (when the image is not built yet) the Debian archive.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <thread>

#include "container_fixture.h"
#include "core/clock.h"
#include "server_fixture.h"

namespace gpurent::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPodman = "podman --runtime runc --cgroup-manager cgroupfs";

auto state_is = [](const std::string& want) {
  return [want](const json& j) { return j["status"]["state"] == want; };
};

// A program printing what the container sees as one line tagged FACTS, then sleeping SLEEP seconds
// (one line: the API refuses line breaks in a command).
const char* kFacts =
    "import json, os, glob, time; "
    "open('/data/' + os.environ['GPURENT_JOB_ID'], 'w').write('hi'); "
    "print('FACTS ' + json.dumps({'uid': os.getuid(), 'devices': sorted(glob.glob('/dev/nvidia*')),"
    " 'cuda': os.environ.get('CUDA_VISIBLE_DEVICES'), 'indices': os.environ.get('GPURENT_GPU_INDICES'),"
    " 'data': sorted(os.listdir('/data'))}), flush=True); "
    "time.sleep(float(os.environ.get('SLEEP', '0')))";

TEST(ContainerLocal, local_containers_RunWithoutSlurmAndSurviveAServerKill) {
  GPURENT_NEED_LOCAL_CONTAINERS();

  ContainerTestBox b;
  const std::string box = prepare_local_box(b, "gpurent-local", 4);
  ASSERT_EQ(box, "");
  ServerProcess s(local_executor_flags(b, {"--sched-interval-ms", "200", "--firewall-interval-s", "1"}));
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  // The machine is the supplier's node, with the four GPU device files it has.
  json nodes = wait_for(s, "/api/v1/nodes?supplier=dc", [](const json& j) { return j["items"].size() == 1; });
  ASSERT_EQ(nodes["items"].size(), 1u) << nodes.dump();
  EXPECT_EQ(nodes["items"][0]["name"], "box");
  EXPECT_EQ(nodes["items"][0]["gpus"].size(), 4u) << nodes.dump();

  const std::string tenant = expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme", "CNY")), "tenant").body["id"];
  b.network = "gpurent-" + tenant;
  json p = project_doc("acme", "acme-proj");
  p["quota"]["gpus_per_model"] = {{"h100-sxm5-80gb", 8}};
  p["quota"].erase("max_gpus_per_job");
  p["quota"]["max_concurrent_jobs"] = 10;
  expect_2xx(s.admin("POST", "/api/v1/projects", p), "project");
  const std::string token = make_user_token(s, "acme-dev", "tenant_member", "acme");
  expect_2xx(s.req("POST", "/api/v1/volumes", token, json{{"name", "data"}, {"size_gb", 10}}), "volume");
  auto submit = [&](const std::string& name, int gpus, json command, const json& extra = json::object()) {
    json j = job_doc("acme-proj", name);
    j["gpus_per_worker"] = gpus;
    j["image"] = kImage;
    j["command"] = std::move(command);
    j["expected_duration_seconds"] = 600;
    j["constraints"] = {{"gpu_models", {"h100-sxm5-80gb"}}};
    j["resources"] = {{"cpu_cores", 1}, {"memory_gib", 1}};
    j["volumes"] = {{{"name", "data"}, {"mount", "/data"}}};
    j.merge_patch(extra);
    return expect_2xx(s.req("POST", "/api/v1/jobs", token, j), name).body["id"].get<std::string>();
  };
  auto logs = [&](const std::string& id) {
    Resp r = s.req("GET", "/api/v1/jobs/" + id + "/logs?limit=1048576", token);
    return r.status == 200 ? r.body["data"].get<std::string>() : r.describe();
  };
  auto allocations_of = [&](const std::string& id) {
    int runs = 0;
    const json all = s.admin("GET", "/api/v1/allocations?limit=100").body;
    for (const auto& a : all["items"]) runs += a["job_id"] == id;
    return runs;
  };
  const json py = {"python3", "-c", kFacts};

  // A job on two GPUs: exactly their device nodes, its volume, never root; done, with its run named.
  const std::string a = submit("two-gpus", 2, py);
  json done = wait_for(s, "/api/v1/jobs/" + a, state_is("succeeded"), 120);
  ASSERT_EQ(done["status"]["state"], "succeeded") << done.dump() << logs(a) << s.log();
  EXPECT_EQ(done["status"]["reason"].get<std::string>().rfind("completed (local run ", 0), 0u) << done.dump();
  const std::string out = logs(a);
  const size_t at = out.find("FACTS ");
  ASSERT_NE(at, std::string::npos) << out;
  const json facts = json::parse(out.substr(at + 6, out.find('\n', at) - at - 6));
  EXPECT_NE(facts["uid"], 0);
  const std::string idx = facts["indices"];
  ASSERT_EQ(idx.size(), 3u) << facts.dump();
  EXPECT_EQ(facts["devices"], json::array({"/dev/nvidia" + idx.substr(0, 1), "/dev/nvidia" + idx.substr(2, 1)}));
  EXPECT_EQ(facts["cuda"], "0,1");
  EXPECT_EQ(facts["data"], json::array({a}));
  EXPECT_TRUE(fs::exists(b.dir + "/volumes/" + tenant + "/data/" + a)) << "the tenant's volume on this machine";
  json run = s.admin("GET", "/api/v1/allocations?state=closed&limit=100").body["items"][0];
  EXPECT_EQ(run["placement"][0]["gpus"], json::array({idx[0] - '0', idx[2] - '0'})) << run.dump();

  // A failing job says its exit code, its run and its last lines.
  const std::string bad = submit("fails", 1, {"sh", "-c", "echo something went wrong; exit 3"});
  json failed = wait_for(s, "/api/v1/jobs/" + bad, state_is("failed"), 120);
  const std::string why = failed["status"]["reason"];
  EXPECT_EQ(why.rfind("exit code 3 (local run ", 0), 0u) << failed.dump();
  EXPECT_NE(why.find("something went wrong"), std::string::npos) << why;
  Resp zh = s.req("GET", "/api/v1/jobs/" + bad + "?lang=zh", token);
  EXPECT_NE(zh.body["status"]["reason"].get<std::string>().find("本机运行"), std::string::npos) << zh.describe();

  // Another tenant uploading the bytes of this node's base image gives that image id one more tag,
  // in the other tenant's scope (what skopeo's copy of the archive does): acme's jobs on the base
  // image run on, by its reference and by its id.
  struct Tag {
    std::string ref;
    ~Tag() { (void)std::system((std::string(kPodman) + " untag " + kImage + " " + ref + " >/dev/null 2>&1").c_str()); }
  } other{"localhost/gpurent/ten_ffffffffffffffff/base:copy"};
  ASSERT_EQ(std::system((std::string(kPodman) + " tag " + kImage + " " + other.ref).c_str()), 0);
  std::string image_id = run_cmd(std::string(kPodman) + " image inspect --format '{{.Id}}' " + kImage);
  while (!image_id.empty() && std::isspace(static_cast<unsigned char>(image_id.back()))) image_id.pop_back();
  ASSERT_EQ(image_id.size(), 64u) << image_id;
  for (const std::string& ref : {std::string(kImage), "sha256:" + image_id}) {
    const std::string same = submit("same-bytes-" + ref.substr(0, 6), 1, {"true"}, {{"image", ref}});
    json ran = wait_for(s, "/api/v1/jobs/" + same, [](const json& j) {
      const json& st = j["status"]["state"];
      return st == "succeeded" || st == "failed" || st == "cancelled";
    }, 120);
    EXPECT_EQ(ran["status"]["state"], "succeeded") << ref << ": " << ran.dump() << logs(same);
  }

  // A run the runner refuses to start (here: the folder of its next run is already taken) puts the
  // job back in the queue, and the scheduler places it again on a later tick: it runs, rather
  // than waiting forever as pending while the scheduler still counts its GPUs as taken.
  {
    const long next = std::atol(run_cmd("cat " + b.dir + "/runs/last_id").c_str()) + 1;
    ASSERT_GT(next, 1);
    fs::create_directories(b.dir + "/runs/" + std::to_string(next));
    const std::string again = submit("refused-once", 1, {"true"});
    json ran = wait_for(s, "/api/v1/jobs/" + again, [](const json& j) {
      const json& st = j["status"]["state"];
      return st == "succeeded" || st == "failed" || st == "cancelled";
    }, 120);
    EXPECT_EQ(ran["status"]["state"], "succeeded") << ran.dump() << s.log();
    const std::string events = s.admin("GET", "/api/v1/jobs/" + again + "/events").body.dump();
    EXPECT_NE(events.find("could not start the job"), std::string::npos) << "refused once first: " << events;
  }

  // Readiness: a job's run is ready when its health check first passes in the container (here
  // once the workload has created /tmp/up, 3 s in) or when the workload creates $GPURENT_READY_FILE;
  // until then it is not ready, however long it has been running.
  const char* kLater = "import os, time; time.sleep(3); open(os.environ.get('GPURENT_READY_FILE', '/tmp/up'), 'w').close(); "
                       "time.sleep(3)";
  const std::string checked = submit("health-checked", 1, {"python3", "-c", kLater},
                                     {{"readiness", {{"command", {"test", "-e", "/tmp/up"}}, {"interval_seconds", 1}}}});
  const std::string beating = submit("heartbeat", 1, {"python3", "-c", kLater}, {{"readiness", {{"heartbeat", true}, {"interval_seconds", 1}}}});
  for (const std::string& id : {checked, beating}) {
    json ended = wait_for(s, "/api/v1/jobs/" + id, state_is("succeeded"), 120);
    ASSERT_EQ(ended["status"]["state"], "succeeded") << ended.dump() << logs(id) << s.log();
    json found;
    const json closed = s.admin("GET", "/api/v1/allocations?state=closed&limit=100").body;
    for (const auto& r : closed["items"])
      if (r["job_id"] == id) found = r;
    ASSERT_TRUE(found.contains("ready_at") && found["ready_at"].is_string())
        << found.dump() << run_cmd("ls " + b.dir + "/out; cat " + b.dir + "/out/" + id + "*.log");
    auto ms = [](const json& t) { return *parse_rfc3339(t.get<std::string>(), "t"); };
    EXPECT_GE(ms(found["ready_at"]) - ms(found["running_at"]), 2500) << found.dump();
    EXPECT_LE(ms(found["ready_at"]), ms(found["ended_at"])) << found.dump();
  }

  // An egress freeze cuts a running container's network (loopback stays) until an admin lifts it;
  // the job runs on, and its log says both. The egress is priced by the offer the node sells under.
  expect_2xx(s.admin("POST", "/api/v1/offers", offer_doc("dc", "h100")), "offer");
  // The program's line breaks are the two characters backslash and n, read by exec(): the API refuses real
  // ones in a command.
  const std::string kWatchNet =
      "import time\\n"
      "seen, last = [], None\\n"
      "for _ in range(480):\\n"
      "    up = 'eth0' in open('/proc/net/dev').read()\\n"
      "    if up != last: print('NET', 'up' if up else 'down', flush=True); seen.append(up); last = up\\n"
      "    if seen[-3:] == [True, False, True]: break\\n"
      "    time.sleep(0.25)\\n";
  const std::string watcher = submit("net-watcher", 1, {"python3", "-c", "exec(\"" + kWatchNet + "\")"});
  auto log_has = [&](const std::string& id, const std::string& what, int from = 0) {
    for (int i = 0; i < 300; ++i) {
      const std::string out = logs(id);
      if (out.find(what, from) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  };
  ASSERT_TRUE(log_has(watcher, "NET up")) << logs(watcher) << s.log();
  json egress = {{"idempotency_key", "egress-1"},
                 {"job_samples", {{{"at", format_rfc3339(SystemClock().now())}, {"job", watcher}, {"egress_bytes", 1'200'000'000'000}}}}};
  ASSERT_EQ(s.admin("POST", "/api/v1/usage", egress).status, 201) << s.log();
  json frozen = wait_for(s, "/api/v1/alerts?state=active", [](const json& j) { return !j["items"].empty(); }, 60);
  ASSERT_EQ(frozen["items"].size(), 1u) << frozen.dump();
  ASSERT_EQ(frozen["items"][0]["freeze_egress"], true) << frozen.dump();
  EXPECT_TRUE(log_has(watcher, "NET down")) << logs(watcher);
  // The script says so after its disconnect returns: the workload may see it first.
  EXPECT_TRUE(log_has(watcher, "egress is frozen")) << logs(watcher);
  EXPECT_EQ(s.admin("GET", "/api/v1/jobs/" + watcher).body["status"]["state"], "running") << "the job runs on";
  expect_2xx(s.admin("POST", "/api/v1/alerts/" + frozen["items"][0]["id"].get<std::string>() + "/lift"), "lift");
  const int down_at = static_cast<int>(logs(watcher).find("NET down"));
  EXPECT_TRUE(log_has(watcher, "NET up", down_at)) << logs(watcher);
  json net_done = wait_for(s, "/api/v1/jobs/" + watcher, state_is("succeeded"), 60);
  EXPECT_EQ(net_done["status"]["state"], "succeeded") << net_done.dump() << logs(watcher);
  EXPECT_NE(logs(watcher).find("network is back"), std::string::npos) << logs(watcher);

  // kill -9 of the server while a job runs: the job goes on, and the restarted server sees it
  // finish, once.
  const std::string lasting = submit("outlives-server", 1, py, {{"env", {{"SLEEP", "6"}}}});
  wait_for(s, "/api/v1/jobs/" + lasting, state_is("running"), 120);
  s.kill9();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  s.start();
  json after = wait_for(s, "/api/v1/jobs/" + lasting, state_is("succeeded"), 60);
  EXPECT_EQ(after["status"]["state"], "succeeded") << after.dump() << s.log();
  EXPECT_EQ(allocations_of(lasting), 1) << "it ran once: " << s.admin("GET", "/api/v1/allocations?limit=100").body.dump();
  const json events = s.admin("GET", "/api/v1/jobs/" + lasting + "/events").body;
  EXPECT_EQ(events["items"].back()["reason"].get<std::string>().rfind("completed (local run ", 0), 0u) << events.dump();

  // A cancelled job's container is stopped and removed.
  const std::string long_id = submit("cancelled", 1, py, {{"env", {{"SLEEP", "600"}}}});
  wait_for(s, "/api/v1/jobs/" + long_id, state_is("running"), 120);
  for (int i = 0; i < 100 && logs(long_id).find("FACTS") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_NE(run_cmd(std::string(kPodman) + " ps -q --filter name=gpurent-" + long_id), "") << "its container runs";
  expect_2xx(s.req("POST", "/api/v1/jobs/" + long_id + "/cancel", token, json::object()), "cancel");
  std::string left = "?";
  for (int i = 0; i < 150 && !left.empty(); ++i) {
    left = run_cmd(std::string(kPodman) + " ps -aq --filter name=gpurent-" + long_id);
    if (!left.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_EQ(left, "") << "the cancelled job's container is gone; " << run_cmd("tail -n 3 " + b.dir + "/runs/*/*")
                      << s.log();

  // Every job that mounts it has finished: deleting the volume removes its data on the nodes.
  ASSERT_TRUE(fs::exists(b.dir + "/volumes/" + tenant + "/data"));
  ASSERT_EQ(s.req("DELETE", "/api/v1/volumes/data", token).status, 204);
  EXPECT_FALSE(fs::exists(b.dir + "/volumes/" + tenant + "/data")) << "the deleted volume's folder is gone";
}

}  // namespace
}  // namespace gpurent::testing
