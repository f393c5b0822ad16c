// Instances' SSH keys and access fields (model/instance.h): what a key must look like, how many,
// and that the server-set ports and token are read back from the stored body only.
#include "model/instance.h"

#include <gtest/gtest.h>

namespace gpurent {
namespace {

constexpr const char* kInstanceEd25519 =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMmoR98h6zcgRAJsBTuFmr2APBlJQ6nJyM70vXl+nPx dev@laptop";
constexpr const char* kInstanceEcdsa =
    "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBHasDhG+TC3Lt5HfW/qSs8/atprSuo6WMbZCgAg"
    "MMw+MSezkQurfxd36ffl+fDMr1V0M9iS7m4gSCVVuq0ZjOOA=";

std::string key_problem_code(const std::string& key) {
  auto m = ssh_key_problem(key);
  return m ? m->code : "";
}

TEST(Instance, SshKeysAreOneLineOpenSshPublicKeysOfTheirOwnType) {
  EXPECT_EQ(key_problem_code(kInstanceEd25519), "");
  EXPECT_EQ(key_problem_code(kInstanceEcdsa), "");
  EXPECT_EQ(key_problem_code("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMmoR98h6zcgRAJsBTuFmr2APBlJQ6nJyM70vXl+nPx"), "") << "no comment";
  EXPECT_EQ(key_problem_code(std::string(kInstanceEd25519) + "\ncommand=\"sh\" ssh-rsa AAAA"), "instance.ssh_key.one_line");
  EXPECT_EQ(key_problem_code("-----BEGIN OPENSSH PRIVATE KEY-----"), "instance.ssh_key.type");
  EXPECT_EQ(key_problem_code("command=\"/bin/sh\" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMmoR98h6zcgRAJsBTuFmr2APBlJQ6nJyM70vXl+nPx"),
            "instance.ssh_key.type")
      << "authorized_keys options are not keys";
  EXPECT_EQ(key_problem_code("ssh-ed25519"), "instance.ssh_key.no_key");
  EXPECT_EQ(key_problem_code("ssh-ed25519 not-base64!"), "instance.ssh_key.not_base64");
  EXPECT_EQ(key_problem_code("ssh-ed25519 AAAA"), "instance.ssh_key.not_base64") << "too short to hold its type";
  // An ECDSA key labelled ed25519 (a copy-paste slip): the blob names its own type.
  const std::string blob = std::string(kInstanceEcdsa).substr(std::string(kInstanceEcdsa).find(' ') + 1);
  EXPECT_EQ(key_problem_code("ssh-ed25519 " + blob), "instance.ssh_key.type_mismatch");
}

TEST(Instance, AccessFieldsNameTheKeyAndAreServerSetOnlyWhenStored) {
  json body = {{"name", "box"}, {"project", "vision"}, {"ssh_keys", {kInstanceEd25519, "ssh-rsa x"}}, {"notebook", true}};
  auto bad = parse_instance(body);
  ASSERT_FALSE(bad);
  ASSERT_EQ(bad.error().fields.size(), 1u);
  EXPECT_EQ(bad.error().fields[0].field, "ssh_keys[1]");
  body["ssh_keys"] = json::array();
  for (int k = 0; k < 17; ++k) body["ssh_keys"].push_back(kInstanceEd25519);
  EXPECT_EQ(parse_instance(body).error().fields[0].field, "ssh_keys");
  body["ssh_keys"] = {std::string("ssh-rsa AAAAB3NzaC1yc2E") + std::string(4096, 'A')};
  EXPECT_EQ(parse_instance(body).error().fields[0].field, "ssh_keys[0]") << "longer than any real public key";
  body["ssh_keys"] = {kInstanceEd25519};
  // A client cannot choose the node ports or the token: they are echoed back ignored.
  body["ssh_port"] = 22;
  body["notebook_port"] = 80;
  auto i = parse_instance(body);
  ASSERT_TRUE(i) << i.error().message;
  EXPECT_EQ(i->ssh_port, 0);
  EXPECT_EQ(i->notebook_port, 0);
  EXPECT_TRUE(i->notebook);
  body.erase("notebook_port");
  body.erase("ssh_port");
  body["notebook_token"] = "mine";
  EXPECT_FALSE(parse_instance(body)) << "the token is the server's";
  // Stored: read back exactly.
  i->tenant_id = "ten_1";
  i->project_id = "prj_1";
  i->ssh_port = 30000;
  i->notebook_port = 30001;
  i->notebook_token = std::string(64, 'a');
  auto back = decode_instance(to_json(*i));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, *i);
  // The job of a start carries neither keys nor token: the executor gives them to the container.
  auto job = instance_job(*i, 1, 0);
  ASSERT_TRUE(job);
  EXPECT_FALSE(job->contains("ssh_keys"));
  EXPECT_EQ(job->dump().find(std::string(64, 'a')), std::string::npos);
}

TEST(Instance, IdleWhenTheTrailingLowReadingsLastTheWindow) {
  const IdleStop rule{10, 5};  // below 10 % for 5 minutes
  const TimeMs m = 60'000;
  auto pts = [](std::vector<std::pair<TimeMs, int64_t>> v) {
    std::vector<UtilPoint> out;
    for (auto [at, pct] : v) out.push_back({at, pct});
    return out;
  };
  EXPECT_FALSE(instance_idle_since({}, rule)) << "no readings: never idle";
  EXPECT_EQ(instance_idle_since(pts({{0, 3}, {5 * m, 3}}), rule), 5 * m) << "low from 0 to 5 minutes";
  EXPECT_EQ(instance_idle_since(pts({{0, 3}, {3 * m, 2}, {7 * m, 9}}), rule), 5 * m);
  EXPECT_FALSE(instance_idle_since(pts({{0, 3}, {4 * m, 3}}), rule)) << "low for 4 minutes only";
  EXPECT_FALSE(instance_idle_since(pts({{0, 3}, {5 * m, 3}, {6 * m, 10}}), rule)) << "busy again (10 is not below 10)";
  EXPECT_FALSE(instance_idle_since(pts({{0, 3}, {2 * m, 50}, {3 * m, 3}, {7 * m, 3}}), rule))
      << "the low run restarted at 3 minutes";
  EXPECT_EQ(instance_idle_since(pts({{0, 3}, {2 * m, 50}, {3 * m, 3}, {8 * m, 3}}), rule), 8 * m);
  EXPECT_FALSE(instance_idle_since(pts({{0, 0}, {60 * m, 0}}), IdleStop{10, 0})) << "minutes 0: off";
}

TEST(Instance, IdleRulesAreCheckedWhereTheyAreSet) {
  json body = {{"name", "box"}, {"project", "vision"}, {"idle_stop", {{"below_percent", 0}, {"minutes", 1441}}}};
  auto bad = parse_instance(body);
  ASSERT_FALSE(bad);
  std::vector<std::string> fields;
  for (const auto& f : bad.error().fields) fields.push_back(f.field);
  EXPECT_EQ(fields, (std::vector<std::string>{"idle_stop.below_percent", "idle_stop.minutes"}));
  body["idle_stop"] = {{"below_percent", 5}, {"minutes", 0}};
  auto off = parse_instance(body);
  ASSERT_TRUE(off) << off.error().message;
  EXPECT_EQ(off->idle_stop, (IdleStop{5, 0}));
}

TEST(Instance, AStartGoesHomeElsewhereOrWithoutGpusAsAsked) {
  EXPECT_EQ(*parse_start_request(json::object()), StartOn::kAuto);
  EXPECT_EQ(*parse_start_request(json{{"on", "cpu_only"}}), StartOn::kCpuOnly);
  EXPECT_EQ(parse_start_request(json{{"on", "home"}}).error().fields.at(0).field, "on");
  EXPECT_EQ(parse_start_request(json{{"where", "home"}}).error().fields.at(0).field, "where");
  const json job = {{"gpus_per_worker", 2}, {"constraints", {{"gpu_models", {"h100-sxm5-80gb"}}}}, {"resources", {{"cpu_cores", 16}}}};
  EXPECT_EQ(start_job_on(job, StartOn::kAnyHost, ""), job);
  EXPECT_EQ(start_job_on(job, StartOn::kSameHost, "nod_1")["constraints"],
            (json{{"gpu_models", {"h100-sxm5-80gb"}}, {"nodes", {"nod_1"}}}));
  // CPU-only: no GPUs and no GPU constraints; its own cores kept, the default memory added; on the
  // node given (where its node volume is), else anywhere.
  const json cpu = start_job_on(job, StartOn::kCpuOnly, "");
  EXPECT_EQ(cpu["gpus_per_worker"], 0);
  EXPECT_FALSE(cpu.contains("constraints"));
  EXPECT_EQ(cpu["resources"], (json{{"cpu_cores", 16}, {"memory_gib", kCpuOnlyStartMemoryGib}}));
  EXPECT_EQ(start_job_on(job, StartOn::kCpuOnly, "nod_1")["constraints"], (json{{"nodes", {"nod_1"}}}));
  // Where it may run and who may sell it stay (data sovereignty): only the GPU constraints go.
  json placed = job;
  placed["constraints"] = {{"gpu_models", {"h100-sxm5-80gb"}}, {"rdma", "infiniband"}, {"regions", {"cn-east"}},
                           {"suppliers", {"sup_1"}}, {"span_sites", true}};
  EXPECT_EQ(start_job_on(placed, StartOn::kCpuOnly, "")["constraints"],
            (json{{"regions", {"cn-east"}}, {"suppliers", {"sup_1"}}, {"span_sites", true}}));
}

// Released while its last run is still being stopped: its name is free at once, but it is found
// as stopping (and holds its volumes and ports: api/instances.cc) until that run has gone.
TEST(Instance, AReleaseKeepsTheRunItIsStoppingUntilItHasGone) {
  Instance i;
  i.name = "box";
  i.stopping_job = "job_1";
  i.stopping_since = 5000;
  mark_released(i, Message("instance.released_by").arg("user", "dev"), 6000);
  EXPECT_EQ(i.stopping_job, "job_1");
  EXPECT_EQ(i.stopping_since, 5000);
  IndexCols c = index_of(i);
  EXPECT_EQ(c.name, "");
  EXPECT_EQ(c.state, "stopping");
  i.stopping_job.clear();  // what end_instance_stops does once the run has gone
  EXPECT_EQ(index_of(i).state, "released");
}

TEST(Instance, ReleaseWarningsGoOutThreeAndOneDayBeforeButNeverBeforeTheStop) {
  constexpr TimeMs kDay = 86'400'000;
  const TimeMs stopped = 100 * kDay;
  const TimeMs release = release_time(stopped, 5);
  EXPECT_EQ(release, 105 * kDay);
  EXPECT_TRUE(release_warnings_due(stopped + kDay, stopped, release).empty());
  EXPECT_EQ(release_warnings_due(release - 3 * kDay, stopped, release), (std::vector<int64_t>{3}));
  EXPECT_EQ(release_warnings_due(release - kDay, stopped, release), (std::vector<int64_t>{3, 1}));
  EXPECT_TRUE(release_warnings_due(release, stopped, release).empty()) << "due: released, not warned";
  // Two days: the 3-day warning would come before the stop, so it goes out at the stop.
  const TimeMs soon = release_time(stopped, 2);
  EXPECT_EQ(release_warnings_due(stopped, stopped, soon), (std::vector<int64_t>{3}));
  EXPECT_EQ(release_warnings_due(soon - kDay, stopped, soon), (std::vector<int64_t>{3, 1}));
}

}  // namespace
}  // namespace gpurent
