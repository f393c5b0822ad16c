// local_containers: a running instance saved as an image (docs/resources/instances.md#saving-an-image)
// on real Podman containers: what its program wrote outside the volume is in the image, the
// volume's files and the notebook's token are not; a job runs in the saved image on the node
// (loaded from the store after its digest is checked); while it is saved, a second save, a delete
// and an upload are refused; a save of a stopped instance is refused, and one whose instance
// stops before it is done fails saying so (in both languages) and leaves no files behind.
// Skipped without root or Podman, or (when the image is not built yet) the Debian archive.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "container_fixture.h"
#include "server_fixture.h"

namespace gpurent::testing {
namespace {

namespace fs = std::filesystem;

// The files under `dir` whose name holds `what`.
std::vector<std::string> files_naming(const std::string& dir, const std::string& what) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().find(what) != std::string::npos) out.push_back(it->path().filename().string());
  return out;
}

// Whether the files naming `what` under `dir` are gone within 20 s (the server removes a save's
// files on a pass after its outcome is stored).
bool files_gone(const std::string& dir, const std::string& what) {
  for (int i = 0; i < 100; ++i) {
    if (files_naming(dir, what).empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return false;
}

TEST(ContainerImageSave, local_containers_ARunningInstanceIsSavedAsAnImageJobsRunIn) {
  GPURENT_NEED_LOCAL_CONTAINERS();

  ContainerTestBox b;
  b.dir = make_temp_dir("gpurent-save");
  ASSERT_NE(b.dir, "");
  for (const char* d : {"/dev", "/out", "/volumes", "/runs", "/store"}) fs::create_directories(b.dir + d);
  ASSERT_EQ(std::system(("mknod " + b.dir + "/dev/gpu0 c 1 3").c_str()), 0);
  const int base = 20000 + static_cast<int>(getpid() % 600) * 20 + 10;  // beside the other instance test's ports
  ServerProcess s({"--executor", "local", "--containers", "--local-supplier", "dc", "--local-node", "box",
                   "--local-gpu-model", "h100-sxm5-80gb", "--local-driver", "550.90.07", "--local-cuda", "12.4",
                   "--local-run-dir", b.dir + "/runs", "--job-output-dir", b.dir + "/out",
                   "--container-gpu-device", b.dir + "/dev/gpu%d", "--volume-root", b.dir + "/volumes",
                   "--artifact-dir", b.dir + "/store", "--instance-ports", std::to_string(base) + "-" + std::to_string(base + 9),
                   "--instance-bind", "127.0.0.1", "--sched-interval-ms", "200"});
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  wait_for(s, "/api/v1/nodes?supplier=dc", [](const json& j) { return j["items"].size() == 1; });
  const std::string tenant = expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme")), "tenant").body["id"];
  b.network = "gpurent-" + tenant;
  b.image_scope = tenant;
  json p = project_doc("acme", "acme-proj");
  p["quota"]["gpus_per_model"] = {{"h100-sxm5-80gb", 1}};
  p["quota"].erase("max_gpus_per_job");
  expect_2xx(s.admin("POST", "/api/v1/projects", p), "project");
  const std::string dev = make_user_token(s, "acme-dev", "tenant_member", "acme");
  const std::string viewer = make_user_token(s, "acme-viewer", "viewer", "acme");
  expect_2xx(s.req("POST", "/api/v1/volumes", dev, json{{"name", "home"}, {"size_gb", 10}}), "volume");

  // The instance writes on its system disk (/opt is the image's; its user may write /var/tmp) and
  // on its volume, then waits.
  const json maker = {{"name", "maker"}, {"project", "acme-proj"}, {"gpus", 1}, {"gpu_model", "h100-sxm5-80gb"},
                      {"image", kImage}, {"volume", {{"name", "home"}}}, {"notebook", true},
                      {"command", {"sh", "-c", "echo from-maker > /var/tmp/made.txt; echo on-volume > /data/vol.txt; sleep infinity"}},
                      {"resources", {{"cpu_cores", 1}, {"memory_gib", 2}}}};
  expect_2xx(s.req("POST", "/api/v1/instances", dev, maker), "instance");
  const std::string path = "/api/v1/instances/maker";
  json up = wait_for(s, path, [](const json& j) { return j["state"] == "running"; }, 120);
  ASSERT_EQ(up["state"], "running") << up.dump() << s.log();
  for (int i = 0; i < 100 && !fs::exists(b.dir + "/volumes/" + tenant + "/home/vol.txt"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(200));

  Resp by_viewer = s.req("POST", path + "/image", viewer, json{{"name", "maker-env"}});
  EXPECT_EQ(by_viewer.status, 403) << by_viewer.describe();
  Resp bad = s.req("POST", path + "/image", dev, json{{"name", "Maker Env"}});
  EXPECT_EQ(bad.status, 422) << bad.describe();
  EXPECT_EQ(bad.body["errors"][0]["field"], "name") << bad.describe();

  Resp saving = s.req("POST", path + "/image", dev, json{{"name", "maker-env"}, {"description", "maker's tools"}});
  ASSERT_EQ(saving.status, 202) << saving.describe();
  const std::string image = saving.body["id"];
  EXPECT_EQ(saving.body["state"], "saving");
  EXPECT_EQ(saving.body["format"], "docker-archive");
  EXPECT_EQ(saving.body["visibility"], "tenant");
  EXPECT_EQ(saving.body["source"]["instance"], "maker") << saving.describe();
  EXPECT_EQ(saving.body["source"]["job_id"], up["current_job"]["id"]) << saving.describe();
  // While it is saved: one save at a time, and neither a delete nor an upload.
  Resp twice = s.req("POST", path + "/image", dev, json{{"name", "maker-env-2"}});
  EXPECT_EQ(twice.status, 409) << twice.describe();
  EXPECT_NE(twice.body["detail"].get<std::string>().find("maker-env"), std::string::npos) << twice.describe();
  EXPECT_EQ(s.req("DELETE", "/api/v1/images/" + image, dev).status, 409);
  EXPECT_EQ(s.raw("PUT", "/api/v1/images/" + image + "/archive?offset=0", dev, "x", "application/octet-stream").status, 409);

  json ready = wait_for(s, "/api/v1/images/" + image, [](const json& j) { return j["state"] != "saving"; }, 180);
  ASSERT_EQ(ready["state"], "ready") << ready.dump() << s.log();
  const std::string sha = ready["sha256"];
  ASSERT_EQ(sha.size(), 64u);
  EXPECT_GT(ready["size_bytes"].get<int64_t>(), 1'000'000) << ready.dump();
  EXPECT_EQ(ready["size_bytes"], ready["received_bytes"]);
  EXPECT_EQ(ready["reference"], "localhost/gpurent/" + tenant + "/maker-env:" + sha.substr(0, 12));
  EXPECT_TRUE(fs::exists(b.dir + "/store/sha256/" + sha)) << "the archive is a file of the content store";
  EXPECT_EQ(run_cmd("sha256sum < " + b.dir + "/store/sha256/" + sha).substr(0, 64), sha);
  EXPECT_TRUE(files_gone(b.dir + "/store/saves", image)) << "the save's files are gone (a pass after the ready is stored)";
  EXPECT_EQ(run_cmd("podman images -q --filter reference='localhost/gpurent/" + tenant + "/saving-*'"), "")
      << "the temporary tag is gone";

  // A job in the saved image: the system disk's file is there; the volume's is not, nor the token.
  json job = job_doc("acme-proj", "in-saved");
  job["gpus_per_worker"] = 1;
  job["constraints"] = {{"gpu_models", {"h100-sxm5-80gb"}}};
  job["image"] = "maker-env";
  // Nor the notebook's runtime files (its token, its cookie secret): the instance kept them in its
  // container's tmpfs.
  job["command"] = {"sh", "-c",
                    "cat /var/tmp/made.txt; ls /data 2>/dev/null | wc -l; env | grep -c JUPYTER_TOKEN; "
                    "ls -A /.gpurent 2>/dev/null | wc -l; true"};
  job["resources"] = {{"cpu_cores", 1}, {"memory_gib", 1}};
  expect_2xx(s.req("POST", path + "/stop", dev, json::object()), "stop the maker for the GPU");
  const std::string job_id = expect_2xx(s.req("POST", "/api/v1/jobs", dev, job), "job").body["id"];
  json ran = wait_for(s, "/api/v1/jobs/" + job_id, [](const json& j) {
    const json& st = j["status"]["state"];
    return st == "succeeded" || st == "failed" || st == "cancelled";
  }, 180);
  Resp out = s.req("GET", "/api/v1/jobs/" + job_id + "/logs?limit=65536", dev);
  ASSERT_EQ(ran["status"]["state"], "succeeded") << ran.dump() << out.describe() << s.log();
  EXPECT_EQ(out.body["data"], "from-maker\n0\n0\n0\n") << out.describe();
  // The image's CMD is its base's (none here), not the instance's entry: a job naming no command
  // fails at once rather than starting the old instance's notebook and waiting, billed.
  job["name"] = "no-command";
  job.erase("command");
  const std::string bare_id = expect_2xx(s.req("POST", "/api/v1/jobs", dev, job), "job without a command").body["id"];
  json bare = wait_for(
      s, "/api/v1/jobs/" + bare_id,
      [](const json& j) {
        const json& st = j["status"]["state"];
        return st == "succeeded" || st == "failed" || st == "cancelled";
      },
      120);
  EXPECT_EQ(bare["status"]["state"], "failed")
      << bare.dump() << s.req("GET", "/api/v1/jobs/" + bare_id + "/logs", dev).describe();

  // A stopped instance has no container to save.
  json stopped = wait_for(s, path, [](const json& j) { return j["state"] == "stopped"; }, 60);
  ASSERT_EQ(stopped["state"], "stopped");
  Resp not_running = s.req("POST", path + "/image", dev, json{{"name", "too-late"}});
  EXPECT_EQ(not_running.status, 409) << not_running.describe();
  EXPECT_EQ(not_running.body["detail_message"]["code"], "api.instances.save_not_running") << not_running.describe();

  // Stopped before its save is done: the image fails saying so, and no file of it stays.
  expect_2xx(s.req("POST", path + "/start", dev, json{{"on", "any_host"}}), "start");
  ASSERT_EQ(wait_for(s, path, [](const json& j) { return j["state"] == "running"; }, 120)["state"], "running");
  Resp cut = s.req("POST", path + "/image", dev, json{{"name", "cut-short"}});
  ASSERT_EQ(cut.status, 202) << cut.describe();
  expect_2xx(s.req("POST", path + "/stop", dev, json::object()), "stop while saving");
  const std::string cut_id = cut.body["id"];  // (wait_for reads as the operator, who names tenants' images by id)
  json failed = wait_for(s, "/api/v1/images/" + cut_id, [](const json& j) { return j["state"] != "saving"; }, 60);
  EXPECT_EQ(failed["state"], "failed") << failed.dump();
  EXPECT_NE(failed["error"].get<std::string>().find("maker stopped before"), std::string::npos) << failed.dump();
  EXPECT_NE(s.req("GET", "/api/v1/images/cut-short?lang=zh", dev).body["error"].get<std::string>().find("停止"),
            std::string::npos);
  EXPECT_TRUE(files_gone(b.dir + "/store/saves", cut_id));
  EXPECT_EQ(s.req("DELETE", "/api/v1/images/cut-short", dev).status, 204) << "a failed save is deleted like any image";
}

}  // namespace
}  // namespace gpurent::testing
