// An instance's volumes (docs/resources/instances.md#volumes) in the real server on the simulated
// executor: a project's volume is mounted only by that project's jobs and instances, by several
// at once; a data disk is one instance's alone (another instance can neither take it as its data
// disk nor share it); a volume an instance holds cannot be deleted; attach and detach act on a
// stopped instance, checked as its next start would be, and that start mounts what it holds.
#include <gtest/gtest.h>

#include "server_fixture.h"

namespace gpurent::testing {
namespace {

auto inst_state_is(const std::string& state) {
  return [state](const json& x) { return x["state"] == state; };
}

TEST(InstanceVolumes, ADataDiskIsOneInstancesAProjectVolumeIsSharedWithinItsProject) {
  ServerProcess s({"--sched-interval-ms", "20", "--firewall-interval-s", "0"});
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "n1")), "node");
  expect_2xx(s.admin("POST", "/api/v1/offers", offer_doc("dc", "h100")), "offer");
  acme_and_beta(s);
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "audio")), "project");
  const std::string dev = make_user_token(s, "acme-dev", "tenant_member", "acme");
  const std::string viewer = make_user_token(s, "acme-viewer", "viewer", "acme");
  auto volume = [&](const std::string& name, const std::string& project) {
    json v = {{"name", name}, {"size_gb", 10}};
    if (!project.empty()) v["project"] = project;
    return s.req("POST", "/api/v1/volumes", dev, v);
  };
  expect_2xx(volume("home", ""), "home");
  expect_2xx(volume("scratch", ""), "scratch");
  const json team = expect_2xx(volume("team", "vision"), "team").body;
  EXPECT_EQ(team["project"], "vision");
  EXPECT_EQ(team["project_id"].get<std::string>().rfind("prj_", 0), 0u) << team.dump();
  EXPECT_EQ(volume("theirs", "nlp").error_fields(), std::vector<std::string>{"project"}) << "beta's project";
  const json listed = s.req("GET", "/api/v1/volumes?project=vision", dev).body;
  ASSERT_EQ(listed["items"].size(), 1u) << listed.dump();
  EXPECT_EQ(listed["items"][0]["name"], "team");
  json moved = team;
  moved["project"] = "audio";
  EXPECT_EQ(s.req("PUT", "/api/v1/volumes/team", dev, moved).error_fields(), std::vector<std::string>{"project"});

  // Only the project's jobs mount its volume.
  json audio_job = job_doc("audio", "reads-team");
  audio_job["volumes"] = {{{"name", "team"}, {"mount", "/team"}}};
  Resp refused = s.req("POST", "/api/v1/jobs", dev, audio_job);
  EXPECT_EQ(refused.error_fields(), std::vector<std::string>{"volumes[0].name"}) << refused.describe();
  EXPECT_NE(refused.describe().find("vision"), std::string::npos) << refused.describe();

  auto cpu_box = [](const std::string& name, const std::string& project) {
    return json{{"name", name},
                {"project", project},
                {"gpus", 0},
                {"image", "docker.io/library/debian:12"},
                {"command", {"sleep", "infinity"}},
                {"resources", {{"cpu_cores", 1}, {"memory_gib", 1}}}};
  };
  json a = cpu_box("a", "vision");
  a["volume"] = {{"name", "home"}};
  a["shared_volumes"] = {{{"name", "team"}, {"read_only", true}}};
  const json made = expect_2xx(s.req("POST", "/api/v1/instances", dev, a), "a").body;
  EXPECT_EQ(made["shared_volumes"], (json{{{"name", "team"}, {"mount", "/shared/team"}, {"read_only", true}}}));
  const json a_job = s.admin("GET", "/api/v1/jobs/" + made["current_job"]["id"].get<std::string>()).body;
  EXPECT_EQ(a_job["volumes"], (json{{{"name", "home"}, {"mount", "/data"}, {"read_only", false}},
                                    {{"name", "team"}, {"mount", "/shared/team"}, {"read_only", true}}}))
      << a_job.dump();

  // home is a's data disk: no other instance takes it, as a data disk or shared.
  json b = cpu_box("b", "vision");
  b["volume"] = {{"name", "home"}};
  Resp taken = s.req("POST", "/api/v1/instances", dev, b);
  EXPECT_EQ(taken.status, 409) << taken.describe();
  EXPECT_EQ(taken.error_fields(), std::vector<std::string>{"volume.name"}) << taken.describe();
  EXPECT_NE(taken.describe().find("instance a's data disk"), std::string::npos) << taken.describe();
  b["volume"] = {{"name", "scratch"}};
  b["shared_volumes"] = {{{"name", "home"}}};
  EXPECT_EQ(s.req("POST", "/api/v1/instances", dev, b).error_fields(), std::vector<std::string>{"shared_volumes[0].name"});
  // team is shared: b mounts it too; a data disk cannot be a volume another instance shares.
  b["shared_volumes"] = {{{"name", "team"}, {"mount", "/team"}}};
  expect_2xx(s.req("POST", "/api/v1/instances", dev, b), "b");
  json c = cpu_box("c", "vision");
  c["volume"] = {{"name", "team"}};
  EXPECT_EQ(s.req("POST", "/api/v1/instances", dev, c).status, 409);
  json d = cpu_box("d", "audio");
  d["shared_volumes"] = {{{"name", "team"}}};
  EXPECT_EQ(s.req("POST", "/api/v1/instances", dev, d).error_fields(), std::vector<std::string>{"shared_volumes[0].name"})
      << "another project's volume";
  EXPECT_EQ(s.req("GET", "/api/v1/instances/c", dev).status, 404) << "nothing created";

  // Held volumes stay; a running instance's volumes do not change.
  Resp held = s.req("DELETE", "/api/v1/volumes/home", dev);
  EXPECT_EQ(held.status, 409) << held.describe();
  EXPECT_NE(held.describe().find("instance a"), std::string::npos) << held.describe();
  ASSERT_EQ(wait_for(s, "/api/v1/instances/a", inst_state_is("running"))["state"], "running");
  Resp active = s.req("POST", "/api/v1/instances/a/detach", dev, json{{"name", "home"}});
  EXPECT_EQ(active.status, 409) << active.describe();

  // Stopped: home moves from a to b, whose next start mounts it.
  expect_2xx(s.req("POST", "/api/v1/instances/a/stop", dev, json::object()), "stop a");
  EXPECT_EQ(s.req("POST", "/api/v1/instances/a/detach", viewer, json{{"name", "home"}}).status, 403);
  EXPECT_EQ(s.req("POST", "/api/v1/instances/a/detach", dev, json{{"name", "nothing"}}).error_fields(),
            std::vector<std::string>{"name"});
  const json a_free = expect_2xx(s.req("POST", "/api/v1/instances/a/detach", dev, json{{"name", "home"}}), "detach").body;
  EXPECT_FALSE(a_free.contains("volume")) << a_free.dump();
  EXPECT_EQ(a_free["state"], "stopped") << "answered like a read";
  ASSERT_EQ(wait_for(s, "/api/v1/instances/b", inst_state_is("running"))["state"], "running");
  expect_2xx(s.req("POST", "/api/v1/instances/b/stop", dev, json::object()), "stop b");
  Resp has_one = s.req("POST", "/api/v1/instances/b/attach", dev, json{{"name", "home"}});
  EXPECT_EQ(has_one.status, 409) << has_one.describe() << " (b has scratch)";
  expect_2xx(s.req("POST", "/api/v1/instances/b/detach", dev, json{{"name", "scratch"}}), "detach scratch");
  EXPECT_EQ(s.req("POST", "/api/v1/instances/b/attach", dev, json{{"name", "home"}, {"mount", "/proc/home"}}).error_fields(),
            std::vector<std::string>{"volume.mount"});
  EXPECT_EQ(s.req("POST", "/api/v1/instances/b/attach", dev, json{{"name", "home"}, {"read_only", true}}).error_fields(),
            std::vector<std::string>{"read_only"});
  EXPECT_EQ(s.req("POST", "/api/v1/instances/b/attach", dev, json{{"name", "nowhere"}}).error_fields(),
            std::vector<std::string>{"volume.name"});
  const json b_home = expect_2xx(s.req("POST", "/api/v1/instances/b/attach", dev, json{{"name", "home"}}), "attach").body;
  EXPECT_EQ(b_home["volume"], (json{{"name", "home"}, {"mount", "/data"}, {"size_gb", 10}})) << b_home.dump();
  EXPECT_EQ(s.req("POST", "/api/v1/instances/a/attach", dev, json{{"name", "home"}}).status, 409) << "now b's";
  expect_2xx(s.req("POST", "/api/v1/instances/a/attach", dev,
                   json{{"name", "scratch"}, {"shared", true}, {"mount", "/scratch"}, {"read_only", true}}),
             "attach scratch shared");
  expect_2xx(s.req("POST", "/api/v1/instances/b/start", dev, json::object()), "start b");
  const json b_now = s.req("GET", "/api/v1/instances/b", dev).body;
  const json b_job = s.admin("GET", "/api/v1/jobs/" + b_now["current_job"]["id"].get<std::string>()).body;
  EXPECT_EQ(b_job["volumes"], (json{{{"name", "home"}, {"mount", "/data"}, {"read_only", false}},
                                    {{"name", "team"}, {"mount", "/team"}, {"read_only", false}}}))
      << b_job.dump();
  // Detached everywhere, a volume can go.
  EXPECT_EQ(s.req("DELETE", "/api/v1/volumes/scratch", dev).status, 409) << "a shares it";
  expect_2xx(s.req("POST", "/api/v1/instances/a/detach", dev, json{{"name", "scratch"}}), "detach scratch from a");
  EXPECT_EQ(s.req("DELETE", "/api/v1/volumes/scratch", dev).status, 204);
}

}  // namespace
}  // namespace gpurent::testing

namespace gpurent::testing {
namespace {

// Node volumes on the simulated executor (nothing runs, so none reaches a node): only servers with
// --node-volume-root keep them; only an instance mounts one, as its data disk; the preflight says
// where it is (no node before its first run).
TEST(InstanceVolumes, ANodeVolumeIsOnlyAnInstancesDataDisk) {
  ServerProcess plain({"--sched-interval-ms", "20", "--firewall-interval-s", "0"});
  acme_and_beta(plain);
  const std::string dev0 = make_user_token(plain, "acme-dev", "tenant_member", "acme");
  Resp no_root = plain.req("POST", "/api/v1/volumes", dev0, json{{"name", "disk"}, {"size_gb", 10}, {"placement", "node"}});
  EXPECT_EQ(no_root.error_fields(), std::vector<std::string>{"placement"}) << no_root.describe();

  ServerProcess s({"--sched-interval-ms", "20", "--firewall-interval-s", "0", "--node-volume-root", "/var/lib/gpurent/volumes"});
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "n1")), "node");
  acme_and_beta(s);
  const std::string dev = make_user_token(s, "acme-dev", "tenant_member", "acme");
  const json disk = expect_2xx(s.req("POST", "/api/v1/volumes", dev, json{{"name", "disk"}, {"size_gb", 10}, {"placement", "node"}}), "disk").body;
  EXPECT_EQ(disk["placement"], "node");
  EXPECT_FALSE(disk.contains("node_id")) << "on no node before its first run";
  json to_shared = disk;
  to_shared["placement"] = "shared";
  EXPECT_EQ(s.req("PUT", "/api/v1/volumes/disk", dev, to_shared).error_fields(), std::vector<std::string>{"placement"});
  json job = job_doc("vision", "reads-disk");
  job["volumes"] = {{{"name", "disk"}, {"mount", "/disk"}}};
  EXPECT_EQ(s.req("POST", "/api/v1/jobs", dev, job).error_fields(), std::vector<std::string>{"volumes[0].name"});
  // Nor by wearing an instance's label: only gpurent sets it.
  job["labels"] = {{"gpurent.io/instance", "box"}};
  Resp disguised = s.req("POST", "/api/v1/jobs", dev, job);
  EXPECT_EQ(disguised.error_fields(), std::vector<std::string>{"labels.gpurent.io/instance"}) << disguised.describe();
  job.erase("volumes");
  EXPECT_EQ(s.req("POST", "/api/v1/jobs", dev, job).error_fields(), std::vector<std::string>{"labels.gpurent.io/instance"});
  json box = {{"name", "box"}, {"project", "vision"}, {"gpus", 1}, {"gpu_model", "h100-sxm5-80gb"},
              {"image", "nvcr.io/nvidia/pytorch:24.05-py3"}, {"shared_volumes", {{{"name", "disk"}}}}};
  EXPECT_EQ(s.req("POST", "/api/v1/instances", dev, box).error_fields(), std::vector<std::string>{"shared_volumes[0].name"});
  box.erase("shared_volumes");
  box["volume"] = {{"name", "disk"}};
  expect_2xx(s.req("POST", "/api/v1/instances", dev, box), "box");
  const json pf = s.req("GET", "/api/v1/instances/box/preflight", dev).body;
  EXPECT_EQ(pf["volume"]["placement"], "node") << pf.dump();
  EXPECT_EQ(pf["volume"]["shared"], false);
  EXPECT_TRUE(pf["volume"]["node"].is_null()) << pf.dump();
  EXPECT_TRUE(pf["volume"]["copy"].is_null()) << pf.dump();

  // Its disk now on n1 (as a run's report would set it), and n1 out of service: a start without
  // GPUs, which would be pinned there and wait for ever, is refused saying so; back in service,
  // it starts.
  const auto in = [](const char* state) { return [state](const json& x) { return x["state"] == state; }; };
  ASSERT_EQ(wait_for(s, "/api/v1/instances/box", in("running"))["state"], "running");
  expect_2xx(s.req("POST", "/api/v1/instances/box/stop", dev, json::object()), "stop");
  wait_for(s, "/api/v1/instances/box", in("stopped"));
  const json n1 = s.admin("GET", "/api/v1/nodes/n1").body;
  edit_database(s, "UPDATE objects SET body = json_set(body, '$.node_id', '" + n1["id"].get<std::string>() +
                       "') WHERE kind = 'volumes' AND name = 'disk'");
  json down = n1;
  down["state"] = "unavailable";
  expect_2xx(s.admin("PUT", "/api/v1/nodes/n1", down), "n1 out of service");
  const json pf_out = s.req("GET", "/api/v1/instances/box/preflight", dev).body;
  EXPECT_EQ(pf_out["options"], (json{"same_host", "any_host"})) << "no cpu_only: " << pf_out.dump();
  EXPECT_NE(pf_out.dump().find("no CPU-only start while node n1, where its volume is, is unavailable"),
            std::string::npos)
      << pf_out.dump();
  const Resp refused = s.req("POST", "/api/v1/instances/box/start", dev, json{{"on", "cpu_only"}});
  EXPECT_EQ(refused.status, 409) << refused.describe();
  EXPECT_NE(refused.body.dump().find("on node n1, which is unavailable"), std::string::npos) << refused.describe();
  json up = s.admin("GET", "/api/v1/nodes/n1").body;
  up["state"] = "available";
  expect_2xx(s.admin("PUT", "/api/v1/nodes/n1", up), "n1 back");
  expect_2xx(s.req("POST", "/api/v1/instances/box/start", dev, json{{"on", "cpu_only"}}), "started without GPUs");
}

}  // namespace
}  // namespace gpurent::testing
