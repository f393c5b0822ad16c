// The container worker script's pure parts (exec/container.h): what it passes to Podman for a
// job, how it quotes hostile values, how it reads back the status file, and the log excerpt that
// ends up in a job's reason (printable one-line UTF-8 whatever the job printed). The script
// itself runs for real in tests/container_slurm_test.cc.
#include "exec/container.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "exec/process.h"

namespace gpurent {
namespace {

std::string temp_file(const std::string& text) {
  char tmpl[] = "/tmp/gpurent-container-test-XXXXXX";
  const int fd = mkstemp(tmpl);
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(tmpl, std::ios::binary) << text;
  return tmpl;
}

// A folder with a fake `podman` (the bash `script`, "$D" its folder) for the script to call.
std::string fake_podman_dir(const std::string& script) {
  char dir[] = "/tmp/gpurent-fake-podman-XXXXXX";
  if (!mkdtemp(dir)) return "";
  std::string body = script;
  for (size_t at; (at = body.find("$D")) != std::string::npos;) body.replace(at, 2, dir);
  std::ofstream(std::string(dir) + "/podman") << "#!/bin/bash\n" << body;
  std::filesystem::permissions(std::string(dir) + "/podman", std::filesystem::perms::owner_all);
  return dir;
}

// A fake podman's script answering by verb: `arms` are case arms on " $* " (the arguments between
// spaces), tried before `inspect` (answers false: not killed for memory) and success for the rest;
// `first` runs before them (recording the calls).
std::string podman_by_verb(const std::string& arms, const std::string& first = "") {
  return first + "case \" $* \" in\n" + arms + "  *' inspect '*) echo false ;;\nesac\nexit 0\n";
}

ContainerRun sample() {
  ContainerRun r;
  r.job_id = "job_0123456789abcdef";
  r.tenant_id = "ten_0123456789abcdef";
  r.image = "localhost/gpurent/python:bookworm";
  r.command = {"python3", "-c", "print('it''s')"};
  r.env = {{"GREETING", "a b'c\"$(touch /tmp/pwned)"}};
  r.cpus = 4;
  r.memory_gib = 16;
  r.volumes = {{"data", "/data", false}, {"ref", "/ref", true}};
  r.status_file = "/out/job_0123456789abcdef-%j.status";
  return r;
}

// Settings that call the fake Podman in `d`, and the sample run without volumes.
std::pair<ContainerSettings, ContainerRun> faked(const std::string& d) {
  ContainerSettings s;
  s.podman = d + "/podman";
  ContainerRun r = sample();
  r.volumes.clear();
  return {s, r};
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(Container, ScriptPassesTheJobsLimitsDevicesAndVolumes) {
  ContainerSettings s;
  s.volume_root = "/shared/volumes";
  const std::string sh = container_script(s, sample());
  for (const char* want : {"--cpus 4", "--memory 16g --memory-swap 16g", "--shm-size 8g", "--pids-limit 4096",
                           "--cap-drop all", "--security-opt no-new-privileges", "--user '1000:1000'", "--pull never",
                           "--network \"$net\"", "'/shared/volumes/ten_0123456789abcdef/data:/data'",
                           "'/shared/volumes/ten_0123456789abcdef/ref:/ref:ro'", "gpurent-ten_0123456789abcdef",
                           "printf '/dev/nvidia%d' \"$g\"", "SLURM_STEP_GPUS", "'/out/job_0123456789abcdef-'\"${GPURENT_RUN_ID:-${SLURM_JOB_ID:-0}}\"'.status'",
                           "status oom", "gpurent_worker\n"})
    EXPECT_NE(sh.find(want), std::string::npos) << want << "\n" << sh;
  EXPECT_EQ(sh.find("--privileged"), std::string::npos);
  EXPECT_EQ(sh.find("--network host"), std::string::npos);
  EXPECT_NE(sh.find("--ulimit nproc=\"$nproc:$nproc\""), std::string::npos)
      << "counted per uid over the host: any bound below pid_max lets one tenant's processes use up every tenant's";
  EXPECT_NE(sh.find("nproc=$(cat /proc/sys/kernel/pid_max"), std::string::npos);
  EXPECT_EQ(sh.find("srun"), std::string::npos) << "one node: no srun";
  ContainerRun gang = sample();
  gang.nodes = 2;
  s.gpu_device = "cdi";
  const std::string g = container_script(s, gang);
  EXPECT_NE(g.find("srun --ntasks-per-node=1"), std::string::npos);
  EXPECT_NE(g.find("nvidia.com/gpu=$g"), std::string::npos);
}

// A gang's worker goes to the nodes through srun as bash code in arguments, in pieces: with a
// job's env near its limit, quoted (a quote is four bytes quoted), one piece would pass the
// kernel's 128 KiB for an argument and srun could not start it ("Argument list too long"). A fake
// srun that runs its command here checks that the pieces make the worker whole again.
TEST(Container, AGangsWorkerWithALargeEnvStillStarts) {
  const std::string d = fake_podman_dir(podman_by_verb("  *' run '*) printf '%s\\n' \"$@\" > $D/argv ;;\n"));
  ASSERT_FALSE(d.empty());
  std::ofstream(d + "/srun") << "#!/bin/bash\nwhile [[ \"$1\" == --* ]]; do shift; done\nexec \"$@\"\n";
  std::filesystem::permissions(d + "/srun", std::filesystem::perms::owner_all);
  auto [s, r] = faked(d);
  r.status_file.clear();
  r.nodes = 2;
  const std::string quotes(40'000, '\'');
  r.env = {{"QUOTES", quotes}, {"SPACED", "a  b\tc"}};
  r.tmpfs = {"/.gpurent"};
  std::ofstream(d + "/batch.sh") << container_script(s, r);  // a batch script is a file (sbatch's)
  auto out =
      run_process({"bash", d + "/batch.sh"},
                  {{"SLURMD_NODENAME", "gpn1"}, {"PATH", d + ":" + std::string(std::getenv("PATH"))}}, "", 20'000);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->exit_code, 0) << out->err.substr(0, 2000);
  const std::string argv = read_all(d + "/argv");
  EXPECT_NE(argv.find("\nQUOTES=" + quotes + "\n"), std::string::npos) << "the value whole";
  EXPECT_NE(argv.find("\nSPACED=a  b\tc\n"), std::string::npos) << "blanks kept as they are";
  EXPECT_NE(argv.find("\n--tmpfs\n/.gpurent:rw,nosuid,nodev,noexec,size=64m,mode=1777\n"), std::string::npos)
      << argv.substr(0, 2000);
  std::filesystem::remove_all(d);
}

// The script is valid bash, and a hostile environment value reaches the container as it is,
// never run by the shell: checked by running the script with a fake podman that prints its argv.
TEST(Container, HostileValuesStayData) {
  char dir[] = "/tmp/gpurent-fake-podman-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string fake = std::string(dir) + "/podman";
  std::ofstream(fake) << "#!/bin/bash\n"
                         "for a in \"$@\"; do [ \"$a\" = run ] && run=1; done\n"
                         "[ -n \"$run\" ] && printf '%s\\n' \"$@\" > " << dir << "/argv\n"
                         "[ \"$5\" = secret ] && echo \"$@\" >> " << dir << "/secrets\n"
                         "[ -n \"$run\" ] && env > " << dir << "/env\n"
                         "for a in \"$@\"; do [ \"$a\" = inspect ] && echo false; done\n"
                         "exit 0\n";
  std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
  ContainerSettings s;
  s.podman = fake;
  s.user = std::to_string(getuid()) + ":" + std::to_string(getgid());  // chown works without root too
  s.volume_root = std::string(dir) + "/vol";
  ContainerRun r = sample();
  r.status_file.clear();
  r.gpu_numa = {{"gpn1", {0, 0, 0, 0, 0, 0, 1, 1}}, {"gpn2", {1, 1}}};  // GPUs 3 and 5 of gpn1: NUMA node 0
  const std::string secret = std::string(dir) + "/secret";
  std::ofstream(secret) << "tok $(x) 's3cr3t\nline two\n";
  r.secrets = {{secret, "HF_TOKEN", ""}, {secret, "", "/run/secrets/$(touch /tmp/pwned) \"x\""}};
  const std::string script = container_script(s, r);
  EXPECT_EQ(script.find("s3cr3t"), std::string::npos) << "the script names the file, never the value";
  auto out = run_process({"bash", "-c", script},
                         {{"SLURM_JOB_GPUS", "3,5"}, {"SLURMD_NODENAME", "gpn1"}}, "", 20'000);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->exit_code, 0) << out->err;
  EXPECT_FALSE(std::filesystem::exists("/tmp/pwned"));
  std::ifstream in(std::string(dir) + "/argv");
  std::vector<std::string> argv;
  for (std::string a; std::getline(in, a);) argv.push_back(a);
  auto has = [&](const std::string& a) { return std::find(argv.begin(), argv.end(), a) != argv.end(); };
  EXPECT_TRUE(has("GREETING=a b'c\"$(touch /tmp/pwned)"));
  EXPECT_TRUE(has("CUDA_VISIBLE_DEVICES=0,1"));
  EXPECT_TRUE(has("NVIDIA_VISIBLE_DEVICES=3,5"));
  EXPECT_TRUE(has("/dev/nvidia3:/dev/nvidia3"));
  EXPECT_TRUE(has("/dev/nvidia5:/dev/nvidia5"));
  EXPECT_FALSE(has("/dev/nvidia0:/dev/nvidia0"));
  EXPECT_TRUE(has("print('it''s')"));
  EXPECT_TRUE(has("gpurent-job_0123456789abcdef-gpn1"));
  EXPECT_TRUE(has("gpurent-job_0123456789abcdef-gpn1-0,type=env,target=HF_TOKEN"));
  EXPECT_TRUE(has("gpurent-job_0123456789abcdef-gpn1-1,type=mount,target=/run/secrets/$(touch /tmp/pwned) \"x\",uid=" +
                  s.user.substr(0, s.user.find(':')) + ",gid=" + s.user.substr(s.user.find(':') + 1) + ",mode=0400"));
  if (std::filesystem::exists("/sys/devices/system/node/node0/cpulist")) {
    EXPECT_TRUE(has("--cpuset-mems")) << "bound to the GPUs' NUMA node";
    EXPECT_TRUE(has("0"));
  }
  for (const auto& a : argv) EXPECT_EQ(a.find("s3cr3t"), std::string::npos) << "no value on podman's command line";
  std::ifstream env(std::string(dir) + "/env");
  std::string penv((std::istreambuf_iterator<char>(env)), std::istreambuf_iterator<char>());
  EXPECT_EQ(penv.find("s3cr3t"), std::string::npos) << "nor in podman's environment";
  EXPECT_EQ(penv.find("HF_TOKEN"), std::string::npos);
  std::ifstream created(std::string(dir) + "/secrets");
  std::string secrets((std::istreambuf_iterator<char>(created)), std::istreambuf_iterator<char>());
  EXPECT_NE(secrets.find("secret create gpurent-job_0123456789abcdef-gpn1-0 " + secret), std::string::npos) << secrets;
  EXPECT_NE(secrets.find("secret rm gpurent-job_0123456789abcdef-gpn1-1"), std::string::npos) << "removed after";
  EXPECT_TRUE(std::filesystem::is_directory(std::string(dir) + "/vol/ten_0123456789abcdef/data"));
  std::filesystem::remove_all(dir);
}

// Artifacts are checked on the node before the container starts: the right content is mounted
// read-only; a changed file or a missing one stops the run before `podman run`, saying why in the
// status file (with both digests for a mismatch).
TEST(Container, ChecksArtifactsBeforeTheContainerStarts) {
  const std::string d = fake_podman_dir("for a in \"$@\"; do [ \"$a\" = run ] && printf '%s\\n' \"$@\" > $D/argv; done\n"
                                         "for a in \"$@\"; do [ \"$a\" = inspect ] && echo false; done\n"
                                         "exit 0\n");
  ASSERT_FALSE(d.empty());
  std::ofstream(d + "/weights", std::ios::binary) << "abc";  // SHA-256 of "abc":
  const std::string abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  ContainerSettings s;
  s.podman = d + "/podman";
  ContainerRun r = sample();
  r.volumes.clear();
  r.status_file = d + "/status";
  r.artifacts = {{"llama", d + "/weights", abc, "/models/llama.bin"}};
  ASSERT_TRUE(check_container_run(s, r).ok());
  auto run = [&] { return run_process({"bash", "-c", container_script(s, r)}, {{"SLURMD_NODENAME", "gpn1"}}, "", 20'000); };
  auto good = run();
  ASSERT_TRUE(good.ok()) << good.error().message;
  EXPECT_EQ(good->exit_code, 0) << good->err;
  std::ifstream argv(d + "/argv");
  std::string args((std::istreambuf_iterator<char>(argv)), std::istreambuf_iterator<char>());
  EXPECT_NE(args.find(d + "/weights:/models/llama.bin:ro\n"), std::string::npos) << args;
  EXPECT_FALSE(std::filesystem::exists(d + "/status"));

  std::filesystem::remove(d + "/argv");
  std::ofstream(d + "/weights", std::ios::binary) << "abd";  // tampered after upload
  auto bad = run();
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->exit_code, 125);
  EXPECT_FALSE(std::filesystem::exists(d + "/argv")) << "the container never started";
  auto st = read_container_status(d + "/status");
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->reason, "artifact_mismatch");
  EXPECT_EQ(st->detail, "llama");
  EXPECT_EQ(st->expected, abc);
  EXPECT_EQ(st->actual, "a52d159f262b2c6ddb724a61840befc36eb30c88877a4030b65cbe86298449c9");  // sha256("abd")
  EXPECT_EQ(st->node, "gpn1");
  EXPECT_NE(bad->err.find("has SHA-256 a52d159f"), std::string::npos) << bad->err;

  std::filesystem::remove(d + "/weights");
  auto missing = run();
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->exit_code, 125);
  st = read_container_status(d + "/status");
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->reason, "artifact_missing");
  EXPECT_FALSE(std::filesystem::exists(d + "/argv"));

  r.artifacts[0].host_file = d + "/a:b";  // would split the mount option
  EXPECT_FALSE(check_container_run(s, r).ok());
  r.artifacts[0].host_file = d + "/weights";
  r.artifacts[0].sha256 = "not-a-digest";
  EXPECT_FALSE(check_container_run(s, r).ok());
  std::filesystem::remove_all(d);
}

// A gpurent image the node lacks is loaded from the image store after its digest is checked
// (docker/oci archives: skopeo copies it in under exactly the job's reference, never `podman load`,
// which would also apply the archive's own tags; root file systems: podman import); a changed file
// stops the run before anything is loaded.
TEST(Container, LoadsAMissingImageFromTheStoreAfterCheckingIt) {
  const std::string d =
      fake_podman_dir(podman_by_verb("  *' image exists '*) exit 1 ;;\n"
                                     "  *' load '*) echo 'Loaded image: localhost/original:1' ;;\n",  // never called
                                     "echo \"$*\" >> $D/calls\n"));
  ASSERT_FALSE(d.empty());
  std::ofstream(d + "/image.tar", std::ios::binary) << "abc";
  std::ofstream(d + "/skopeo") << "#!/bin/bash\necho \"skopeo $*\" >> " << d << "/calls\n";
  std::filesystem::permissions(d + "/skopeo", std::filesystem::perms::owner_all);
  ContainerSettings s;
  s.podman = d + "/podman";
  s.skopeo = d + "/skopeo";
  ContainerRun r = sample();
  r.volumes.clear();
  r.status_file = d + "/status";
  r.image = "localhost/gpurent/ten_0123456789abcdef/py:ba7816bf8f01";
  r.image_file = d + "/image.tar";
  r.image_sha256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  r.image_format = "docker-archive";
  ASSERT_TRUE(check_container_run(s, r).ok());
  auto calls = [&] {
    std::ifstream in(d + "/calls");
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::filesystem::remove(d + "/calls");
    return all;
  };
  auto run = [&] { return run_process({"bash", "-c", container_script(s, r)}, {{"SLURMD_NODENAME", "gpn1"}}, "", 20'000); };
  auto loaded = run();
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->exit_code, 0) << loaded->err;
  std::string c = calls();
  EXPECT_NE(c.find("skopeo copy --quiet docker-archive:" + d + "/image.tar containers-storage:" + r.image), std::string::npos) << c;
  EXPECT_EQ(c.find(" load "), std::string::npos) << "the archive's own tags are never applied: " << c;
  EXPECT_NE(c.find(" run "), std::string::npos) << c;

  r.image_format = "rootfs-tar";
  auto imported = run();
  ASSERT_TRUE(imported.ok());
  EXPECT_EQ(imported->exit_code, 0) << imported->err;
  c = calls();
  EXPECT_NE(c.find("import -q " + d + "/image.tar " + r.image), std::string::npos) << c;

  std::ofstream(d + "/image.tar", std::ios::binary) << "abd";  // changed in the store
  auto bad = run();
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->exit_code, 125);
  c = calls();
  EXPECT_EQ(c.find("import"), std::string::npos) << c;
  EXPECT_EQ(c.find(" run "), std::string::npos) << c;
  auto st = read_container_status(d + "/status");
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->reason, "image_corrupt");
  EXPECT_EQ(st->expected, r.image_sha256);
  EXPECT_EQ(st->actual, "a52d159f262b2c6ddb724a61840befc36eb30c88877a4030b65cbe86298449c9");
  std::filesystem::remove_all(d);
}

// A tenant's image, however the job names it (another spelling, its id), runs only for that
// tenant: the node reads the image's tags before it starts anything. One tag that is public, the
// job's tenant's or the node's own (outside localhost/gpurent/<scope>/) makes it usable, so a
// tenant who loads the same bytes as a node's base image locks nobody out of it.
TEST(Container, RefusesAnotherTenantsImageWhateverItsName) {
  const std::string d =
      fake_podman_dir(podman_by_verb("  *' image inspect '*) cat $D/tags ;;\n", "echo \"$*\" >> $D/calls\n"));
  ASSERT_FALSE(d.empty());
  ContainerSettings s;
  s.podman = d + "/podman";
  ContainerRun r = sample();
  r.volumes.clear();
  r.status_file = d + "/status";
  auto run = [&](const std::string& image, const std::string& tags) {
    r.image = image;
    std::ofstream(d + "/tags") << tags;
    std::filesystem::remove(d + "/calls");
    std::filesystem::remove(d + "/status");
    return run_process({"bash", "-c", container_script(s, r)}, {{"SLURMD_NODENAME", "gpn1"}}, "", 20'000);
  };
  const std::string acme = "localhost/gpurent/ten_aaaaaaaaaaaaaaaa/py:abc ";
  // acme's image by its id, by a spelling the submission check does not read, by its reference
  // while a public tag is on the same id: refused, nothing run.
  for (const auto& [image, tags] : std::vector<std::pair<std::string, std::string>>{
           {"sha256:0123", acme},
           {"sha256:0123", acme + "localhost/gpurent/ten_bbbbbbbbbbbbbbbb/same:abc "},
           {"gpurent/ten_aaaaaaaaaaaaaaaa/py:abc", acme},
           {"localhost/gpurent/ten_aaaaaaaaaaaaaaaa/py:abc", acme + "localhost/gpurent/public/python:abc "}}) {
    auto theirs = run(image, tags);
    ASSERT_TRUE(theirs.ok());
    EXPECT_EQ(theirs->exit_code, 125) << image << " / " << tags;
    auto st = read_container_status(d + "/status");
    ASSERT_TRUE(st.has_value()) << image << " / " << tags;
    EXPECT_EQ(st->reason, "image_not_yours");
    std::ifstream calls(d + "/calls");
    std::string c((std::istreambuf_iterator<char>(calls)), std::istreambuf_iterator<char>());
    EXPECT_EQ(c.find(" run "), std::string::npos) << c;
  }
  for (const auto& [image, tags] : std::vector<std::pair<std::string, std::string>>{
           {"sha256:0123", acme + "localhost/gpurent/ten_0123456789abcdef/mine:abc "},
           {"sha256:0123", "localhost/gpurent/public/python:abc " + acme},
           // the node's base image, whose bytes acme also uploaded: still everyone's
           {"localhost/gpurent/dev:bookworm", acme + "localhost/gpurent/dev:bookworm "},
           {"sha256:0123", acme + "localhost/original:1 "},
           {"localhost/gpurent/ten_0123456789abcdef/mine:abc", acme + "localhost/gpurent/ten_0123456789abcdef/mine:abc "},
           {"sha256:0123", "localhost/gpurent/python:bookworm "},
           {"sha256:0123", ""}}) {
    auto mine = run(image, tags);
    ASSERT_TRUE(mine.ok());
    EXPECT_EQ(mine->exit_code, 0) << image << " / " << tags << mine->err;
  }
  std::filesystem::remove_all(d);
}

// GPUs on one NUMA node bind the container to that node's CPUs and memory; GPUs on two, or a
// node whose topology is unknown, do not.
TEST(Container, BindsToTheGpusNumaNodeOnlyWhenTheyShareOne) {
  if (!std::filesystem::exists("/sys/devices/system/node/node0/cpulist")) GTEST_SKIP() << "no NUMA information here";
  char dir[] = "/tmp/gpurent-fake-podman-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string fake = std::string(dir) + "/podman";
  std::ofstream(fake) << "#!/bin/bash\nfor a in \"$@\"; do [ \"$a\" = run ] && printf '%s\\n' \"$@\" > " << dir
                      << "/argv; done\nexit 0\n";
  std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
  ContainerSettings s;
  s.podman = fake;
  ContainerRun r = sample();
  r.volumes.clear();
  r.status_file.clear();
  r.gpu_numa = {{"gpn1", {0, 0, 0, 0, 1, 1, 1, 1}}};
  auto bound = [&](const std::string& gpus, const std::string& node) {
    std::filesystem::remove(std::string(dir) + "/argv");
    auto out = run_process({"bash", "-c", container_script(s, r)}, {{"SLURM_JOB_GPUS", gpus}, {"SLURMD_NODENAME", node}},
                           "", 20'000);
    EXPECT_TRUE(out.ok() && out->exit_code == 0);
    std::ifstream in(std::string(dir) + "/argv");
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return all.find("--cpuset-mems\n0\n") != std::string::npos;
  };
  EXPECT_TRUE(bound("0,3", "gpn1"));
  EXPECT_FALSE(bound("3,4", "gpn1")) << "two NUMA nodes";
  EXPECT_FALSE(bound("0", "gpn9")) << "a node whose topology gpurent does not know";
  std::filesystem::remove_all(dir);
}

// Readiness: while the container runs, a health check through `podman exec` (or the workload's
// heartbeat file in the folder mounted at /run/gpurent) is tried every interval; the first success
// writes the node's clock to <ready file>.<node>, read back by read_ready_file().
TEST(Container, ReportsReadinessFromAHealthCheckOrAHeartbeat) {
  // `run` lasts 3 s, creating the heartbeat file after 1 s when a folder is mounted at /run/gpurent;
  // `exec` (the health check) succeeds once $D/up exists.
  const std::string d =
      fake_podman_dir(podman_by_verb("  *' run '*) prev=''; for a in \"$@\"; do\n"
                                     "      case \"$a\" in *:/run/gpurent) [ \"$prev\" = -v ] && (sleep 1; touch "
                                     "\"${a%%:*}/ready\") & ;; esac; prev=$a\n"
                                     "    done; sleep 3 ;;\n"
                                     "  *' exec '*) echo \"$*\" >> $D/execs; [ -e $D/up ]; exit $? ;;\n"));
  ASSERT_FALSE(d.empty());
  auto [s, r] = faked(d);
  s.user = std::to_string(getuid()) + ":" + std::to_string(getgid());
  r.status_file = d + "/status-%j";
  r.ready_file = d + "/ready-%j";
  r.ready_command = {"curl", "-sf", "http://127.0.0.1:8000/health"};
  r.ready_interval_s = 1;
  auto run = [&] {
    return run_process({"bash", "-c", container_script(s, r)}, {{"SLURMD_NODENAME", "gpn1"}, {"SLURM_JOB_ID", "42"}}, "",
                       30'000);
  };
  EXPECT_EQ(ready_file_for(r.ready_file, "42", "gpn1"), d + "/ready-42.gpn1");

  // The check fails throughout: nothing reported, but it was tried, as the job's argv.
  auto never = run();
  ASSERT_TRUE(never.ok()) << never.error().message;
  EXPECT_EQ(never->exit_code, 0) << never->err;
  EXPECT_FALSE(std::filesystem::exists(d + "/ready-42.gpn1"));
  const std::string calls = read_all(d + "/execs");
  EXPECT_NE(calls.find("exec gpurent-job_0123456789abcdef-gpn1 curl -sf http://127.0.0.1:8000/health"), std::string::npos)
      << calls;

  // The check passes: the node's time, between the run's start and end.
  std::ofstream(d + "/up") << "";
  const int64_t before = static_cast<int64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                   std::chrono::system_clock::now().time_since_epoch())
                                                   .count());
  auto ready = run();
  ASSERT_TRUE(ready.ok());
  EXPECT_EQ(ready->exit_code, 0) << ready->err;
  auto at = read_ready_file(d + "/ready-42.gpn1");
  ASSERT_TRUE(at.has_value());
  EXPECT_GE(*at, before - 1000);
  EXPECT_LE(*at, before + 10'000);
  EXPECT_FALSE(std::filesystem::exists(d + "/ready-42.gpn1.tmp"));

  // A heartbeat: no exec at all; the workload's file in the mounted folder is seen.
  std::filesystem::remove(d + "/ready-42.gpn1");
  std::filesystem::remove(d + "/execs");
  r.ready_command.clear();
  r.ready_heartbeat = true;
  const std::string sh = container_script(s, r);
  EXPECT_NE(sh.find("GPURENT_READY_FILE=/run/gpurent/ready"), std::string::npos);
  auto beat = run();
  ASSERT_TRUE(beat.ok());
  EXPECT_EQ(beat->exit_code, 0) << beat->err;
  EXPECT_TRUE(read_ready_file(d + "/ready-42.gpn1").has_value());
  EXPECT_FALSE(std::filesystem::exists(d + "/execs"));

  // Without readiness the script checks nothing.
  r.ready_heartbeat = false;
  EXPECT_EQ(container_script(s, r).find("ready_file"), std::string::npos);

  // Only one plausible epoch-ms time is read back.
  for (const char* text : {"", "abc", "12", "1700000000000x", "99999999999999999999"}) {
    std::ofstream(d + "/r") << text;
    EXPECT_FALSE(read_ready_file(d + "/r").has_value()) << text;
  }
  std::ofstream(d + "/r") << "1700000000123\n";
  EXPECT_EQ(read_ready_file(d + "/r"), 1700000000123);
  EXPECT_FALSE(read_ready_file(d + "/missing").has_value());
  std::filesystem::remove_all(d);
}

// An egress freeze: while the project's freeze file exists the container leaves its network, and
// rejoins it once the file is gone, each change said on the job's log (the script's stderr).
// A listening socket on 127.0.0.1 (an earlier run's port forwarder); its port, -1 when none.
std::pair<int, int64_t> listener() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);  // not held open by the script
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(fd, 128) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    return {-1, 0};
  return {fd, ntohs(a.sin_port)};
}

int64_t epoch_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// An instance's restart: its published port is still held a moment by the earlier run's port
// forwarder. The script waits until nothing listens there before it starts the container, and
// past port_wait_s starts it anyway (Podman then says why it cannot listen).
TEST(Container, WaitsForAPublishedPortAnEarlierRunStillHolds) {
  const std::string d = fake_podman_dir("for a in \"$@\"; do [ \"$a\" = run ] && date +%s%3N > $D/run_at; done\n"
                                        "for a in \"$@\"; do [ \"$a\" = inspect ] && echo false; done\nexit 0\n");
  ASSERT_FALSE(d.empty());
  auto [s, r] = faked(d);
  auto [fd, port] = listener();
  ASSERT_GE(fd, 0);
  r.ports = {{"127.0.0.1", port, 2222}};
  int64_t closed_at = 0;
  std::thread let_go([&, fd = fd] {
    std::this_thread::sleep_for(std::chrono::milliseconds(4000));  // the script has started by then, even when loaded
    closed_at = epoch_ms();
    close(fd);
  });
  auto run = run_process({"bash", "-c", container_script(s, r)}, {{"SLURMD_NODENAME", "gpn1"}}, "", 30'000);
  let_go.join();
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_EQ(run->exit_code, 0) << run->err;
  EXPECT_GE(std::stoll(read_all(d + "/run_at")), closed_at) << "started only once the port was let go";
  EXPECT_NE(run->err.find("waiting for port " + std::to_string(port) + " to be let go"), std::string::npos) << run->err;

  // Held for good: started anyway after port_wait_s, saying so.
  auto [fd2, port2] = listener();
  ASSERT_GE(fd2, 0);
  r.ports = {{"127.0.0.1", port2, 2222}};
  r.port_wait_s = 1;
  std::filesystem::remove(d + "/run_at");
  run = run_process({"bash", "-c", container_script(s, r)}, {{"SLURMD_NODENAME", "gpn1"}}, "", 30'000);
  close(fd2);
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_TRUE(std::filesystem::exists(d + "/run_at")) << run->err;
  EXPECT_NE(run->err.find("port " + std::to_string(port2) + " is still in use after 1 s"), std::string::npos) << run->err;
  std::filesystem::remove_all(d);
}

// A cancel (SIGTERM) that comes while `podman run` is still creating the container: the first stop
// finds nothing to stop; the script stops it again once it exists, rather than waiting forever on a
// container that would run on outside the job.
TEST(Container, AStopThatCameBeforeTheContainerExistedIsSentAgain) {
  const std::string d =
      fake_podman_dir(podman_by_verb("  *' run '*) kill -TERM $PPID; sleep 0.5; touch $D/created\n"
                                     "             while [ ! -e $D/stopped ]; do sleep 0.1; done; exit 143 ;;\n"
                                     "  *' stop '*) [ -e $D/created ] || exit 125; touch $D/stopped ;;\n"));
  ASSERT_FALSE(d.empty());
  auto [s, r] = faked(d);
  auto run = run_process({"bash", "-c", container_script(s, r)}, {{"SLURMD_NODENAME", "gpn1"}}, "", 20'000);
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_TRUE(std::filesystem::exists(d + "/stopped")) << run->err;
  EXPECT_EQ(run->exit_code, 143) << run->err;
  std::filesystem::remove_all(d);
}

TEST(Container, CutsTheNetworkWhileTheProjectsEgressIsFrozen) {
  const std::string d =
      fake_podman_dir(podman_by_verb("  *' run '*) (sleep 3; rm -f $D/frozen) & sleep 7 ;;\n"
                                     "  *' network disconnect '*|*' network connect '*) echo \"$*\" >> $D/calls ;;\n"));
  ASSERT_FALSE(d.empty());
  auto [s, r] = faked(d);
  r.freeze_file = d + "/frozen";
  std::ofstream(d + "/frozen") << "";
  auto run = run_process({"bash", "-c", container_script(s, r)}, {{"SLURMD_NODENAME", "gpn1"}}, "", 30'000);
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_EQ(run->exit_code, 0) << run->err;
  const std::string calls = read_all(d + "/calls");
  const std::string net = "gpurent-ten_0123456789abcdef gpurent-job_0123456789abcdef-gpn1";
  const size_t cut = calls.find("network disconnect " + net), back = calls.find("network connect " + net);
  ASSERT_NE(cut, std::string::npos) << calls;
  ASSERT_NE(back, std::string::npos) << calls;
  EXPECT_LT(cut, back) << calls;
  EXPECT_EQ(calls.find("network disconnect", cut + 1), std::string::npos) << "cut once: " << calls;
  EXPECT_NE(run->err.find("egress is frozen"), std::string::npos) << run->err;
  EXPECT_NE(run->err.find("network is back"), std::string::npos) << run->err;
  std::filesystem::remove_all(d);
}

// Asked through its request file, a running container is committed (its image's own CMD kept)
// under a temporary tag in its tenant's scope, saved as a docker-archive, hashed, and the result
// written after the archive; the tag is dropped. A request that names no image id saves nothing.
TEST(Container, SavesTheRunningContainerWhenAsked) {
  const std::string d = fake_podman_dir(
      podman_by_verb("  *' run '*) sleep 6 ;;\n"
                     "  *' image inspect '*) cat $D/cmd ;;\n"
                     "  *' save '*) while [ \"$1\" != -o ]; do shift; done; printf 'layers' > \"$2\" ;;\n",
                     "echo \"$*\" >> $D/calls\n"));
  ASSERT_FALSE(d.empty());
  auto [s, r] = faked(d);
  std::filesystem::create_directories(d + "/saves");
  r.save_request = d + "/saves/job.save-request";
  r.save_dir = d + "/saves";
  std::ofstream(r.save_request) << "img_00aa11bb22cc33dd\n";
  std::ofstream(d + "/cmd") << "[\"bash\",\"-l\"]\n";
  auto run = run_process({"bash", "-c", container_script(s, r)}, {{"SLURMD_NODENAME", "gpn1"}}, "", 30'000);
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_EQ(run->exit_code, 0) << run->err;
  const std::string calls = read_all(d + "/calls");
  const std::string tag = "localhost/gpurent/ten_0123456789abcdef/saving-00aa11bb22cc33dd:tmp";
  EXPECT_NE(calls.find("commit -q --change CMD [\"bash\",\"-l\"] gpurent-job_0123456789abcdef-gpn1 " + tag), std::string::npos)
      << calls;
  EXPECT_NE(calls.find("save -q --format docker-archive -o " + d + "/saves/img_00aa11bb22cc33dd.save.tar.part " + tag),
            std::string::npos)
      << calls;
  // The committed image goes with its temporary tag: `untag` first would strip every name from it
  // and leave it on the node, unnamed (and runnable by its id).
  EXPECT_NE(calls.find("rmi " + tag), std::string::npos) << calls;
  EXPECT_EQ(calls.find("untag"), std::string::npos) << calls;
  EXPECT_FALSE(std::filesystem::exists(r.save_request)) << "the request was taken";
  EXPECT_TRUE(std::filesystem::exists(d + "/saves/img_00aa11bb22cc33dd.save.taken"));
  EXPECT_EQ(read_all(save_archive_for(d + "/saves", "img_00aa11bb22cc33dd")), "layers");
  auto done = read_save_done(save_done_for(d + "/saves", "img_00aa11bb22cc33dd"));
  ASSERT_TRUE(done.has_value()) << read_all(save_done_for(d + "/saves", "img_00aa11bb22cc33dd"));
  EXPECT_TRUE(done->ok);
  EXPECT_EQ(done->sha256, "e3b816898ca5ba5fbe6b8e6ee8e5d028da790352f5e65ac760fb59635882f6cd");  // sha256 of "layers"
  EXPECT_EQ(done->bytes, 6);
  EXPECT_NE(run->err.find("saved the container as image img_00aa11bb22cc33dd"), std::string::npos) << run->err;

  // Not an image id: taken away, nothing committed.
  std::filesystem::remove(d + "/calls");
  std::ofstream(r.save_request) << "../../etc/passwd";
  auto bad = run_process({"bash", "-c", container_script(s, r)}, {{"SLURMD_NODENAME", "gpn1"}}, "", 30'000);
  ASSERT_TRUE(bad.ok());
  EXPECT_FALSE(std::filesystem::exists(r.save_request));
  EXPECT_EQ(read_all(d + "/calls").find("commit"), std::string::npos) << read_all(d + "/calls");
  // An image without a CMD is saved without one: not with the run's command (an instance's entry,
  // which a job of the saved image would run instead of saying it needs a command).
  std::filesystem::remove(d + "/calls");
  std::ofstream(d + "/cmd") << "null\n";
  std::ofstream(r.save_request) << "img_00aa11bb22cc33ee\n";
  auto bare = run_process({"bash", "-c", container_script(s, r)}, {{"SLURMD_NODENAME", "gpn1"}}, "", 30'000);
  ASSERT_TRUE(bare.ok());
  EXPECT_NE(read_all(d + "/calls").find("commit -q --change CMD [] gpurent-job_0123456789abcdef-gpn1 "),
            std::string::npos)
      << read_all(d + "/calls");
  // A gang has no single container to save: no watcher at all.
  r.nodes = 2;
  EXPECT_EQ(container_script(s, r).find("save-request"), std::string::npos);
  std::filesystem::remove_all(d);
}

// A node volume on another node is copied here before the container starts, timed and reported;
// a failed copy starts nothing and says why; one created here is reported as this node's; each
// run ends with what its folder holds.
TEST(Container, CopiesANodeVolumeHereFirstAndReportsWhatItMeasured) {
  const std::string d = fake_podman_dir("echo \"$*\" >> $D/calls\n"
                                         "case \" $* \" in *' inspect '*) echo false ;; esac\n"
                                         "exit 0\n");
  ASSERT_FALSE(d.empty());
  auto [s, r] = faked(d);
  r.status_file = d + "/status";
  std::filesystem::create_directories(d + "/gpn1/home/sub");
  std::ofstream(d + "/gpn1/home/sub/notes.txt") << "kept";
  ContainerVolume v{"home", "/data", false};
  v.host_dir = d + "/gpn2/home";
  v.copy_from = "gpn1";
  v.copy_command = "mkdir -p '" + v.host_dir + "' && cp -a '" + d + "/gpn1/home/.' '" + v.host_dir + "'";
  v.report_file = d + "/report";
  r.volumes = {v};
  s.user = std::to_string(getuid()) + ":" + std::to_string(getgid());  // chown to ourselves
  auto run = [&] { return run_process({"bash", "-c", container_script(s, r)}, {{"SLURMD_NODENAME", "gpn2"}}, "", 30'000); };
  auto copied = run();
  ASSERT_TRUE(copied.ok());
  EXPECT_EQ(copied->exit_code, 0) << copied->err;
  EXPECT_EQ(read_all(d + "/gpn2/home/sub/notes.txt"), "kept");
  EXPECT_NE(read_all(d + "/calls").find("-v " + d + "/gpn2/home:/data"), std::string::npos) << read_all(d + "/calls");
  auto rep = read_volume_report(d + "/report.copied");
  ASSERT_TRUE(rep.has_value()) << read_all(d + "/report.copied");
  EXPECT_TRUE(rep->copied);
  EXPECT_EQ(rep->from, "gpn1");
  EXPECT_EQ(rep->node, "gpn2");
  EXPECT_GT(rep->bytes, 0);
  EXPECT_GE(rep->ms, 0);
  EXPECT_GT(rep->at, 1'000'000'000'000);
  auto used = read_volume_report(d + "/report.used");
  ASSERT_TRUE(used.has_value());
  EXPECT_FALSE(used->copied);
  EXPECT_EQ(used->node, "gpn2");
  EXPECT_EQ(used->bytes, rep->bytes);
  EXPECT_NE(copied->err.find("copied volume home"), std::string::npos) << copied->err;

  // The copy fails: nothing runs, the status says which volume and why.
  std::filesystem::remove(d + "/calls");
  r.volumes[0].copy_command = "echo no route to host gpn1 >&2; exit 12";
  auto failed = run();
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(failed->exit_code, 125);
  EXPECT_EQ(read_all(d + "/calls").find(" run "), std::string::npos);
  auto st = read_container_status(d + "/status");
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->reason, "volume_copy_failed");
  EXPECT_NE(st->detail.find("home from gpn1: no route to host"), std::string::npos) << st->detail;

  // On no node yet: this run creates it and says so.
  std::filesystem::remove_all(d + "/gpn2");
  std::filesystem::remove(d + "/report.used");
  r.volumes[0].copy_command.clear();
  r.volumes[0].copy_from.clear();
  auto created = run();
  ASSERT_TRUE(created.ok());
  EXPECT_EQ(created->exit_code, 0) << created->err;
  EXPECT_TRUE(std::filesystem::is_directory(d + "/gpn2/home"));
  auto first = read_volume_report(d + "/report.used");
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->node, "gpn2");
  std::filesystem::remove_all(d);
}

TEST(Container, ReadsWhatASaveLeft) {
  const std::string sum(64, 'a');
  auto ok = read_save_done(temp_file("ok " + sum + " 475170816\n"));
  ASSERT_TRUE(ok.has_value());
  EXPECT_TRUE(ok->ok);
  EXPECT_EQ(ok->sha256, sum);
  EXPECT_EQ(ok->bytes, 475170816);
  auto failed = read_save_done(temp_file("error Error: no container with name or ID found\n"));
  ASSERT_TRUE(failed.has_value());
  EXPECT_FALSE(failed->ok);
  EXPECT_EQ(failed->error, "Error: no container with name or ID found");
  // podman's words cut at 300 bytes on the node (tail -c): a split character becomes U+FFFD.
  auto cut =
      read_save_done(temp_file("error \xB8\xAD"
                               "存储空间不足\n"));
  ASSERT_TRUE(cut.has_value());
  EXPECT_EQ(cut->error, "\xEF\xBF\xBD\xEF\xBF\xBD存储空间不足");
  for (const std::string& bad : std::vector<std::string>{"ok " + std::string(63, 'a') + " 1", "ok " + sum, "ok " + sum + " -1", "ok " + sum + " 1 2",
                                "ok " + std::string(64, 'G') + " 1", std::string("fine"), std::string()})
    EXPECT_FALSE(read_save_done(temp_file(bad + "\n")).has_value()) << bad;
  EXPECT_FALSE(read_save_done("/nonexistent/x.save.done").has_value());
  auto copied = read_volume_report(temp_file("copied gpn1 gpn2 4096 350 1764806400000\n"));
  ASSERT_TRUE(copied.has_value());
  EXPECT_TRUE(copied->copied);
  EXPECT_EQ(copied->bytes, 4096);
  EXPECT_EQ(copied->ms, 350);
  for (const std::string& bad : std::vector<std::string>{"copied gpn1 gpn2 4096 350", "used gpn2 -1 1", "used gpn2 1 2 3", "moved gpn2 1 2"})
    EXPECT_FALSE(read_volume_report(temp_file(bad + "\n")).has_value()) << bad;
}

TEST(Container, ChecksRunsAndSettings) {
  ContainerSettings s;
  ContainerRun r = sample();
  EXPECT_FALSE(check_container_run(s, r).ok()) << "volumes without a volume root";
  s.volume_root = "/v";
  EXPECT_TRUE(check_container_run(s, r).ok());
  r.image.clear();
  EXPECT_FALSE(check_container_run(s, r).ok());
  EXPECT_TRUE(check_container_settings(s).ok());
  for (const char* bad : {"nvidia%d", "/dev/nvidia", "/dev/%s%d", "/dev/nvidia%d%d"}) {
    s.gpu_device = bad;
    EXPECT_FALSE(check_container_settings(s).ok()) << bad;
  }
  s.gpu_device = "cdi";
  EXPECT_TRUE(check_container_settings(s).ok());
  s.user = "0:0";
  EXPECT_FALSE(check_container_settings(s).ok()) << "root inside";
}

TEST(Container, ReadsTheStatusFile) {
  const std::string p = temp_file(R"({"reason":"oom","detail":"exit 137","node":"gpn1","memory_gib":4,"oom_reported":false})"
                                  "\n");
  auto st = read_container_status(p);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->reason, "oom");
  EXPECT_EQ(*st->memory_gib, 4);
  EXPECT_FALSE(*st->oom_reported);
  EXPECT_EQ(st->node, "gpn1");
  std::ofstream(p) << "not json";
  EXPECT_FALSE(read_container_status(p).has_value());
  EXPECT_FALSE(read_container_status("/nonexistent/x.status").has_value());
  std::remove(p.c_str());
}

// A reason is one printable line of valid UTF-8 (a record with a line break or a broken
// character would not decode, and the control loop would stop on it).
TEST(Container, LogExcerptIsOnePrintableLine) {
  const std::string p = temp_file("l1\nl2\nl3\tx\r\n\x1b[31mred\x1b[0m\n\xff\xfe bad \xe4\xb8\n第二步\n\n");
  const std::string e = log_excerpt(p, 5, 600);
  EXPECT_EQ(e, "l2 | l3 x  |  [31mred [0m | ?? bad ?? | 第二步");
  for (unsigned char c : e) EXPECT_TRUE(c >= 0x20 && c != 0x7f) << e;
  // Cut at a character boundary, marked.
  const std::string cut = log_excerpt(p, 5, 10);
  EXPECT_EQ(cut.rfind("…", 0), 0u) << cut;
  EXPECT_EQ(cut.substr(cut.size() - 9), "第二步");
  EXPECT_EQ(log_excerpt("/nonexistent", 5, 100), "");
  std::remove(p.c_str());
}

}  // namespace
}  // namespace gpurent
