// Instances (docs/resources/instances.md) in the real server on the simulated executor: created
// and started in one write, stopped and started again as new jobs of the project, the tenant's
// volume as the data disk, CPU-only at no GPU, released without losing the volume; each run billed
// as a job's; invisible to other tenants, stopped only by those who may submit the tenant's jobs.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "core/clock.h"
#include "model/instance.h"
#include "server_fixture.h"

namespace gpurent::testing {
namespace {

auto instance_in(const std::string& state) {
  return [state](const json& x) { return x["state"] == state; };
}

TEST(Instances, StartStopAndReleaseAsJobsOfTheProjectKeepingTheVolume) {
  ServerProcess s({"--sched-interval-ms", "20", "--firewall-interval-s", "0"});
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "n1")), "node");
  json offer = offer_doc("dc", "h100");  // CNY 17.50 per GPU-hour on demand
  offer["fees"]["volume_storage"] = {{"per_gb_month", "0.073"}, {"free_gb", 0}};
  expect_2xx(s.admin("POST", "/api/v1/offers", offer), "offer");
  acme_and_beta(s);
  const std::string dev = make_user_token(s, "acme-dev", "tenant_member", "acme");
  const std::string viewer = make_user_token(s, "acme-viewer", "viewer", "acme");
  const std::string other = make_user_token(s, "beta-dev", "tenant_admin", "beta");
  const json box = {{"name", "box"},
                    {"project", "vision"},
                    {"gpus", 1},
                    {"gpu_model", "h100-sxm5-80gb"},
                    {"image", "nvcr.io/nvidia/pytorch:24.05-py3"},
                    {"volume", {{"name", "home"}}}};
  auto post = [&](json body) { return s.req("POST", "/api/v1/instances", dev, body); };
  Resp no_volume = post(box);
  EXPECT_EQ(no_volume.error_fields(), std::vector<std::string>{"volume.name"}) << no_volume.describe();
  json no_model = box;
  no_model.erase("gpu_model");
  EXPECT_EQ(post(no_model).error_fields(), std::vector<std::string>{"gpu_model"});
  json cpu_with_model = box;
  cpu_with_model["gpus"] = 0;
  EXPECT_EQ(post(cpu_with_model).error_fields(), std::vector<std::string>{"gpu_model"});
  json no_timer = box;
  no_timer["stop_after_minutes"] = 0;
  EXPECT_EQ(post(no_timer).error_fields(), std::vector<std::string>{"stop_after_minutes"});
  json past = box;
  past["stop_at"] = "2020-01-01T00:00:00Z";
  EXPECT_EQ(post(past).error_fields(), std::vector<std::string>{"stop_at"});
  json too_many = box;
  too_many["gpus"] = 17;
  EXPECT_EQ(post(too_many).error_fields(), std::vector<std::string>{"gpus"});
  EXPECT_EQ(s.req("POST", "/api/v1/instances", viewer, box).status, 403);
  expect_2xx(s.req("POST", "/api/v1/volumes", dev, json{{"name", "home"}, {"size_gb", 50}}), "volume");

  const json created = expect_2xx(post(box), "instance").body;
  EXPECT_EQ(created["id"].get<std::string>().rfind("ins_", 0), 0u);
  EXPECT_EQ(created["current_job"]["name"], "box-1") << created.dump();
  const std::string path = "/api/v1/instances/" + created["id"].get<std::string>();
  json running = wait_for(s, path, instance_in("running"));
  ASSERT_EQ(running["state"], "running") << running.dump();
  const std::string first_job = running["current_job"]["id"];
  // Saving it as an image: its body checked first, then who asks; a server without containers has
  // no container to save (tests/container_image_save_test.cc saves real ones).
  EXPECT_EQ(s.req("POST", path + "/image", dev, json{{"name", "My Env"}}).error_fields(), std::vector<std::string>{"name"});
  EXPECT_EQ(s.req("POST", path + "/image", dev, json{{"name", "env"}, {"source", "x"}}).error_fields(),
            std::vector<std::string>{"source"});
  EXPECT_EQ(s.req("POST", path + "/image", viewer, json{{"name", "env"}}).status, 403);
  EXPECT_EQ(s.req("POST", path + "/image", other, json{{"name", "env"}}).status, 404);
  Resp no_containers = s.req("POST", path + "/image", dev, json{{"name", "env"}});
  EXPECT_EQ(no_containers.status, 409) << no_containers.describe();
  EXPECT_EQ(no_containers.body["detail_message"]["code"], "api.instances.save_no_containers") << no_containers.describe();
  EXPECT_EQ(s.req("GET", "/api/v1/images/env", dev).status, 404) << "nothing added";
  // What it costs per hour: running, one H100 at 17.50 plus the 50 GB volume at 0.073 per
  // GB-month of 730 h (0.005 per hour); stopped, the volume alone.
  EXPECT_EQ(running["cost_per_hour"]["currency"], "CNY") << running.dump();
  EXPECT_EQ(running["cost_per_hour"]["basis"], "on_demand");
  EXPECT_EQ(micros(running["cost_per_hour"]["running"]), 17'505'000) << running.dump();
  EXPECT_EQ(micros(running["cost_per_hour"]["stopped"]), 5'000) << running.dump();
  // Its GPUs' latest metered utilization: none before a reading; then the highest card's reading.
  EXPECT_TRUE(running["utilization"].is_null()) << running.dump();
  const json job_status = s.admin("GET", "/api/v1/jobs/" + running["current_job"]["id"].get<std::string>()).body["status"];
  const std::string sampled_at = format_rfc3339(SystemClock().now());
  expect_2xx(s.admin("POST", "/api/v1/usage",
                     json{{"idempotency_key", "ins-util-1"},
                          {"gpu_samples", {{{"at", sampled_at},
                                            {"node", job_status["placement"][0]["node"]},
                                            {"gpu", job_status["placement"][0]["gpus"][0]},
                                            {"utilization_pct", 42}}}}}),
             "usage");
  const json util = s.req("GET", path, dev).body["utilization"];
  EXPECT_EQ(util, (json{{"percent", 42}, {"at", sampled_at}})) << util.dump();
  // Another reading of the card at the same instant (an agent and a DCGM scrape both metering it):
  // the higher counts, whichever batch came last (the store may return the two in any order).
  expect_2xx(s.admin("POST", "/api/v1/usage",
                     json{{"idempotency_key", "ins-util-2"},
                          {"gpu_samples",
                           {{{"at", sampled_at},
                             {"node", job_status["placement"][0]["node"]},
                             {"gpu", job_status["placement"][0]["gpus"][0]},
                             {"utilization_pct", 3}}}}}),
             "the same instant again");
  EXPECT_EQ(s.req("GET", path, dev).body["utilization"], util);
  const json job1 = s.admin("GET", "/api/v1/jobs/" + first_job).body;
  EXPECT_EQ(job1["kind"], "debug");
  EXPECT_EQ(job1["labels"]["gpurent.io/instance"], "box");
  EXPECT_EQ(job1["volumes"][0]["name"], "home");
  EXPECT_EQ(job1["volumes"][0]["mount"], "/data");
  EXPECT_EQ(job1["gpus_per_worker"], 1);

  // Other tenants do not see it; readers of the tenant cannot stop it.
  EXPECT_EQ(s.req("GET", path, other).status, 404);
  EXPECT_TRUE(list_ids(s, "/api/v1/instances", other).empty());
  EXPECT_EQ(s.req("POST", path + "/stop", viewer).status, 403);
  EXPECT_EQ(s.req("POST", path + "/start", dev).status, 409) << "already started";

  // Stop: the job is cancelled (its run ends), the reason names who stopped it.
  const json stopped = expect_2xx(s.req("POST", path + "/stop", dev), "stop").body;
  EXPECT_EQ(stopped["state"], "stopped") << stopped.dump();
  EXPECT_NE(stopped["stop_reason"].get<std::string>().find("acme-dev"), std::string::npos) << stopped.dump();
  EXPECT_EQ(s.admin("GET", "/api/v1/jobs/" + first_job).body["status"]["state"], "cancelled");
  EXPECT_EQ(s.req("POST", path + "/stop", dev).status, 409) << "already stopped";
  EXPECT_TRUE(stopped["cost_per_hour"]["running"].is_null()) << stopped.dump();
  EXPECT_TRUE(stopped["utilization"].is_null()) << "a stopped instance has no utilization: " << stopped.dump();
  EXPECT_EQ(micros(stopped["cost_per_hour"]["stopped"]), 5'000) << "the volume is paid while stopped";

  // Start again: a new job of the project with the same volume.
  const json restarted = expect_2xx(s.req("POST", path + "/start", dev), "start").body;
  EXPECT_EQ(restarted["current_job"]["name"], "box-2") << restarted.dump();
  json again = wait_for(s, path, instance_in("running"));
  ASSERT_EQ(again["state"], "running") << again.dump();
  EXPECT_FALSE(again.contains("stop_reason")) << again.dump();

  // A timer: each start's job stops itself after stop_after_minutes (its time limit).
  const json timed = expect_2xx(post({{"name", "timed"},
                                      {"project", "vision"},
                                      {"gpus", 1},
                                      {"gpu_model", "h100-sxm5-80gb"},
                                      {"image", "nvcr.io/nvidia/pytorch:24.05-py3"},
                                      {"stop_after_minutes", 90}}),
                                "timed instance")
                          .body;
  EXPECT_EQ(s.admin("GET", "/api/v1/jobs/" + timed["current_job"]["id"].get<std::string>()).body["time_limit_seconds"], 5400);
  json timed_running = wait_for(s, "/api/v1/instances/timed", instance_in("running"));
  EXPECT_TRUE(timed_running.contains("stops_at")) << timed_running.dump();
  // What it will cost until then at its running price: at most 90 minutes of 17.50 per hour.
  ASSERT_TRUE(timed_running.contains("cost_until_stop")) << timed_running.dump();
  EXPECT_GT(micros(timed_running["cost_until_stop"]), 0);
  EXPECT_LE(micros(timed_running["cost_until_stop"]), 26'250'000) << timed_running.dump();
  EXPECT_GE(micros(timed_running["cost_until_stop"]), 26'000'000) << "within about a minute of 90: " << timed_running.dump();

  // Or stop at a time: the job's time limit runs until then (the sooner of the two when both are set).
  const std::string in_an_hour = format_rfc3339(SystemClock().now() + 3'600'000);
  const json until = expect_2xx(post({{"name", "until"},
                                      {"project", "vision"},
                                      {"gpus", 1},
                                      {"gpu_model", "h100-sxm5-80gb"},
                                      {"image", "nvcr.io/nvidia/pytorch:24.05-py3"},
                                      {"stop_after_minutes", 600},
                                      {"stop_at", in_an_hour}}),
                                "instance stopping at a time")
                          .body;
  const int64_t limit =
      s.admin("GET", "/api/v1/jobs/" + until["current_job"]["id"].get<std::string>()).body["time_limit_seconds"];
  EXPECT_LE(limit, 3600);
  EXPECT_GE(limit, 3540);

  // CPU-only: no GPU, the CPU and memory it asks for. (home is box's data disk: it takes its own.)
  expect_2xx(s.req("POST", "/api/v1/volumes", dev, json{{"name", "setup-disk"}, {"size_gb", 5}}), "volume");
  const json cpu = expect_2xx(post({{"name", "setup"},
                                    {"project", "vision"},
                                    {"gpus", 0},
                                    {"image", "docker.io/library/debian:12"},
                                    {"command", {"sleep", "infinity"}},
                                    {"resources", {{"cpu_cores", 2}, {"memory_gib", 4}}},
                                    {"volume", {{"name", "setup-disk"}, {"mount", "/root/data"}}}}),
                              "cpu-only instance")
                        .body;
  const json cpu_job = s.admin("GET", "/api/v1/jobs/" + cpu["current_job"]["id"].get<std::string>()).body;
  EXPECT_EQ(cpu_job["gpus_per_worker"], 0) << cpu_job.dump();
  EXPECT_EQ(cpu_job["resources"]["cpu_cores"], 2);
  // It never runs on GPUs: same_host has no host to return to (422 on `on`, as for an instance
  // that has not run on GPUs yet), rather than quietly going anywhere.
  expect_2xx(s.req("POST", "/api/v1/instances/setup/stop", dev, json::object()), "stop setup");
  wait_for(s, "/api/v1/instances/setup", instance_in("stopped"));
  const Resp same = s.req("POST", "/api/v1/instances/setup/start", dev, json{{"on", "same_host"}});
  EXPECT_EQ(same.error_fields(), std::vector<std::string>{"on"}) << same.describe();

  // Release: stopped and kept to be read as released, by id only: its name, its volume and its
  // actions are gone; its jobs and the tenant's volume stay.
  const std::string second_job = again["current_job"]["id"];
  const std::string box_id = again["id"];
  EXPECT_EQ(s.req("DELETE", path, viewer).status, 403);
  ASSERT_EQ(s.req("DELETE", path, dev).status, 204);
  EXPECT_EQ(s.req("GET", "/api/v1/instances/box", dev).status, 404) << "its name finds nothing";
  const json released = s.req("GET", "/api/v1/instances/" + box_id, dev).body;
  EXPECT_EQ(released["state"], "released") << released.dump();
  EXPECT_TRUE(released["released_at"].is_string()) << released.dump();
  EXPECT_NE(released["stop_reason"].get<std::string>().find("released by"), std::string::npos) << released.dump();
  EXPECT_TRUE(released["cost_per_hour"]["stopped"].is_null()) << "its volume is billed as the tenant's, not its";
  EXPECT_EQ(s.req("GET", "/api/v1/instances/" + box_id + "?lang=zh", dev).body["stop_reason"], "实例由 acme-dev 释放");
  for (const auto& [method, action, body] :
       std::vector<std::tuple<std::string, std::string, json>>{{"POST", "/start", json::object()},
                                                               {"POST", "/stop", json::object()},
                                                               {"GET", "/preflight", nullptr},
                                                               {"POST", "/detach", json{{"name", "home"}}},
                                                               {"POST", "/image", json{{"name", "env"}}},
                                                               {"DELETE", "", nullptr}}) {
    Resp r = body.is_null() ? s.req(method, "/api/v1/instances/" + box_id + action, dev)
                            : s.req(method, "/api/v1/instances/" + box_id + action, dev, body);
    EXPECT_EQ(r.status, 409) << method << " " << action << ": " << r.describe();
    EXPECT_EQ(r.body["detail_message"].value("code", ""), "api.instances.released") << r.describe();
  }
  bool listed = false;
  const json listing = s.req("GET", "/api/v1/instances", dev).body;
  for (const json& i : listing["items"])
    if (i["id"] == box_id) listed = i["state"] == "released";
  EXPECT_TRUE(listed) << "listed as released: " << listing.dump();
  EXPECT_EQ(s.admin("GET", "/api/v1/jobs/" + second_job).body["status"]["state"], "cancelled");
  EXPECT_EQ(s.req("GET", "/api/v1/volumes/home", dev).status, 200) << "the volume is the tenant's";
  // Created again under its name, with the same data disk: its jobs keep theirs, the new one takes
  // the next number.
  const json again_created = expect_2xx(post(box), "the same name and disk again").body;
  EXPECT_EQ(again_created["current_job"]["name"], "box-3") << again_created.dump();
  ASSERT_EQ(s.req("DELETE", "/api/v1/instances/box", dev).status, 204);
  EXPECT_EQ(s.req("DELETE", "/api/v1/volumes/home", dev).status, 204) << "released instances hold no volume";

  // Each run was billed as a job's run: two closed allocations for the instance's two jobs.
  const json closed = s.admin("GET", "/api/v1/allocations?state=closed&limit=100").body;
  int runs = 0;
  for (const auto& a : closed["items"]) runs += a["job_id"] == first_job || a["job_id"] == second_job;
  EXPECT_EQ(runs, 2) << closed.dump();
}

// volume.size_gb at create: the data disk is made with the instance (in the same write) when the
// tenant has no volume of that name, and checked against the one it has otherwise; an instance
// refused makes no volume; the answer shows the disk's size.
TEST(Instances, ADataDiskOfTheAskedSizeIsMadeWithTheInstance) {
  ServerProcess s({"--sched-interval-ms", "20", "--firewall-interval-s", "0"});
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "n1")), "node");
  acme_and_beta(s);
  const std::string dev = make_user_token(s, "acme-dev", "tenant_member", "acme");
  auto box = [](const std::string& name, const std::string& disk, int64_t gb) {
    return json{{"name", name}, {"project", "vision"}, {"image", "docker.io/library/debian:12"},
                {"resources", {{"cpu_cores", 2}, {"memory_gib", 4}}}, {"volume", {{"name", disk}, {"size_gb", gb}}}};
  };
  auto post = [&](const json& b) { return s.req("POST", "/api/v1/instances", dev, b); };
  EXPECT_EQ(post(box("a", "scratch", 0)).error_fields(), std::vector<std::string>{"volume.size_gb"});
  json refused = box("a", "scratch", 25);
  refused["stop_after_minutes"] = 0;
  EXPECT_EQ(post(refused).error_fields(), std::vector<std::string>{"stop_after_minutes"});
  EXPECT_EQ(s.req("GET", "/api/v1/volumes/scratch", dev).status, 404) << "a refused instance makes no volume";
  const json a = expect_2xx(post(box("a", "scratch", 25)), "a with a new 25 GB disk").body;
  EXPECT_EQ(a["volume"]["size_gb"], 25) << a.dump();
  const json disk = s.req("GET", "/api/v1/volumes/scratch", dev).body;
  EXPECT_EQ(disk["size_gb"], 25) << disk.dump();
  EXPECT_EQ(disk["tenant_id"], a["tenant_id"]);
  expect_2xx(s.req("POST", "/api/v1/volumes", dev, json{{"name", "home"}, {"size_gb", 10}}), "home");
  Resp differs = post(box("b", "home", 20));
  EXPECT_EQ(differs.error_fields(), std::vector<std::string>{"volume.size_gb"}) << differs.describe();
  EXPECT_NE(differs.body.dump().find("10 GB"), std::string::npos) << differs.describe();
  EXPECT_EQ(expect_2xx(post(box("b", "home", 10)), "b on home as it is").body["volume"]["size_gb"], 10);
  EXPECT_EQ(post(box("c", "home", 10)).status, 409) << "home is b's data disk";
}

// Access fields on the simulated executor (no container, so no way in is shown): keys checked and
// named, each instance holding the lowest free node ports of the server's range for its life, the
// range running out with a 409, a released instance's ports free again, the notebook token never
// in an answer.
TEST(Instances, SshKeysAndNotebookHoldPortsOfTheServersRange) {
  ServerProcess s({"--sched-interval-ms", "20", "--firewall-interval-s", "0", "--instance-ports", "30100-30102"});
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "n1")), "node");
  acme_and_beta(s);
  const std::string dev = make_user_token(s, "acme-dev", "tenant_member", "acme");
  const std::string key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMmoR98h6zcgRAJsBTuFmr2APBlJQ6nJyM70vXl+nPx dev@laptop";
  auto box = [&](const std::string& name, json keys, bool notebook) {
    return json{{"name", name}, {"project", "vision"}, {"resources", {{"cpu_cores", 2}, {"memory_gib", 4}}}, {"image", "localhost/dev:1"},
                {"ssh_keys", std::move(keys)}, {"notebook", notebook}};
  };
  auto post = [&](const json& body) { return s.req("POST", "/api/v1/instances", dev, body); };
  Resp bad = post(box("bad", {key, "-----BEGIN OPENSSH PRIVATE KEY-----"}, false));
  EXPECT_EQ(bad.error_fields(), std::vector<std::string>{"ssh_keys[1]"}) << bad.describe();
  EXPECT_NE(bad.body.dump().find("private"), std::string::npos) << "it says a private key was pasted: " << bad.describe();
  Resp chosen = post([&] {
    json b = box("chosen", {key}, false);
    b["notebook_token"] = "guessable";
    return b;
  }());
  EXPECT_EQ(chosen.error_fields(), std::vector<std::string>{"notebook_token"}) << chosen.describe();

  const json a = expect_2xx(post(box("a", {key}, true)), "a").body;
  EXPECT_EQ(a["ssh_port"], 30100);
  EXPECT_EQ(a["notebook_port"], 30101);
  EXPECT_FALSE(a.contains("notebook_token")) << a.dump();
  EXPECT_TRUE(a["access"].is_null()) << "no containers, no way in: " << a.dump();
  const json plain = expect_2xx(post(box("plain", json::array(), false)), "no access").body;
  EXPECT_FALSE(plain.contains("ssh_port")) << "no keys, no notebook: no ports";
  const json b = expect_2xx(post(box("b", {key}, false)), "b").body;
  EXPECT_EQ(b["ssh_port"], 30102);
  Resp full = post(box("c", {key}, false));
  EXPECT_EQ(full.status, 409) << full.describe();
  EXPECT_NE(full.body.dump().find("30100-30102"), std::string::npos) << full.describe();
  // Released, its ports go back to the range.
  ASSERT_EQ(s.req("DELETE", "/api/v1/instances/a", dev).status, 204);
  const json c = expect_2xx(post(box("c", {key}, true)), "c").body;
  EXPECT_EQ(c["ssh_port"], 30100);
  EXPECT_EQ(c["notebook_port"], 30101);
  for (const char* path : {"/api/v1/instances/c", "/api/v1/instances"})
    EXPECT_EQ(s.req("GET", path, dev).body.dump().find("notebook_token"), std::string::npos) << path;

  // Idle auto-stop: no rule in force until the tenant sets a default; an instance's own wins.
  EXPECT_TRUE(c["idle_stop_in_force"].is_null()) << c.dump();
  json acme = s.admin("GET", "/api/v1/tenants/acme").body;
  acme["instance_idle_stop"] = {{"below_percent", 5}, {"minutes", 2000}};
  Resp bad_rule = s.admin("PUT", "/api/v1/tenants/acme", acme);
  EXPECT_EQ(bad_rule.error_fields(), std::vector<std::string>{"instance_idle_stop.minutes"}) << bad_rule.describe();
  acme["instance_idle_stop"] = {{"below_percent", 5}, {"minutes", 30}};
  expect_2xx(s.admin("PUT", "/api/v1/tenants/acme", acme), "tenant default");
  EXPECT_EQ(s.req("GET", "/api/v1/instances/c", dev).body["idle_stop_in_force"],
            (json{{"below_percent", 5}, {"minutes", 30}, {"source", "tenant"}}));
  json own = box("own", json::array(), false);
  own["idle_stop"] = {{"below_percent", 20}, {"minutes", 0}};
  EXPECT_EQ(expect_2xx(post(own), "own rule").body["idle_stop_in_force"],
            (json{{"below_percent", 20}, {"minutes", 0}, {"source", "instance"}}));
}

// stop_at is a time, not a duration: a start still waiting for room when it comes is stopped by
// the firewall's pass (its job's time limit would count from when it ran, past stop_at).
TEST(Instances, AStartStillWaitingAtItsStopAtIsStopped) {
  ServerProcess s({"--sched-interval-ms", "20", "--firewall-interval-s", "1"});
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "n1")), "node");
  acme_and_beta(s);
  const json box = {{"name", "big"},
                    {"project", "vision"},
                    {"gpus", 16},
                    {"gpu_model", "h100-sxm5-80gb"},
                    {"image", "localhost/dev:1"},
                    {"stop_at", format_rfc3339(SystemClock().now() + 2'000)}};
  expect_2xx(s.admin("POST", "/api/v1/instances", box), "an instance no node holds now");
  const json stopped = wait_for(s, "/api/v1/instances/big", [](const json& i) {
    return i.value("stop_reason", "").find("stop_at") != std::string::npos;
  });
  EXPECT_EQ(stopped.value("want_running", true), false) << stopped.dump();
}

// Jobs a user named like an instance's starts (dev-1 … dev-40) cost its start a few lookups, not
// one per name (they ran inside the single writer): the start takes a number no job has.
TEST(Instances, JobsNamedLikeItsStartsDoNotMakeAStartWalkEveryName) {
  ServerProcess s({"--sched-interval-ms", "20", "--firewall-interval-s", "0"});
  acme_and_beta(s);
  std::set<std::string> taken;
  for (int n = 1; n <= 40; ++n) {
    expect_2xx(s.admin("POST", "/api/v1/jobs", job_doc("vision", "dev-" + std::to_string(n))), "job");
    taken.insert("dev-" + std::to_string(n));
  }
  const json box = {{"name", "dev"},
                    {"project", "vision"},
                    {"gpus", 0},
                    {"image", "localhost/dev:1"},
                    {"resources", {{"cpu_cores", 1}, {"memory_gib", 1}}}};
  const json created = expect_2xx(s.admin("POST", "/api/v1/instances", box), "instance").body;
  const std::string name = created["current_job"]["name"];
  EXPECT_EQ(name.rfind("dev-", 0), 0u) << name;
  EXPECT_EQ(taken.count(name), 0u) << name;
  // 1 … 9 one by one, then steps of 2, 4, 8, 16, 32: 11, 15, 23, 39 taken, 71 free (14 lookups).
  EXPECT_EQ(name, "dev-71");
}

// The port range is every tenant's: one tenant's instances (made and stopped in a loop, free of
// charge) hold at most an eighth of it, and another tenant still gets ports.
TEST(Instances, OneTenantHoldsAtMostAnEighthOfThePortRange) {
  ServerProcess s({"--sched-interval-ms", "20", "--firewall-interval-s", "0", "--instance-ports", "30100-30195"});
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "n1")), "node");
  acme_and_beta(s);
  const std::string key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMmoR98h6zcgRAJsBTuFmr2APBlJQ6nJyM70vXl+nPx dev@laptop";
  auto box = [&](const std::string& name, const std::string& project) {
    return json{{"name", name},
                {"project", project},
                {"resources", {{"cpu_cores", 1}, {"memory_gib", 1}}},
                {"image", "localhost/dev:1"},
                {"ssh_keys", {key}},
                {"notebook", true}};
  };
  // 96 ports: 12 a tenant, 2 an instance.
  for (int i = 0; i < 6; ++i)
    expect_2xx(s.admin("POST", "/api/v1/instances", box("a" + std::to_string(i), "vision")), "acme's instance");
  Resp over = s.admin("POST", "/api/v1/instances", box("a6", "vision"));
  EXPECT_EQ(over.status, 409) << over.describe();
  EXPECT_NE(over.body.dump().find("api.instances.tenant_ports"), std::string::npos) << over.describe();
  expect_2xx(s.admin("POST", "/api/v1/instances", box("b0", "nlp")), "beta's instance");
  // Nor many records: a tenant holds at most 1,000 instances, released ones (kept 7 days)
  // included. acme's first is copied to make 1,000 (as released yesterday, holding no port).
  const std::string first = s.admin("GET", "/api/v1/instances/a0").body["id"];
  edit_database(s,
                "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 994) "
                "INSERT INTO objects (kind, id, name, tenant_id, supplier_id, project_id, state, region, gpu_model, "
                "created_at, updated_at, version, body) SELECT kind, id || '-' || x, name || '-' || x, tenant_id, "
                "supplier_id, project_id, 'released', region, gpu_model, created_at, updated_at, version, "
                "json_set(body, '$.released_at', '" +
                    format_rfc3339(SystemClock().now() - 86'400'000) +
                    "') FROM objects, n "
                    "WHERE kind = 'instances' AND id = '" +
                    first + "'",
                994);
  Resp many = s.admin("POST", "/api/v1/instances",
                      json{{"name", "cpu-box"},
                           {"project", "vision"},
                           {"resources", {{"cpu_cores", 1}, {"memory_gib", 1}}},
                           {"image", "localhost/dev:1"}});
  EXPECT_EQ(many.status, 422) << many.describe();
  EXPECT_EQ(many.error_fields(), std::vector<std::string>{"name"}) << many.describe();
  expect_2xx(s.admin("POST", "/api/v1/instances", box("b1", "nlp")), "beta's second instance");
}

namespace {

// The node an instance's latest job runs on (its placement's first worker).
std::string host_of(ServerProcess& s, const json& instance) {
  const json job = s.admin("GET", "/api/v1/jobs/" + instance["current_job"]["id"].get<std::string>()).body;
  return job["status"]["placement"][0]["node"];
}

}  // namespace

// Restart: a running instance's job is cancelled and its next one submitted in one write, saying
// who restarted it; a stopped one is told to start instead; a viewer may not.
TEST(Instances, RestartStopsAndStartsInOneWrite) {
  ServerProcess s({"--sched-interval-ms", "20", "--firewall-interval-s", "0"});
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "n1")), "node");
  expect_2xx(s.admin("POST", "/api/v1/offers", offer_doc("dc", "h100")), "offer");
  acme_and_beta(s);
  const std::string dev = make_user_token(s, "acme-dev", "tenant_member", "acme");
  const std::string viewer = make_user_token(s, "acme-viewer", "viewer", "acme");
  expect_2xx(s.req("POST", "/api/v1/instances", dev,
                   json{{"name", "box"}, {"project", "vision"}, {"gpus", 1}, {"gpu_model", "h100-sxm5-80gb"},
                        {"image", "nvcr.io/nvidia/pytorch:24.05-py3"}}),
             "box");
  const std::string path = "/api/v1/instances/box";
  const json up = wait_for(s, path, instance_in("running"));
  ASSERT_EQ(up["state"], "running");
  const std::string first = up["current_job"]["id"];
  const std::string home = host_of(s, up);
  EXPECT_EQ(s.req("POST", path + "/restart", viewer, json::object()).status, 403);
  Resp bad = s.req("POST", path + "/restart", dev, json{{"on", "elsewhere"}});
  EXPECT_EQ(bad.error_fields(), std::vector<std::string>{"on"}) << bad.describe();
  const json restarted = expect_2xx(s.req("POST", path + "/restart", dev, json::object()), "restart").body;
  EXPECT_EQ(restarted["current_job"]["name"], "box-2") << restarted.dump();
  EXPECT_NE(restarted["state"], "stopped") << restarted.dump();
  const json old = s.admin("GET", "/api/v1/jobs/" + first).body;
  EXPECT_EQ(old["status"]["state"], "cancelled");
  EXPECT_EQ(old["status"]["reason"], "instance restarted by acme-dev") << old.dump();
  const json again = wait_for(s, path, instance_in("running"));
  EXPECT_EQ(again["state"], "running");
  EXPECT_EQ(host_of(s, again), home) << "back on its host, whose GPU the restart freed";
  expect_2xx(s.req("POST", path + "/stop", dev, json::object()), "stop");
  Resp stopped = s.req("POST", path + "/restart", dev, json::object());
  EXPECT_EQ(stopped.status, 409) << stopped.describe();
  EXPECT_EQ(stopped.body["detail_message"].value("code", ""), "api.instances.already_stopped") << stopped.describe();
}

TEST(Instances, RestartReturnsToItsHostOrSaysWhyAndOffersAnotherHostOrCpuOnly) {
  ServerProcess s({"--sched-interval-ms", "20", "--firewall-interval-s", "0"});
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "n1")), "node");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "n2")), "node");
  json offer = offer_doc("dc", "h100");
  offer["prices"]["cpu_core_hour"] = "0.05";
  offer["prices"]["memory_gib_hour"] = "0.01";
  expect_2xx(s.admin("POST", "/api/v1/offers", offer), "offer");
  acme_and_beta(s);
  const std::string dev = make_user_token(s, "acme-dev", "tenant_member", "acme");
  const std::string other = make_user_token(s, "beta-dev", "tenant_admin", "beta");
  const std::string path = "/api/v1/instances/box";
  auto start = [&](const json& body) { return s.req("POST", path + "/start", dev, body); };
  auto stop_it = [&] {
    expect_2xx(s.req("POST", path + "/stop", dev, json::object()), "stop");
    return wait_for(s, path, instance_in("stopped"));
  };
  expect_2xx(s.req("POST", "/api/v1/instances", dev,
                   // The model in other capitals: the preflight counts the nodes of its catalog id.
                   json{{"name", "box"},
                        {"project", "vision"},
                        {"gpus", 1},
                        {"gpu_model", "H100-SXM5-80GB"},
                        {"image", "nvcr.io/nvidia/pytorch:24.05-py3"}}),
             "instance");
  const json first = wait_for(s, path, instance_in("running"));
  const std::string host = host_of(s, first);
  const std::string host_name = s.admin("GET", "/api/v1/nodes/" + host).body["name"];
  const std::string elsewhere = host_name == "n1" ? "n2" : "n1";
  stop_it();

  // Stopped, its host free: the preflight says a start returns there, and it does.
  json pf = expect_2xx(s.req("GET", path + "/preflight", dev), "preflight").body;
  EXPECT_EQ(pf["host"]["node"], host) << pf.dump();
  EXPECT_EQ(pf["host"]["free_gpus"], 8);
  EXPECT_EQ(pf["host_free"], true);
  EXPECT_EQ(pf["other_nodes_with_room"], 1);
  EXPECT_EQ(pf["options"], (json{"same_host", "any_host", "cpu_only"}));
  EXPECT_NE(pf["advice"].get<std::string>().find("returns there"), std::string::npos) << pf.dump();
  expect_2xx(start(json::object()), "start back home");
  json back = wait_for(s, path, instance_in("running"));
  EXPECT_EQ(host_of(s, back), host) << "a free host takes its instance back";
  const json pinned = s.admin("GET", "/api/v1/jobs/" + back["current_job"]["id"].get<std::string>()).body;
  EXPECT_EQ(pinned["constraints"]["nodes"], (json{host})) << pinned.dump();
  stop_it();

  // Another tenant's job takes the host's 8 GPUs (pinned there by name; stored as the node's id).
  json filler = job_doc("nlp", "filler");
  filler["gpus_per_worker"] = 8;
  filler["constraints"]["nodes"] = {"nope"};
  Resp unknown = s.req("POST", "/api/v1/jobs", other, filler);
  EXPECT_EQ(unknown.error_fields(), std::vector<std::string>{"constraints.nodes[0]"}) << unknown.describe();
  filler["constraints"]["nodes"] = {host_name};
  const json f = expect_2xx(s.req("POST", "/api/v1/jobs", other, filler), "filler").body;
  EXPECT_EQ(f["constraints"]["nodes"], (json{host})) << f.dump();
  wait_for(s, "/api/v1/jobs/" + f["id"].get<std::string>(), [](const json& j) { return j["status"]["state"] == "running"; });

  pf = s.req("GET", path + "/preflight", dev).body;
  EXPECT_EQ(pf["host_free"], false) << pf.dump();
  EXPECT_EQ(pf["host"]["free_gpus"], 0);
  EXPECT_EQ(pf["other_nodes_with_room"], 1);
  const std::string zh = s.req("GET", path + "/preflight?lang=zh", dev).body["advice"];
  EXPECT_NE(zh.find("原主机"), std::string::npos) << zh;
  const size_t starts = s.req("GET", path, dev).body["job_ids"].size();
  Resp refused = start(json::object());
  EXPECT_EQ(refused.status, 409) << refused.describe();
  EXPECT_NE(refused.body["detail"].get<std::string>().find(host_name), std::string::npos) << refused.describe();
  EXPECT_EQ(s.req("GET", path, dev).body["job_ids"].size(), starts) << "refused before anything was submitted";
  EXPECT_EQ(start(json{{"on", "elsewhere"}}).error_fields(), std::vector<std::string>{"on"});

  // Waiting for the host: queued, the reason naming it.
  expect_2xx(start(json{{"on", "same_host"}}), "wait for the host");
  const json waiting = wait_for(s, path, [](const json& i) {
    return i["state"] == "requested" && i["current_job"]["reason"].get<std::string>().find("on node") != std::string::npos;
  });
  EXPECT_NE(waiting["current_job"]["reason"].get<std::string>().find(host_name), std::string::npos) << waiting.dump();
  stop_it();

  // Another host: running there.
  expect_2xx(start(json{{"on", "any_host"}}), "another host");
  const json moved = wait_for(s, path, instance_in("running"));
  EXPECT_EQ(s.admin("GET", "/api/v1/nodes/" + host_of(s, moved)).body["name"], elsewhere);
  stop_it();

  // CPU-only, to reach the data: no GPUs, the default cores and memory, billed at the CPU prices
  // (2 cores x 0.05 + 8 GiB x 0.01 = 0.18 per hour).
  expect_2xx(start(json{{"on", "cpu_only"}}), "cpu only");
  const json cpu = wait_for(s, path, instance_in("running"));
  const json cpu_job = s.admin("GET", "/api/v1/jobs/" + cpu["current_job"]["id"].get<std::string>()).body;
  EXPECT_EQ(cpu_job["gpus_per_worker"], 0) << cpu_job.dump();
  EXPECT_EQ(cpu_job["resources"]["cpu_cores"], 2);
  EXPECT_EQ(cpu_job["resources"]["memory_gib"], 8);
  EXPECT_EQ(cpu["cost_per_hour"]["basis"], "cpu_only") << cpu.dump();
  EXPECT_EQ(micros(cpu["cost_per_hour"]["running"]), 180'000) << cpu.dump();
  EXPECT_TRUE(cpu["utilization"].is_null());
}

// A stopped instance is released after its offer's days, warned 3 and 1 days before; a started one
// is not, and its warning is resolved. The instances run and stop on the real clock; then the
// server's clock is pinned days later (--demo-clock) by restarting it on the same database.
TEST(Instances, StoppedInstancesAreReleasedAfterTheirOffersDaysWithWarningsBefore) {
  const TimeMs day = 86'400'000;
  auto at = [&](TimeMs t) {
    return std::vector<std::string>{"--sched-interval-ms", "20", "--firewall-interval-s", "1", "--demo-clock", format_rfc3339(t)};
  };
  ServerProcess s({"--sched-interval-ms", "20", "--firewall-interval-s", "1"});
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "n1")), "node");
  json offer = offer_doc("dc", "h100");
  offer["stopped_instance_release_days"] = 400;
  EXPECT_EQ(s.admin("POST", "/api/v1/offers", offer).error_fields(), std::vector<std::string>{"stopped_instance_release_days"});
  offer["stopped_instance_release_days"] = 5;
  expect_2xx(s.admin("POST", "/api/v1/offers", offer), "offer");
  acme_and_beta(s);
  const std::string dev = make_user_token(s, "acme-dev", "tenant_member", "acme");
  expect_2xx(s.req("POST", "/api/v1/volumes", dev, json{{"name", "home"}, {"size_gb", 10}}), "volume");
  for (const char* name : {"kept", "gone"}) {
    json box = {{"name", name}, {"project", "vision"}, {"gpus", 1}, {"gpu_model", "h100-sxm5-80gb"},
                {"image", "nvcr.io/nvidia/pytorch:24.05-py3"}};
    if (std::string(name) == "gone") box["volume"] = {{"name", "home"}};
    expect_2xx(s.req("POST", "/api/v1/instances", dev, box), name);
    const std::string path = std::string("/api/v1/instances/") + name;
    ASSERT_EQ(wait_for(s, path, instance_in("running"))["state"], "running");
    expect_2xx(s.req("POST", path + "/stop", dev, json::object()), "stop");
  }
  const json stopped = wait_for(s, "/api/v1/instances/gone", instance_in("stopped"));
  // Its run's end, from the ledger: the release is 5 days after it.
  TimeMs t0 = 0;
  wait_for(s, "/api/v1/allocations?state=closed&limit=100", [&](const json& j) {
    for (const json& run : j["items"])
      if (run["job"] == "gone-1") t0 = *parse_rfc3339(run["ended_at"].get<std::string>(), "ended_at");
    return t0 > 0;
  });
  ASSERT_GT(t0, 0);
  const json released_at = s.req("GET", "/api/v1/instances/gone", dev).body;
  EXPECT_EQ(released_at["release_at"], format_rfc3339(t0 + 5 * day)) << released_at.dump();
  EXPECT_EQ(stopped["state"], "stopped");
  EXPECT_EQ(released_at["release_after_days"], 5);
  const std::string gone_id = stopped["id"];
  auto release_alerts = [&] {
    json out = json::array();
    const json all = s.req("GET", "/api/v1/alerts?limit=1000", dev).body;
    for (const json& a : all["items"])
      if (a["kind"] == "instance_release") out.push_back(a);
    return out;
  };
  auto with_key = [&](const json& alerts, const std::string& key) {
    for (const json& a : alerts)
      if (a["key"] == key) return a;
    return json();
  };
  EXPECT_TRUE(release_alerts().empty());

  // 3 days before: a warning each, saying when, what goes and what stays.
  s.set_extra_args(at(t0 + 2 * day + 3'600'000));
  s.restart();
  const std::string warn3 = "instance_release:" + gone_id + ":" + std::to_string(t0 + 5 * day) + ":3";
  // Both warnings: each instance's is written in its own transaction of the same pass.
  wait_for(s, "/api/v1/alerts?limit=1000", [&](const json& j) {
    int warnings = 0;
    bool mine = false;
    for (const json& a : j["items"]) {
      const std::string key = a.value("key", "");
      if (key.rfind("instance_release:", 0) == 0) ++warnings;
      mine |= key == warn3;
    }
    return mine && warnings == 2;
  });
  json alerts = release_alerts();
  EXPECT_EQ(alerts.size(), 2u) << alerts.dump();
  const json w = with_key(alerts, warn3);
  EXPECT_EQ(w["state"], "active");
  EXPECT_EQ(w["subject"], "gone");
  EXPECT_EQ(w["to"], format_rfc3339(t0 + 5 * day));
  const std::string text = w["message_en"];
  EXPECT_NE(text.find("in 3 day(s)"), std::string::npos) << text;
  EXPECT_NE(text.find("volume home and the files on it are kept"), std::string::npos) << text;
  EXPECT_NE(w["message_zh"].get<std::string>().find("数据卷 home"), std::string::npos) << w.dump();

  // One of them is started again: its warning is resolved, and it is not released. (While the
  // clock is pinned the simulated executor's start delay does not pass: it is starting.)
  expect_2xx(s.req("POST", "/api/v1/instances/kept/start", dev, json{{"on", "any_host"}}), "start");
  ASSERT_EQ(wait_for(s, "/api/v1/instances/kept", instance_in("starting"))["state"], "starting");
  wait_for(s, "/api/v1/alerts?state=resolved&limit=1000", [](const json& j) { return j["items"].size() == 1; });

  // 1 day before, then due: the second warning, then the release; its volume and jobs stay.
  s.set_extra_args(at(t0 + 4 * day + 3'600'000));
  s.restart();
  const std::string warn1 = "instance_release:" + gone_id + ":" + std::to_string(t0 + 5 * day) + ":1";
  wait_for(s, "/api/v1/alerts?limit=1000", [&](const json& j) {
    for (const json& a : j["items"]) if (a["key"] == warn1) return true;
    return false;
  });
  s.set_extra_args(at(t0 + 5 * day + 60'000));
  s.restart();
  // The release, and its warnings resolved (at the end of the same pass, after the release).
  const json released = wait_for(s, "/api/v1/alerts?limit=1000", [&](const json& j) {
    bool out = false, resolved = false;
    for (const json& a : j["items"]) {
      out |= a["key"] == "instance_release:" + gone_id + ":released";
      resolved |= a["key"] == warn3 && a["state"] == "resolved";
    }
    return out && resolved;
  });
  EXPECT_EQ(s.req("GET", "/api/v1/instances/gone", dev).status, 404);
  const std::string kept = s.req("GET", "/api/v1/instances/kept", dev).body["state"];
  EXPECT_TRUE(kept == "starting" || kept == "running") << "started again, kept: " << kept;
  EXPECT_EQ(s.req("GET", "/api/v1/volumes/home", dev).status, 200) << "the volume stays";
  EXPECT_EQ(s.req("GET", "/api/v1/jobs/gone-1", dev).status, 200) << "its jobs stay";
  const json last = with_key(release_alerts(), "instance_release:" + gone_id + ":released");
  EXPECT_NE(last["message_en"].get<std::string>().find("was released"), std::string::npos) << last.dump();
  EXPECT_EQ(with_key(release_alerts(), warn3)["state"], "resolved") << "a released instance's warnings are resolved";
  (void)released;
  const json kept_as_released = s.req("GET", "/api/v1/instances/" + gone_id, dev).body;
  EXPECT_EQ(kept_as_released["state"], "released") << kept_as_released.dump();
  EXPECT_NE(kept_as_released["stop_reason"].get<std::string>().find("after 5 day(s) stopped"), std::string::npos)
      << kept_as_released.dump();

  // Kept, read-only, for a week after its release; then removed.
  s.set_extra_args(at(t0 + 5 * day + 60'000 + kReleasedKeptDays * day - 3'600'000));
  s.restart();
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // a firewall pass or two
  EXPECT_EQ(s.req("GET", "/api/v1/instances/" + gone_id, dev).status, 200) << "not yet a week";
  s.set_extra_args(at(t0 + 5 * day + 60'000 + kReleasedKeptDays * day + 3'600'000));
  s.restart();
  wait_for(s, "/api/v1/instances?limit=100", [&](const json& j) {
    for (const json& i : j["items"])
      if (i["id"] == gone_id) return false;
    return true;
  });
  EXPECT_EQ(s.req("GET", "/api/v1/instances/" + gone_id, dev).status, 404);
  EXPECT_EQ(s.req("GET", "/api/v1/instances/kept", dev).status, 200);
}

}  // namespace
}  // namespace gpurent::testing
