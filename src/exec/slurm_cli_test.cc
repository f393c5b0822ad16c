// The Slurm CLI wrapper's pure parts against real output of Slurm 22.05 and 24.11 (testdata/,
// captured from local clusters, scripts/slurm-local: running jobs, a two-node gang, a job that
// exited 3, one killed by a signal, a cancelled one, a drained node).
#include "exec/slurm_cli.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "exec/process.h"

namespace gpurent {
namespace {

std::string testdata(const std::string& name) {
  std::ifstream in(std::string(GPURENT_SOURCE_DIR) + "/src/exec/testdata/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(SlurmCli, ExpandsHostlists) {
  EXPECT_EQ(expand_hostlist("gpn[1-3],gpx7"), (std::vector<std::string>{"gpn1", "gpn2", "gpn3", "gpx7"}));
  EXPECT_EQ(expand_hostlist("node[08-10]"), (std::vector<std::string>{"node08", "node09", "node10"}));
  EXPECT_EQ(expand_hostlist("a[1,3-4]b"), (std::vector<std::string>{"a1b", "a3b", "a4b"}));
  EXPECT_TRUE(expand_hostlist("").empty());
}

TEST(SlurmCli, ParsesSqueueJson) {
  auto jobs = parse_squeue_json(testdata("squeue_22.05.json"));
  ASSERT_TRUE(jobs.ok()) << jobs.error().message;
  ASSERT_EQ(jobs->size(), 2u);
  const SlurmJob& a = (*jobs)[0];
  EXPECT_EQ(a.id, 1);
  EXPECT_EQ(a.state, "RUNNING");
  EXPECT_EQ(a.comment, "job_abc");
  EXPECT_EQ(a.user, "root");
  EXPECT_EQ(a.partition, "gpu");
  EXPECT_EQ(a.nodes, std::vector<std::string>{"gpn1"});
  EXPECT_EQ(a.gpu_indices, (std::vector<int64_t>{0, 1}));
  ASSERT_TRUE(a.start.has_value());
  EXPECT_EQ(*a.start, 1795990252000);
  const SlurmJob& b = (*jobs)[1];
  EXPECT_EQ(b.state, "FAILED");
  EXPECT_EQ(b.reason, "NonZeroExitCode");
  EXPECT_EQ(b.exit_code, 3);  // Slurm reports the wait status 768
  EXPECT_TRUE(b.gpu_indices.empty());
  EXPECT_FALSE(parse_squeue_json("squeue: error: Unable to contact slurm controller").ok());
  // A two-node job (captured from the local cluster): each node's own indices, in
  // job_resources.allocated_nodes order.
  auto gang = parse_squeue_json(testdata("squeue_22.05_gang.json"));
  ASSERT_TRUE(gang.ok()) << gang.error().message;
  ASSERT_EQ(gang->size(), 1u);
  EXPECT_EQ((*gang)[0].nodes, (std::vector<std::string>{"gpn1", "gpn2"}));
  EXPECT_EQ((*gang)[0].gpus_by_node.at("gpn1"), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ((*gang)[0].gpus_by_node.at("gpn2"), (std::vector<int64_t>{0, 1}));
  EXPECT_FALSE(parse_squeue_json(R"({"errors": [{"error": "x"}], "jobs": []})").ok());
}

TEST(SlurmCli, ParsesSinfoJson) {
  auto nodes = parse_sinfo_json(testdata("sinfo_22.05.json"));
  ASSERT_TRUE(nodes.ok()) << nodes.error().message;
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ((*nodes)[0].name, "gpn1");
  EXPECT_EQ((*nodes)[0].gpus, 8);
  EXPECT_EQ((*nodes)[0].gpu_type, "h100");
  EXPECT_EQ((*nodes)[0].cpus, 16);
  EXPECT_TRUE((*nodes)[0].usable());
  EXPECT_TRUE((*nodes)[1].drain);
  EXPECT_EQ((*nodes)[1].reason, "test drain");
  EXPECT_FALSE((*nodes)[1].usable());
}

// The local cluster's topology as 22.05's sinfo prints it: sockets, cores per socket, features.
TEST(SlurmCli, ReadsSocketsAndFeatures) {
  auto nodes = parse_sinfo_json(testdata("sinfo_22.05_topology.json"));
  ASSERT_TRUE(nodes.ok()) << nodes.error().message;
  ASSERT_EQ(nodes->size(), 3u);
  EXPECT_EQ((*nodes)[0].sockets, 2);
  EXPECT_EQ((*nodes)[0].cores_per_socket, 8);
  EXPECT_EQ((*nodes)[0].features, (std::vector<std::string>{"ib400"}));
  EXPECT_EQ((*nodes)[1].features, (std::vector<std::string>{"roce200"}));
  EXPECT_TRUE((*nodes)[2].features.empty());
  EXPECT_EQ((*nodes)[2].gpus, 8);
  EXPECT_TRUE((*nodes)[0].gpu_cores.empty()) << "gres.conf is read by SlurmCli::nodes, not from sinfo";
}

// 24.11's sinfo groups the three nodes and shows one node's features for all; scontrol's
// per-node records put each node's own back.
TEST(SlurmCli, TakesFeaturesPerNodeFromScontrolOn24_11) {
  auto nodes = parse_sinfo_json(testdata("sinfo_24.11_topology.json"));
  ASSERT_TRUE(nodes.ok()) << nodes.error().message;
  ASSERT_EQ(nodes->size(), 3u);
  EXPECT_EQ((*nodes)[2].features, (std::vector<std::string>{"ib400"})) << "the group's";
  add_node_topology(*nodes, testdata("scontrol_nodes_24.11.json"));
  EXPECT_EQ((*nodes)[0].features, (std::vector<std::string>{"ib400"}));
  EXPECT_EQ((*nodes)[1].features, (std::vector<std::string>{"roce200"}));
  EXPECT_TRUE((*nodes)[2].features.empty());
  EXPECT_EQ((*nodes)[2].sockets, 2);
  EXPECT_EQ((*nodes)[2].cores_per_socket, 8);
  add_node_topology(*nodes, "not json");
  add_node_topology(*nodes, R"({"nodes": [{"name": "gpn1", "features": 7, "sockets": "x"}, 3]})");
  EXPECT_TRUE((*nodes)[0].features.empty());
  EXPECT_EQ((*nodes)[0].sockets, 2);
}

// RDMA NICs and their fabric from node features; anything else is not a NIC.
TEST(SlurmCli, ReadsNicsFromFeatures) {
  const auto nics = nics_from_features({"gpu-hbm3", "ib400", "roce", "fabric-east", "ibx", "roce99999", "infiniband200"});
  ASSERT_EQ(nics.size(), 3u);
  EXPECT_EQ(nics[0].name, "ib400");
  EXPECT_FALSE(nics[0].roce);
  EXPECT_EQ(nics[0].gbps, 400);
  EXPECT_EQ(nics[0].fabric, "east");
  EXPECT_TRUE(nics[1].roce);
  EXPECT_EQ(nics[1].gbps, 100) << "no rate named";
  EXPECT_EQ(nics[2].gbps, 200);
  EXPECT_EQ(nics_from_features({"ib", "fabric-East Wing"})[0].fabric, "") << "not a slug";
  EXPECT_TRUE(nics_from_features({"ib0", "roce5000"}).empty()) << "rates outside 1-3200";
}

// gres.conf: per node, each GPU's first bound core in device order; lines without NodeName
// apply to every node; other gres, AutoDetect and broken lines are left out.
// slurm.conf as Slurm reads it: keys in any case, comments after a value, spaces around it; a
// file of several pairs per line and one without '=' leave the other keys readable.
TEST(SlurmCli, ReadsSlurmConfLikeSlurm) {
  const auto v = parse_slurm_conf_values(
      "# accounting\n"
      "accountingstoragetype=accounting_storage/slurmdbd   # by slurmdbd\n"
      "  JobCompType = jobcomp/filetxt\t\r\n"
      "JOBCOMPLOC=/var/log/slurm/jobcomp.log#kept\n"
      "NodeName=gpn[1-2] Gres=gpu:8 CPUs=16\n"
      "Include /etc/slurm/more.conf\n"
      "=orphan\n");
  EXPECT_EQ(v.at("accountingstoragetype"), "accounting_storage/slurmdbd");
  EXPECT_EQ(v.at("jobcomptype"), "jobcomp/filetxt");
  EXPECT_EQ(v.at("jobcomploc"), "/var/log/slurm/jobcomp.log");
  EXPECT_EQ(v.at("nodename"), "gpn[1-2] Gres=gpu:8 CPUs=16");
  EXPECT_EQ(v.size(), 4u);
  EXPECT_TRUE(parse_slurm_conf_values("").empty());
}

TEST(SlurmCli, ReadsGpuCoresFromGresConf) {
  const std::string conf = R"(# scripts/slurm-local
NodeName=gpn[1-2] Name=gpu Type=h100 File=/d/gpu[0-3] Cores=0-7
NodeName=gpn[1-2] Name=gpu Type=h100 File=/d/gpu[4-7] Cores=8-15   # socket 1
NodeName=gpx1 name=gpu File=/dev/nvidia0,/dev/nvidia1 cores=4,6
NodeName=gpx2 Name=gpu File=/dev/nvidia[0-1]
Name=shard Count=8
AutoDetect=nvml
Name=gpu File=/dev/nvidia[0-1] Cores=x
NodeName=bad Name=gpu File=/dev/nvidia[0-99999999]
)";
  const auto cores = parse_gres_conf_cores(conf, {"gpn1", "gpy"});
  EXPECT_EQ(cores.at("gpn1"), (std::vector<int64_t>{0, 0, 0, 0, 8, 8, 8, 8, -1, -1}));
  EXPECT_EQ(cores.at("gpn2"), (std::vector<int64_t>{0, 0, 0, 0, 8, 8, 8, 8}));
  EXPECT_EQ(cores.at("gpx1"), (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(cores.at("gpx2"), (std::vector<int64_t>{-1, -1}));
  EXPECT_EQ(cores.at("gpy"), (std::vector<int64_t>{-1, -1}));
  EXPECT_FALSE(cores.count("bad"));
  EXPECT_NO_THROW(parse_gres_conf_cores("NodeName== Name=gpu File=[ Cores=-\nName=gpu File=]]-[ Cores=99999999999", {"n"}));
}

// Slurm 24.11 (data_parser v0.0.42): states are arrays, times {set, infinite, number} objects,
// exit codes objects, a job's nodes under job_resources.nodes.allocation, and sinfo groups nodes.
TEST(SlurmCli, ParsesSlurm24_11Json) {
  auto running = parse_squeue_json(testdata("squeue_24.11_running.json"));
  ASSERT_TRUE(running.ok()) << running.error().message;
  ASSERT_EQ(running->size(), 2u);
  const SlurmJob& gang = (*running)[0];
  EXPECT_EQ(gang.id, 1);
  EXPECT_EQ(gang.state, "RUNNING");
  EXPECT_EQ(gang.user, "root");
  EXPECT_EQ(gang.partition, "gpu");
  EXPECT_EQ(gang.comment, "gj-1");
  EXPECT_EQ(gang.nodes, (std::vector<std::string>{"gpn1", "gpn2"}));
  EXPECT_EQ(gang.gpus_by_node.at("gpn1"), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(gang.gpus_by_node.at("gpn2"), (std::vector<int64_t>{0, 1}));
  ASSERT_TRUE(gang.start.has_value());
  EXPECT_EQ(*gang.start, 1796184521000);
  EXPECT_EQ((*running)[1].state, "PENDING");
  EXPECT_EQ((*running)[1].reason, "Resources");
  EXPECT_FALSE((*running)[1].start.has_value());  // {"number": 0}

  auto finished = parse_squeue_json(testdata("squeue_24.11_finished.json"));
  ASSERT_TRUE(finished.ok()) << finished.error().message;
  ASSERT_EQ(finished->size(), 4u);
  EXPECT_EQ((*finished)[0].state, "CANCELLED");
  EXPECT_EQ((*finished)[0].exit_signal, 15);
  EXPECT_EQ((*finished)[1].gpus_by_node.at("gpn2"), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ((*finished)[1].gpu_indices, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ((*finished)[2].state, "FAILED");
  EXPECT_EQ((*finished)[2].exit_code, 3);
  EXPECT_EQ((*finished)[2].exit_signal, 0);
  EXPECT_EQ((*finished)[3].exit_code, 0);
  EXPECT_EQ((*finished)[3].exit_signal, 9);
  EXPECT_EQ((*finished)[3].reason, "RaisedSignal");

  auto nodes = parse_sinfo_json(testdata("sinfo_24.11.json"));
  ASSERT_TRUE(nodes.ok()) << nodes.error().message;
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ((*nodes)[0].name, "gpn1");
  EXPECT_EQ((*nodes)[0].state, "mixed");
  EXPECT_TRUE((*nodes)[0].drain);
  EXPECT_EQ((*nodes)[0].reason, "test");
  EXPECT_FALSE((*nodes)[0].usable());
  EXPECT_EQ((*nodes)[1].name, "gpn2");
  EXPECT_FALSE((*nodes)[1].drain);
  EXPECT_TRUE((*nodes)[1].usable());
  EXPECT_EQ((*nodes)[1].gpus, 4);
  EXPECT_EQ((*nodes)[1].gpu_type, "h100");
  EXPECT_EQ((*nodes)[1].cpus, 16);
  EXPECT_EQ((*nodes)[1].memory_mb, 64000);
}

// Forms between the two (23.02-23.11) and hostile shapes: never a throw.
TEST(SlurmCli, ReadsEveryJsonFormAndNeverThrows) {
  auto a = parse_squeue_json(
      R"J({"jobs": [{"job_id": 5, "job_state": ["COMPLETED"], "exit_code": {"status": ["SUCCESS"],
          "return_code": 0}, "start_time": {"set": true, "infinite": false, "number": 100},
          "end_time": {"set": false, "infinite": false, "number": 0},
          "job_resources": {"allocated_nodes": [{"nodename": "n1"}]}, "gres_detail": ["gpu:2(IDX:6-7)"]}]})J");
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ((*a)[0].state, "COMPLETED");
  EXPECT_EQ(*(*a)[0].start, 100000);
  EXPECT_FALSE((*a)[0].end.has_value());
  EXPECT_EQ((*a)[0].gpus_by_node.at("n1"), (std::vector<int64_t>{6, 7}));
  // A cancelled run still being killed is completing, as 22.05 prints it, not over.
  auto completing = parse_squeue_json(R"({"jobs": [{"job_id": 6, "job_state": ["CANCELLED", "COMPLETING"]},
                                                   {"job_id": 7, "job_state": "COMPLETING"}]})");
  ASSERT_TRUE(completing.ok()) << completing.error().message;
  EXPECT_EQ((*completing)[0].state, "COMPLETING");
  EXPECT_EQ((*completing)[1].state, "COMPLETING");
  auto n = parse_sinfo_json(R"({"nodes": [{"name": "n1", "state": ["IDLE", "DRAIN"], "cpus": 8, "gres": "gpu:a100:4"}]})");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ((*n)[0].state, "idle");
  EXPECT_TRUE((*n)[0].drain);
  EXPECT_EQ((*n)[0].gpus, 4);
  for (const char* bad : {R"({"jobs": [1, null, {"job_id": "x", "job_state": 7, "exit_code": "y", "nodes": []}]})",
                          R"({"jobs": {"a": 1}})", R"({"sinfo": [7, {"nodes": {"nodes": [1]}, "gres": {"total": "gpu:x:99999999999999999"}}]})",
                          R"({"nodes": [{"state": {}, "gres": 5, "cpus": "8"}]})"}) {
    EXPECT_NO_THROW({
      (void)parse_squeue_json(bad);
      (void)parse_sinfo_json(bad);
    }) << bad;
  }
}

// "No record" only from a cluster that keeps no accounting: sacct failing (slurmdbd down, no
// sacct) is an error its caller waits out, never an empty answer.
TEST(SlurmCli, AccountingThatCannotBeReadIsAnErrorNotNothing) {
  const std::string dir = ::testing::TempDir() + "/slurm_acct_conf";
  std::filesystem::create_directories(dir);
  auto cli_for = [&](const std::string& text) {
    std::ofstream(dir + "/slurm.conf") << text;
    return SlurmCli(SlurmSettings{dir + "/slurm.conf", "", "", 5'000});
  };
  auto none = cli_for("ClusterName=x\n").accounted_since(0);
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_TRUE(none->empty());
  auto no_file_yet = cli_for("JobCompType=jobcomp/filetxt\nJobCompLoc=" + dir + "/none.log\n").accounted_since(0);
  ASSERT_TRUE(no_file_yet.ok()) << no_file_yet.error().message;
  EXPECT_TRUE(no_file_yet->empty());
  const char* path = std::getenv("PATH");
  const std::string saved = path ? path : "";
  ::setenv("PATH", dir.c_str(), 1);  // no sacct there
  auto down = cli_for("AccountingStorageType=accounting_storage/slurmdbd\n").accounted_since(0);
  ::setenv("PATH", saved.c_str(), 1);
  EXPECT_FALSE(down.ok());
  std::filesystem::remove_all(dir);
}

// A bounded read asks sacct for the period only (-S and -E, a day's margin each side).
TEST(SlurmCli, AccountingUntilAsksSacctForThePeriodOnly) {
  const std::string dir = ::testing::TempDir() + "/slurm_acct_until";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/slurm.conf") << "AccountingStorageType=accounting_storage/slurmdbd\n";
  {
    std::ofstream sacct(dir + "/sacct");
    sacct << "#!/bin/sh\necho \"$@\" > " << dir << "/argv\n";
  }
  std::filesystem::permissions(dir + "/sacct", std::filesystem::perms::owner_all);
  const char* path = std::getenv("PATH");
  const std::string saved = path ? path : "";
  ::setenv("PATH", (dir + ":" + saved).c_str(), 1);
  SlurmCli cli(SlurmSettings{dir + "/slurm.conf", "", "", 5'000});
  const TimeMs from = 1'793'491'200'000;  // 2026-11-01T00:00:00Z
  auto bounded = cli.accounting(from, nullptr, from + 30 * kMsPerDay);
  ::setenv("PATH", saved.c_str(), 1);
  ASSERT_TRUE(bounded.ok()) << bounded.error().message;
  std::ifstream in(dir + "/argv");
  std::string argv;
  std::getline(in, argv);
  EXPECT_NE(argv.find("-S 2026-10-31T00:00:00"), std::string::npos) << argv;
  EXPECT_NE(argv.find("-E 2026-12-02T00:00:00"), std::string::npos) << argv;
  std::filesystem::remove_all(dir);
}

TEST(SlurmCli, ParsesJobcompRecords) {
  auto recs = parse_jobcomp(
      "JobId=1 UserId=root(0) GroupId=root(0) Name=wrap JobState=COMPLETED Partition=gpu TimeLimit=UNLIMITED "
      "StartTime=2026-11-29T22:04:39 EndTime=2026-11-29T22:04:40 NodeList=gpn2 NodeCnt=1 ProcCnt=1 "
      "Tres=cpu=1,mem=62.50G,node=1,billing=1,gres/gpu=2 ExitCode=0:0\n"
      "JobId=2 JobState=NODE_FAIL StartTime=2026-11-29T22:05:00 EndTime=Unknown NodeList=gpn[1-2]\n\n");
  ASSERT_TRUE(recs.ok()) << recs.error().message;
  ASSERT_EQ(recs->size(), 2u);
  EXPECT_EQ((*recs)[0].id, 1);
  EXPECT_EQ((*recs)[0].state, "COMPLETED");
  EXPECT_EQ(*(*recs)[0].end - *(*recs)[0].start, 1000);
  EXPECT_EQ(format_rfc3339(*(*recs)[0].start), "2026-11-29T22:04:39.000Z");
  EXPECT_EQ(*(*recs)[0].elapsed_s, 1);
  EXPECT_EQ((*recs)[0].gpus, 2);
  EXPECT_EQ((*recs)[0].name, "wrap");
  EXPECT_EQ((*recs)[0].user, "root");
  EXPECT_EQ((*recs)[0].partition, "gpu");
  EXPECT_FALSE((*recs)[1].end.has_value());
  EXPECT_EQ((*recs)[1].nodes, (std::vector<std::string>{"gpn1", "gpn2"}));
  EXPECT_FALSE(parse_jobcomp("JobState=COMPLETED\n").ok());
  EXPECT_FALSE(parse_jobcomp("JobId=3 StartTime=yesterday\n").ok());
}

// Lines as Slurm 22.05's sacct printed them on the local cluster (SLURM_TIME_FORMAT=%s), plus a
// requeued job's two runs (-D), a running job and a cancelled one.
TEST(SlurmCli, ParsesSacctRecords) {
  auto recs = parse_sacct(
      "1|COMPLETED|1795997053|1795997055|2|billing=1,cpu=1,gres/gpu=2,mem=1000M,node=1|gpn1|0:0|root|gpu|gpurent-job_1\n"
      "2|FAILED|1795997053|1795997053|0|billing=1,cpu=1,gres/gpu=1,mem=1000M,node=1|gpn1|3:0\n"
      "5|NODE_FAIL|1795997100|1795997160|60|cpu=2,gres/gpu=8,mem=2000M,node=2|gpn[1-2]|0:0\n"
      "5|COMPLETED|1795997200|1795997230|30|cpu=2,gres/gpu=8,mem=2000M,node=2|gpn[2-3]|0:0\n"
      "6|RUNNING|1795997300|Unknown|12|cpu=1,gres/gpu=4,node=1|gpn3|0:0\n"
      "7|CANCELLED by 0|None|1795997301|0||None assigned|0:0|u|p|a|b\n");
  ASSERT_TRUE(recs.ok()) << recs.error().message;
  ASSERT_EQ(recs->size(), 6u);
  EXPECT_EQ((*recs)[0].id, 1);
  EXPECT_EQ(*(*recs)[0].start, 1795997053000);
  EXPECT_EQ(*(*recs)[0].elapsed_s, 2);
  EXPECT_EQ((*recs)[0].gpus, 2);
  EXPECT_EQ((*recs)[1].exit_code, 3);
  EXPECT_EQ((*recs)[2].nodes, (std::vector<std::string>{"gpn1", "gpn2"}));
  EXPECT_EQ((*recs)[3].gpus, 8);
  EXPECT_EQ(*(*recs)[3].elapsed_s, 30);
  EXPECT_FALSE((*recs)[4].end.has_value());
  EXPECT_EQ((*recs)[5].state, "CANCELLED");
  EXPECT_FALSE((*recs)[5].start.has_value());
  EXPECT_TRUE((*recs)[5].nodes.empty());
  EXPECT_EQ((*recs)[0].name, "gpurent-job_1");  // JobName, last: one holding '|' stays whole
  EXPECT_EQ((*recs)[0].user, "root");
  EXPECT_EQ((*recs)[0].partition, "gpu");
  EXPECT_EQ((*recs)[5].name, "a|b");
  EXPECT_EQ((*recs)[1].name, "");
  // Times must be epoch seconds: a local date would be guessed into a zone.
  auto local = parse_sacct("1|COMPLETED|2026-11-30T00:04:13|2026-11-30T00:04:15|2|gres/gpu=1|gpn1|0:0\n");
  ASSERT_FALSE(local.ok());
  EXPECT_NE(local.error().message.find("SLURM_TIME_FORMAT"), std::string::npos);
  EXPECT_FALSE(parse_sacct("7.batch|COMPLETED|1|2|1||gpn1|0:0\n").ok());
  EXPECT_FALSE(parse_sacct("|COMPLETED|1|2|1||gpn1|0:0\n").ok());
}

// KillWait from a real `scontrol show config` (22.05, the local cluster's 5 s); KillWait's
// neighbours and a value that is not seconds are not taken for it.
TEST(SlurmCli, ReadsKillWaitFromShowConfig) {
  auto kw = parse_kill_wait(testdata("scontrol_config_22.05.txt"));
  ASSERT_TRUE(kw) << kw.error().message;
  EXPECT_EQ(*kw, 5);
  EXPECT_EQ(*parse_kill_wait("KillOnBadExit           = 0\nKillWait                = 30 sec\n"), 30);
  EXPECT_FALSE(parse_kill_wait("KillOnBadExit           = 0\n"));
  EXPECT_FALSE(parse_kill_wait("KillWaitish = 3 sec\n"));
  auto odd = parse_kill_wait("KillWait                = soon\n");
  ASSERT_FALSE(odd);
  EXPECT_NE(odd.error().message.find("not a number of seconds"), std::string::npos) << odd.error().message;
  // A container's stop: 10 s where KillWait is 20 s or more; half of KillWait below; at least 1 s.
  EXPECT_EQ(fitted_stop_timeout(10, 30), 10);
  EXPECT_EQ(fitted_stop_timeout(10, 20), 10);
  EXPECT_EQ(fitted_stop_timeout(10, 19), 9);
  EXPECT_EQ(fitted_stop_timeout(10, 5), 2);
  EXPECT_EQ(fitted_stop_timeout(10, 2), 1);
  EXPECT_EQ(fitted_stop_timeout(10, 1), 1);
  EXPECT_EQ(fitted_stop_timeout(10, 0), 1);
  EXPECT_EQ(fitted_stop_timeout(3, 60), 3);
}

TEST(SlurmCli, CountsGpusInTres) {
  EXPECT_EQ(tres_gpus("billing=1,cpu=1,gres/gpu=2,mem=1000M,node=1"), 2);
  EXPECT_EQ(tres_gpus("cpu=1,mem=62.50G,node=1,billing=1"), 0);
  EXPECT_EQ(tres_gpus("cpu=4,gres/gpu:h100=4,node=1"), 4);
  EXPECT_EQ(tres_gpus("cpu=4,gres/gpu=6,gres/gpu:a100=2,gres/gpu:h100=4"), 6);  // the total, not twice
  EXPECT_EQ(tres_gpus(""), 0);
}

TEST(SlurmCli, BatchScriptQuotesEverything) {
  SlurmSubmit s;
  s.comment = "job_0123";
  s.command = {"python", "train.py", "--name", "it's \"x\" $HOME"};
  s.env = {{"MSG", "a,b c'd"}};
  EXPECT_EQ(batch_script(s), "#!/bin/bash\n# submitted by gpurent for job_0123\nexport MSG='a,b c'\\''d'\n"
                             "exec 'python' 'train.py' '--name' 'it'\\''s \"x\" $HOME'\n");
  // The script is valid bash that passes the argument through unchanged.
  s.command = {"printf", "%s|%s", "it's \"x\" $HOME", "$MSG"};
  auto r = run_process({"bash", "-s"}, {}, batch_script(s), 5000);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->out, "it's \"x\" $HOME|$MSG");
}

TEST(Process, ReportsExitCodesTimeoutsAndMissingPrograms) {
  auto ok = run_process({"sh", "-c", "echo out; echo err >&2; exit 4"}, {{"X", "1"}}, "", 5000);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->exit_code, 4);
  EXPECT_EQ(ok->out, "out\n");
  EXPECT_EQ(ok->err, "err\n");
  auto env = run_process({"sh", "-c", "printf %s \"$X\""}, {{"X", "v w"}}, "", 5000);
  EXPECT_EQ(env->out, "v w");
  auto slow = run_process({"sleep", "5"}, {}, "", 200);
  ASSERT_FALSE(slow.ok());
  EXPECT_NE(slow.error().message.find("did not finish"), std::string::npos);
  EXPECT_FALSE(run_process({"/no/such/program"}, {}, "", 5000).ok());
}

}  // namespace
}  // namespace gpurent
