// slurm_containers: jobs run in Podman containers on a real local Slurm cluster
// (scripts/slurm-local, fake GPU device nodes) with `gpurent serve --executor slurm --containers`,
// from an image built from Debian packages (scripts/debian-image, cached). Inside, a job sees
// exactly its GPUs' device nodes and matching CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES, runs
// as a non-root user, writes to its tenant's volume, and its tenant reads the output through the
// API and `gpurent jobs logs`; a two-node gang gets a container on each node. Isolation: another
// tenant's container sees neither the first tenant's volume, processes, GPUs nor network, and the
// API refuses a call without a token. A memory hog fails with an out-of-memory reason naming the
// limit, a fork bomb is held by the pids limit, a missing image and a non-zero exit say so.
// Skipped without root, Slurm, Podman, or (when the image is not built yet) the Debian archive.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "core/ids.h"
#include "container_fixture.h"
#include "server_fixture.h"

namespace gpurent::testing {
namespace {

namespace fs = std::filesystem;

auto finished = [](const json& j) {
  const std::string s = j["status"]["state"];
  return s == "succeeded" || s == "failed" || s == "cancelled";
};

// The one line of the job's log that starts with `tag`, parsed as JSON (null when absent).
json tagged(const std::string& log, const std::string& tag) {
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(tag + " ", 0) == 0) return json::parse(line.substr(tag.size() + 1), nullptr, false);
  return nullptr;
}

std::string base64(const std::string& in) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < in.size(); i += 3) {
    uint32_t v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    if (i + 2 < in.size()) v |= static_cast<unsigned char>(in[i + 2]);
    out += t[(v >> 18) & 63];
    out += t[(v >> 12) & 63];
    out += i + 1 < in.size() ? t[(v >> 6) & 63] : '=';
    out += i + 2 < in.size() ? t[v & 63] : '=';
  }
  return out;
}

// A Python program printing what the container can see, as one JSON line tagged FACTS.
const char* kFacts = R"PY(
import json, os, glob, socket, urllib.request, urllib.error
if os.environ.get("WRITE"):
    open("/data/" + os.environ["WRITE"], "w").write("from " + os.environ["GPURENT_JOB_ID"])
facts = {"uid": os.getuid(), "devices": sorted(glob.glob("/dev/nvidia*")),
         "cuda": os.environ.get("CUDA_VISIBLE_DEVICES"), "nvidia": os.environ.get("NVIDIA_VISIBLE_DEVICES"),
         "indices": os.environ.get("GPURENT_GPU_INDICES"), "node": os.environ.get("GPURENT_NODE"),
         "job": os.environ.get("GPURENT_JOB_ID"), "greeting": os.environ.get("GREETING"),
         "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
         "data": sorted(os.listdir("/data")) if os.path.isdir("/data") else None,
         "ip": socket.gethostbyname(socket.gethostname())}
try:
    urllib.request.urlopen(os.environ["API"] + "/api/v1/jobs", timeout=5)
    facts["api"] = 200
except urllib.error.HTTPError as e:
    facts["api"] = e.code
except Exception as e:
    facts["api"] = str(e)
sv = os.environ.get("HF_TOKEN")
if sv is not None:
    fv = open("/run/secrets/hf").read() if os.path.exists("/run/secrets/hf") else None
    facts.update(secret_len=len(sv), secret_same=(fv == sv), secret_prefix=sv[:4])
peer = os.environ.get("PEER")
if peer:
    try:
        socket.create_connection((peer, 8000), timeout=3).close()
        facts["peer"] = "reached"
    except Exception as e:
        facts["peer"] = "blocked"
print("FACTS " + json.dumps(facts), flush=True)
if os.environ.get("SERVE"):
    import http.server
    http.server.HTTPServer(("0.0.0.0", 8000), http.server.SimpleHTTPRequestHandler).serve_forever()
)PY";

// Job strings refuse line breaks: the program travels base64-encoded in PROG.
const json kRunFacts = {"python3", "-c", "import base64, os; exec(base64.b64decode(os.environ['PROG']))"};

TEST(ContainerSlurm, slurm_containers_RunIsolatedOnExactlyTheirGpus) {
  if (const std::string why = local_slurm_skip_reason(); !why.empty()) GTEST_SKIP() << why;
  if (std::getenv("SLURM_LOCAL_IMAGE")) GTEST_SKIP() << "containers run on the host's Slurm (22.05) only";
  bool skip = false;
  const std::string not_ready = container_test_setup(&skip);
  if (skip) GTEST_SKIP() << not_ready;
  ASSERT_EQ(not_ready, "");

  SlurmContainerCluster c;
  c.dir = make_temp_dir("gpurent-containers");
  ASSERT_NE(c.dir, "");
  ASSERT_EQ(std::system((std::string(GPURENT_SOURCE_DIR) + "/scripts/slurm-local start " + c.dir + " 2 4").c_str()), 0);
  use_local_slurm_tools(c.dir);
  fs::create_directories(c.dir + "/out");
  fs::create_directories(c.dir + "/volumes");

  ServerProcess s({"--host", "0.0.0.0", "--insecure-http", "--executor", "slurm", "--slurm-conf", c.dir + "/slurm.conf",
                   "--slurm-gres-type", "h100", "--slurm-supplier", "dc", "--slurm-gpu-model", "h100-sxm5-80gb",
                   "--slurm-driver", "550.90.07", "--slurm-cuda", "12.4", "--slurm-output-dir", c.dir + "/out",
                   "--containers", "--container-gpu-device", c.dir + "/dev/gpu%d", "--volume-root",
                   c.dir + "/volumes", "--container-pids-limit", "64", "--sched-interval-ms", "200",
                   "--firewall-interval-s", "3600"});  // a pass at start; raised alerts delivered at once
  const std::string port = s.url().substr(s.url().rfind(':') + 1);
  const std::string api = "http://host.containers.internal:" + port;
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  wait_for(s, "/api/v1/nodes?supplier=dc", [](const json& j) { return j["items"].size() == 2; });
  std::map<std::string, std::string> tenant_id, token;
  for (const std::string t : {"acme", "beta"}) {
    tenant_id[t] = expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc(t)), "tenant").body["id"];
    c.networks.push_back("gpurent-" + tenant_id[t]);
    json p = project_doc(t, t + "-proj");
    p["quota"]["gpus_per_model"] = {{"h100-sxm5-80gb", 64}};
    p["quota"].erase("max_gpus_per_job");
    p["quota"]["max_concurrent_jobs"] = 10;
    expect_2xx(s.admin("POST", "/api/v1/projects", p), "project");
    token[t] = make_user_token(s, t + "-dev", "tenant_member", t);
    token[t + "-admin"] = make_user_token(s, t + "-admin", "tenant_admin", t);
  }
  auto submit = [&](const std::string& tenant, const std::string& name, int workers, int gpus, json command,
                    const json& extra = json::object()) {
    json j = job_doc(tenant + "-proj", name);
    j["workers"] = workers;
    j["gpus_per_worker"] = gpus;
    j["image"] = kImage;
    j["command"] = std::move(command);
    j["expected_duration_seconds"] = 600;
    j["constraints"] = {{"gpu_models", {"h100-sxm5-80gb"}}};
    j["resources"] = {{"cpu_cores", 1}, {"memory_gib", 1}};
    j["env"] = {{"API", api}, {"GREETING", "你好"}, {"PROG", base64(kFacts)}};
    j.merge_patch(extra);
    return expect_2xx(s.req("POST", "/api/v1/jobs", token[tenant], j), name).body["id"].get<std::string>();
  };
  auto logs = [&](const std::string& tenant, const std::string& id) {
    Resp r = s.req("GET", "/api/v1/jobs/" + id + "/logs?limit=1048576", token[tenant]);
    return r.status == 200 ? r.body["data"].get<std::string>() : std::string();
  };
  auto wait_tag = [&](const std::string& tenant, const std::string& id, const std::string& tag) {
    json got;
    for (int i = 0; i < 300 && got.is_null(); ++i) {
      got = tagged(logs(tenant, id), tag);
      if (got.is_null()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return got;
  };

  // A job this server could never run in a container is refused at once: no image and no default.
  {
    json j = job_doc("acme-proj", "no-image");
    j.erase("image");
    j["command"] = {"true"};
    Resp r = s.req("POST", "/api/v1/jobs", token["acme"], j);
    EXPECT_EQ(r.status, 422) << r.describe();
    EXPECT_EQ(r.error_fields(), std::vector<std::string>{"image"}) << r.describe();
  }

  for (const char* t : {"acme", "beta"})  // each tenant's own volume named data
    expect_2xx(s.req("POST", "/api/v1/volumes", token[t], json{{"name", "data"}, {"size_gb", 10}}), "volume");

  // Tenant acme: a server on two GPUs that writes to its volume and stays up, with a secret as a
  // variable and as a file.
  const std::string kSecret = "tok-s3cr3t\nsecond line";
  ASSERT_EQ(s.req("PUT", "/api/v1/projects/acme-proj/secrets/hf-token", token["acme-admin"], json{{"value", kSecret}}).status,
            201);
  const std::string a = submit("acme", "a-serve", 1, 2, kRunFacts,
                               {{"volumes", {{{"name", "data"}, {"mount", "/data"}}}},
                                {"env", {{"WRITE", "hello.txt"}, {"SERVE", "1"}}},
                                {"secrets", {{{"name", "hf-token"}, {"env", "HF_TOKEN"}},
                                             {{"name", "hf-token"}, {"file", "/run/secrets/hf"}}}}});
  json fa = wait_tag("acme", a, "FACTS");
  ASSERT_FALSE(fa.is_null()) << logs("acme", a) << s.log();
  EXPECT_NE(fa["uid"], 0) << "never root inside";
  const std::string idx = fa["indices"];
  ASSERT_EQ(idx.size(), 3u) << fa.dump();  // "i,j"
  EXPECT_EQ(fa["devices"], json::array({"/dev/nvidia" + idx.substr(0, 1), "/dev/nvidia" + idx.substr(2, 1)}))
      << fa.dump();
  EXPECT_EQ(fa["cuda"], "0,1");
  EXPECT_EQ(fa["nvidia"], idx);
  EXPECT_EQ(fa["job"], a);
  EXPECT_EQ(fa["greeting"], "你好");
  EXPECT_EQ(fa["api"], 401) << "the API answers a container only with a token: " << fa.dump();
  EXPECT_EQ(fa["data"], json::array({"hello.txt"}));
  EXPECT_EQ(fa["secret_len"], kSecret.size()) << fa.dump();
  EXPECT_EQ(fa["secret_same"], true) << "the variable and the file hold the same value: " << fa.dump();
  EXPECT_EQ(fa["secret_prefix"], "tok-");
  EXPECT_LE(fa["pids"].size(), 3u) << "its own processes only: " << fa.dump();
  // The placement gpurent shows is the GPUs the container got.
  json ja = s.req("GET", "/api/v1/jobs/" + a, token["acme"]).body;
  EXPECT_EQ(ja["status"]["state"], "running");
  json want_gpus = json::array({std::stoi(idx.substr(0, 1)), std::stoi(idx.substr(2, 1))});
  EXPECT_EQ(ja["status"]["placement"][0]["gpus"], want_gpus) << ja.dump();
  EXPECT_TRUE(fs::exists(c.dir + "/volumes/" + tenant_id["acme"] + "/data/hello.txt"));

  // Tenant beta, on the same node if it can be: sees none of acme's volume, processes, GPUs or network.
  const std::string b = submit("beta", "b-probe", 1, 2, kRunFacts,
                               {{"volumes", {{{"name", "data"}, {"mount", "/data"}}}},
                                {"env", {{"PEER", fa["ip"]}}}});
  json fb = wait_tag("beta", b, "FACTS");
  ASSERT_FALSE(fb.is_null()) << logs("beta", b);
  EXPECT_EQ(fb["data"], json::array()) << "beta's own, empty volume";
  EXPECT_EQ(fb["peer"], "blocked") << "another tenant's network: " << fb.dump();
  for (const auto& d : fb["devices"])
    if (fb["node"] == fa["node"]) {
      EXPECT_NE(d, "/dev/nvidia" + idx.substr(0, 1));
      EXPECT_NE(d, "/dev/nvidia" + idx.substr(2, 1));
    }
  EXPECT_LE(fb["pids"].size(), 3u) << fb.dump();
  // Within a tenant, its own network reaches its own container.
  const std::string a2 = submit("acme", "a-peer", 1, 1, kRunFacts, {{"env", {{"PEER", fa["ip"]}}}});
  json fa2 = wait_tag("acme", a2, "FACTS");
  EXPECT_EQ(fa2["peer"], "reached") << fa2.dump();
  // The logs are the tenant's: another tenant gets 404; the CLI reads them.
  EXPECT_EQ(s.req("GET", "/api/v1/jobs/" + a + "/logs", token["beta"]).status, 404);
  const std::string cli = run_cmd("GPURENT_SERVER=" + s.url() + " GPURENT_TOKEN=" + token["beta"] + " " +
                                  std::string(GPURENT_BIN) + " jobs logs b-probe --tail 5");
  EXPECT_NE(cli.find("FACTS {"), std::string::npos) << cli;
  // The secret's value is nowhere the platform writes: not in the batch script Slurm keeps, the
  // job's answers, its log (the job printed only its length), nor the server's log.
  const std::string scripts = run_cmd("export SLURM_CONF=" + c.dir +
                                      "/slurm.conf; for j in $(squeue -h -o %i); do scontrol write batch_script $j -; done");
  EXPECT_NE(scripts.find("gpurent_worker"), std::string::npos) << scripts;
  EXPECT_EQ(scripts.find("s3cr3t"), std::string::npos) << "the batch script holds no value";
  EXPECT_EQ(s.req("GET", "/api/v1/jobs/" + a, token["acme"]).text.find("s3cr3t"), std::string::npos);
  EXPECT_EQ(logs("acme", a).find("s3cr3t"), std::string::npos);
  EXPECT_EQ(s.req("GET", "/api/v1/projects/acme-proj/secrets", token["acme"]).text.find("s3cr3t"), std::string::npos);
  EXPECT_TRUE(fs::exists(c.dir + "/out/.secrets/" + a + "/hf-token"));
  expect_2xx(s.req("POST", "/api/v1/jobs/" + a + "/cancel", token["acme"], json{{"reason", "done"}}), "cancel");
  wait_for(s, "/api/v1/jobs/" + a, finished, 60);
  for (int i = 0; i < 50 && fs::exists(c.dir + "/out/.secrets/" + a); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(fs::exists(c.dir + "/out/.secrets/" + a)) << "a job's secret files go when it ends";
  std::string left;
  for (int i = 0; i < 50; ++i) {  // and Podman's copies of them, even though the job was cancelled
    left = run_cmd("podman secret ls --format '{{.Name}}' | grep " + a + " || true");
    if (left.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_EQ(left, "") << "Podman secrets left on the node";

  // A gang over both nodes: a container on each, each with its node's four GPUs; the image named
  // by its digest (exactly that content runs).
  std::string digest = run_cmd("podman image inspect " + std::string(kImage) + " --format '{{.Digest}}'");
  while (!digest.empty() && digest.back() == '\n') digest.pop_back();
  ASSERT_EQ(digest.rfind("sha256:", 0), 0u) << digest;
  const std::string by_digest = "localhost/gpurent/dev@" + digest;
  const std::string g = submit("acme", "gang", 2, 4,
                               {"sh", "-c", "echo GANG \"{\\\"node\\\": \\\"$GPURENT_NODE\\\", \\\"n\\\": $(ls /dev/nvidia* | wc -l)}\""},
                               {{"image", by_digest}});
  json gj = wait_for(s, "/api/v1/jobs/" + g, finished, 90);
  EXPECT_EQ(gj["status"]["state"], "succeeded") << gj.dump() << logs("acme", g);
  const std::string gl = logs("acme", g);
  EXPECT_NE(gl.find(R"({"node": "gpn1", "n": 4})"), std::string::npos) << gl;
  EXPECT_NE(gl.find(R"({"node": "gpn2", "n": 4})"), std::string::npos) << gl;

  // Faults with clear reasons.
  const std::string oom = submit("beta", "hog", 1, 1, {"python3", "-c", "x = bytearray(3 * 1024**3)"});
  // A fork bomb: children that sleep, forked until the kernel refuses (the pids limit, 64).
  const std::string bomb = submit(
      "beta", "bomb", 1, 1, kRunFacts,
      {{"env", {{"PROG", base64("import os, time\nn = 0\ntry:\n    while n < 5000:\n        if os.fork() == 0:\n"
                                  "            time.sleep(60); os._exit(0)\n        n += 1\nexcept OSError as e:\n"
                                  "    print('FORKS', n, e.errno, flush=True)\n")}}}});
  const std::string missing = submit("beta", "missing", 1, 1, {"true"}, {{"image", "localhost/no-such-image:1"}});
  const std::string other = "localhost/gpurent/dev@sha256:" + std::string(64, 'a');
  const std::string wrong_digest = submit("beta", "wrong-digest", 1, 1, {"true"}, {{"image", other}});
  const std::string bad = submit("beta", "exit3", 1, 1, {"sh", "-c", "echo first; echo 'the last words' >&2; exit 3"});
  json jo = wait_for(s, "/api/v1/jobs/" + oom, finished, 90);
  EXPECT_EQ(jo["status"]["state"], "failed");
  EXPECT_NE(jo["status"]["reason"].get<std::string>().find("out of memory"), std::string::npos) << jo.dump();
  EXPECT_NE(jo["status"]["reason"].get<std::string>().find("memory limit of 1 GiB"), std::string::npos) << jo.dump();
  json jm = wait_for(s, "/api/v1/jobs/" + missing, finished, 90);
  EXPECT_EQ(jm["status"]["state"], "failed");
  EXPECT_NE(jm["status"]["reason"].get<std::string>().find("image localhost/no-such-image:1 is not on node"),
            std::string::npos)
      << jm.dump();
  json jw = wait_for(s, "/api/v1/jobs/" + wrong_digest, finished, 90);
  EXPECT_EQ(jw["status"]["state"], "failed");
  EXPECT_NE(jw["status"]["reason"].get<std::string>().find("image " + other + " is not on node"), std::string::npos)
      << jw.dump();
  json je = wait_for(s, "/api/v1/jobs/" + bad, finished, 90);
  EXPECT_EQ(je["status"]["reason"].get<std::string>().rfind("exit code 3 (Slurm job ", 0), 0u) << je.dump();
  EXPECT_NE(je["status"]["reason"].get<std::string>().find("the last words"), std::string::npos) << je.dump();
  // The fork bomb was stopped by the pids limit (64 processes in the container), not by the node.
  json jb = wait_for(s, "/api/v1/jobs/" + bomb, finished, 90);
  const std::string bl = logs("beta", bomb);
  const size_t at = bl.find("FORKS ");
  ASSERT_NE(at, std::string::npos) << bl << jb.dump();
  const int forks = std::atoi(bl.c_str() + at + 6);
  EXPECT_GT(forks, 10) << bl;
  EXPECT_LT(forks, 64) << bl;
  EXPECT_NE(bl.find("FORKS " + std::to_string(forks) + " 11"), std::string::npos) << "EAGAIN: " << bl;
  EXPECT_EQ(s.log().find("s3cr3t"), std::string::npos) << "the server never logs a secret";

  // Artifacts (docs/resources/artifacts.md): uploaded through the API in chunks, checked on the
  // node and mounted read-only; the same file changed in the store afterwards stops the next job
  // before its container starts, with a security alert delivered to the operator's webhook.
  HookSink sink;
  expect_2xx(s.admin("POST", "/api/v1/webhooks", json{{"name", "sec"}, {"type", "generic"}, {"url", sink.url()}}), "hook");
  std::string weights((3 << 19) + 17, '\0');
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<char>((i * 2654435761u) >> 13);
  const std::string sha = sha256_hex(weights);
  expect_2xx(s.req("POST", "/api/v1/projects/acme-proj/artifacts", token["acme"],
                   json{{"name", "weights"}, {"sha256", sha}, {"size_bytes", weights.size()}, {"kind", "model"}}),
             "artifact");
  for (size_t at = 0; at < weights.size(); at += 1 << 20)
    expect_2xx(s.raw("PUT", "/api/v1/projects/acme-proj/artifacts/weights/content?offset=" + std::to_string(at),
                     token["acme"], weights.substr(at, 1 << 20), "application/octet-stream"),
               "chunk");
  const json uses = {{"artifacts", {{{"name", "weights"}, {"sha256", sha}, {"mount", "/models/w.bin"}}}}};
  const json show = {"sh", "-c", "echo STARTED; sha256sum /models/w.bin; (echo x >> /models/w.bin) 2>/dev/null && echo WRITABLE || echo READ-ONLY"};
  const std::string good = submit("acme", "uses-weights", 1, 1, show, uses);
  json jg = wait_for(s, "/api/v1/jobs/" + good, finished, 90);
  EXPECT_EQ(jg["status"]["state"], "succeeded") << jg.dump() << logs("acme", good);
  EXPECT_NE(logs("acme", good).find(sha + "  /models/w.bin"), std::string::npos) << logs("acme", good);
  EXPECT_NE(logs("acme", good).find("READ-ONLY"), std::string::npos) << logs("acme", good);
  const std::string stored = s.db_path() + ".artifacts/sha256/" + sha;
  ASSERT_TRUE(fs::exists(stored));
  fs::permissions(stored, fs::perms::owner_write, fs::perm_options::add);
  std::ofstream(stored, std::ios::binary | std::ios::in | std::ios::out).put('!');  // one byte changed in place
  const std::string tampered = sha256_hex([&] { std::string t = weights; t[0] = '!'; return t; }());
  const std::string bad_job = submit("acme", "tampered", 1, 1, show, uses);
  json jt = wait_for(s, "/api/v1/jobs/" + bad_job, finished, 90);
  EXPECT_EQ(jt["status"]["state"], "failed") << jt.dump();
  const std::string why = jt["status"]["reason"];
  EXPECT_NE(why.find("artifact weights failed its check"), std::string::npos) << why;
  EXPECT_NE(why.find(tampered), std::string::npos) << why;
  EXPECT_NE(why.find(sha), std::string::npos) << why;
  EXPECT_EQ(logs("acme", bad_job).find("STARTED"), std::string::npos) << "the container never started";
  json alerts = wait_for(s, "/api/v1/alerts?state=active", [](const json& j) {
    for (const auto& a : j["items"]) if (a["kind"] == "artifact_digest_mismatch") return true;
    return false;
  });
  json alert;
  for (const auto& a : alerts["items"]) if (a["kind"] == "artifact_digest_mismatch") alert = a;
  ASSERT_FALSE(alert.is_null()) << alerts.dump();
  EXPECT_EQ(alert["severity"], "critical");
  EXPECT_EQ(alert["subject"], "acme-proj/weights");
  EXPECT_EQ(alert["measured"], tampered);
  EXPECT_EQ(alert["threshold"], sha);
  EXPECT_EQ(alert["unit"], "sha256");
  EXPECT_EQ(s.req("GET", "/api/v1/alerts?state=active", token["beta"]).text.find("artifact_digest_mismatch"),
            std::string::npos) << "acme's alert is not beta's";
  bool delivered = false;
  for (int i = 0; i < 100 && !delivered; ++i) {
    for (const auto& b : sink.bodies()) delivered = delivered || b.find("artifact_digest_mismatch") != std::string::npos;
    if (!delivered) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(delivered) << "the webhook got the alert";

  // Images (docs/resources/images.md): acme's own image, uploaded as the archive `podman save`
  // writes. The node lacks it under its gpurent reference, so the job's script loads it from the
  // store after checking its digest; the same file changed in the store fails the next job that
  // must load it, saying so.
  // An image of its own (kImage plus a label: another image id). Saving kImage itself would load
  // acme's tag onto the shared image's id, which the node then refuses to other tenants' jobs
  // running beside this test (the node checks an image's every tag).
  const std::string saved = c.dir + "/py.tar";
  const std::string own = "localhost/gpurent-test/acme-py:" + std::to_string(getpid());
  {
    std::ofstream cf(c.dir + "/Containerfile");
    cf << "FROM " << kImage << "\nLABEL io.gpurent.test=acme-py-" << getpid() << "\n";
  }
  ASSERT_EQ(std::system(("podman build -q --pull=never -t " + own + " -f " + c.dir + "/Containerfile " + c.dir +
                         " >/dev/null && podman save -q --format docker-archive -o " + saved + " " + own +
                         " && podman rmi -f " + own + " >/dev/null")
                            .c_str()),
            0);
  std::string archive;
  {
    std::ifstream in(saved, std::ios::binary);
    archive.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_GT(archive.size(), 1u << 20);
  const std::string image_sha = sha256_hex(archive);
  expect_2xx(s.req("POST", "/api/v1/images", token["acme"],
                   json{{"name", "py"}, {"archive", {{"format", "docker-archive"}, {"sha256", image_sha}, {"size_bytes", archive.size()}}}}),
             "image");
  Resp up;
  for (size_t at = 0; at < archive.size(); at += 1 << 20) {
    up = s.raw("PUT", "/api/v1/images/py/archive?offset=" + std::to_string(at), token["acme"], archive.substr(at, 1 << 20),
               "application/octet-stream");
    ASSERT_EQ(up.status, 200) << up.describe();
  }
  ASSERT_EQ(up.body["state"], "ready") << up.describe();
  const std::string reference = up.body["reference"];
  archive.clear();
  run_cmd("podman rmi -f " + reference + " >/dev/null 2>&1");
  const std::string in_py = submit("acme", "in-py", 1, 1, {"python3", "-c", "print('IMAGE OK')"}, {{"image", "py"}});
  json jp = wait_for(s, "/api/v1/jobs/" + in_py, finished, 120);
  EXPECT_EQ(jp["status"]["state"], "succeeded") << jp.dump() << logs("acme", in_py);
  EXPECT_NE(logs("acme", in_py).find("IMAGE OK"), std::string::npos) << logs("acme", in_py);
  EXPECT_EQ(run_cmd("podman image exists " + reference + " && echo yes"), "yes\n") << "loaded on the node under its reference";
  EXPECT_EQ(s.req("POST", "/api/v1/jobs", token["beta"], [&] {
              json j = job_doc("beta-proj", "not-theirs");
              j["image"] = "py";
              return j;
            }()).error_fields(),
            std::vector<std::string>{"image"}) << "acme's image is not beta's";
  // Another spelling of acme's reference passes the API's check but not the node's.
  const std::string other_spelling = reference.substr(std::string("localhost/").size());
  const std::string sneak = submit("beta", "sneak", 1, 1, {"python3", "-c", "print('IMAGE OK')"}, {{"image", other_spelling}});
  json js = wait_for(s, "/api/v1/jobs/" + sneak, finished, 120);
  EXPECT_EQ(js["status"]["state"], "failed") << js.dump();
  EXPECT_NE(js["status"]["reason"].get<std::string>().find("is another tenant's"), std::string::npos) << js.dump();
  EXPECT_EQ(logs("beta", sneak).find("IMAGE OK"), std::string::npos);
  run_cmd("podman rmi -f " + reference + " >/dev/null 2>&1");
  const std::string image_file = s.db_path() + ".artifacts/sha256/" + image_sha;
  fs::permissions(image_file, fs::perms::owner_write, fs::perm_options::add);
  {
    std::fstream f(image_file, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(4096);
    f.put('!');
  }
  const std::string in_bad = submit("acme", "in-bad-py", 1, 1, {"python3", "-c", "print('IMAGE OK')"}, {{"image", "py"}});
  json jbad = wait_for(s, "/api/v1/jobs/" + in_bad, finished, 120);
  EXPECT_EQ(jbad["status"]["state"], "failed") << jbad.dump();
  EXPECT_NE(jbad["status"]["reason"].get<std::string>().find("its file in the image store has the SHA-256"), std::string::npos)
      << jbad.dump();
  EXPECT_EQ(run_cmd("podman image exists " + reference + " || echo absent"), "absent\n") << "nothing was loaded";
  json image_alerts = wait_for(s, "/api/v1/alerts?state=active", [&](const json& j) {
    for (const auto& a : j["items"]) if (a["subject"] == "image " + reference) return true;
    return false;
  });
  for (const auto& a : image_alerts["items"])
    if (a["subject"] == "image " + reference) {
      EXPECT_EQ(a["kind"], "artifact_digest_mismatch");
      EXPECT_EQ(a["threshold"], image_sha);
      EXPECT_EQ(a["severity"], "critical");
    }
}

}  // namespace
}  // namespace gpurent::testing
