#include "sim/replay.h"

#include <gtest/gtest.h>

#include <sstream>

#include "sim/philly.h"

namespace gpurent {
namespace {

SchedNode node(const std::string& id) {
  SchedNode n;
  n.id = id;
  n.gpu_model = "h100-sxm5-80gb";
  n.cpu_cores = 64;
  n.memory_gib = 512;
  n.gpu_domains.assign(8, id + "/nv");
  return n;
}

ReplayJob job(const std::string& id, int64_t at_s, int64_t secs, int64_t workers, int64_t gpus) {
  ReplayJob r;
  r.job.id = id;
  r.job.tenant = r.job.project = "p";
  r.job.workers = workers;
  r.job.gpus_per_worker = gpus;
  r.job.submitted_at = at_s * 1000;
  r.job.expected_duration_ms = r.job.time_limit_ms = secs * 1000;
  r.duration_ms = secs * 1000;
  return r;
}

ReplayInput one_node(std::vector<ReplayJob> jobs) {
  ReplayInput in;
  in.nodes.push_back(node("n1"));
  SchedProject p;
  p.id = p.name = p.tenant = "p";
  p.quota.gpus_per_model["*"] = 1000;
  in.projects.push_back(p);
  in.jobs = std::move(jobs);
  return in;
}

TEST(Replay, QueuesRunsAndMeasuresByHand) {
  // a: 8 GPUs 0..100 s; b arrives at 10 s, waits for a, runs 100..150; c (4 GPUs, 20 s) arrives at
  // 20 s and waits too (no backfill room: a holds the node until 100).
  SchedConfig cfg;
  cfg.score_policy = "bestfit";
  auto r = replay(one_node({job("a", 0, 100, 1, 8), job("b", 10, 50, 1, 8), job("c", 20, 20, 1, 4)}), cfg);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->jobs, 3);
  EXPECT_EQ(r->finished, 3);
  EXPECT_EQ(r->never_started, 0);
  EXPECT_EQ(r->cluster_gpus, 8);
  // b (submitted first) starts at 100 and ends at 150; c then runs 150..170.
  EXPECT_DOUBLE_EQ(r->makespan_s, 170);
  EXPECT_DOUBLE_EQ(r->wait_mean_s, (0 + 90 + 130) / 3.0);
  EXPECT_DOUBLE_EQ(r->jct_mean_s, (100 + 140 + 150) / 3.0);
  // GPU-seconds: 800 + 400 + 80 over 8 GPUs x 170 s.
  EXPECT_NEAR(r->utilization_pct, 100.0 * 1280 / 1360, 1e-9);
  EXPECT_EQ(r->preemptions, 0);
  ASSERT_EQ(r->alloc_pct.size(), 100u);
  EXPECT_DOUBLE_EQ(r->alloc_pct.front(), 100);
}

TEST(Replay, AJobThatNeverFitsIsCountedNotWaitedFor) {
  SchedConfig cfg;
  cfg.score_policy = "fgd";
  auto r = replay(one_node({job("a", 0, 10, 2, 8), job("b", 0, 10, 1, 2)}), cfg);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->finished, 1);
  EXPECT_EQ(r->never_started, 1);
}

TEST(Philly, ReadsTheTraceFormatAndNamesBadFields) {
  std::istringstream ok(
      "timestamp,duration,num_gpus,gpu_time,cluster\n"
      "2017-10-09 07:01:55,66.5,1,66.5,11cb48\n"
      "2017-10-09 07:13:03,2951.0,12,35412.0,6214e9\n");
  auto jobs = read_philly(ok, "t.csv");
  ASSERT_TRUE(jobs.ok()) << jobs.error().message;
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].duration_ms, 66500);
  EXPECT_EQ((*jobs)[0].submit, 1507532515000);  // 2017-10-09T07:01:55Z
  EXPECT_EQ((*jobs)[1].gpus, 12);
  auto in = philly_replay_input(*jobs, 2);
  EXPECT_EQ(in.nodes.size(), 2u);
  EXPECT_EQ(in.projects.size(), 2u);
  EXPECT_EQ(in.jobs[1].job.workers, 2);  // 12 GPUs: 2 x 6
  EXPECT_EQ(in.jobs[1].job.gpus_per_worker, 6);

  std::istringstream bad("timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,-3,1,1,x\n");
  auto err = read_philly(bad, "t.csv");
  ASSERT_FALSE(err.ok());
  EXPECT_NE(err.error().message.find("t.csv:2 column duration"), std::string::npos) << err.error().message;
  // Found by fuzz/run (trace_csv): a duration whose milliseconds overflowed int64.
  std::istringstream huge("timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,3600000000000000000,1,1,x\n");
  auto too_long = read_philly(huge, "t.csv");
  ASSERT_FALSE(too_long.ok());
  EXPECT_NE(too_long.error().message.find("t.csv:2 column duration"), std::string::npos) << too_long.error().message;
  std::istringstream negative_zero("timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,-0.5,1,1,x\n");
  EXPECT_FALSE(read_philly(negative_zero, "t.csv").ok());
  std::istringstream extra("timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,5,1,1,x,junk\n");
  auto extra_err = read_philly(extra, "t.csv");
  ASSERT_FALSE(extra_err.ok());
  EXPECT_NE(extra_err.error().message.find("has 6 fields, expected 5"), std::string::npos) << extra_err.error().message;
  std::istringstream no_col("timestamp,duration,gpus,cluster\n");
  EXPECT_NE(read_philly(no_col, "t.csv").error().message.find("missing column 'num_gpus'"), std::string::npos);
}

TEST(Philly, SizesTheClusterFromTheMeanLoad) {
  // 16 GPUs busy over a 100 s span on average -> 2 nodes at headroom 1; never below the largest job.
  std::vector<PhillyJob> jobs = {{0, 100000, 16, "a"}};
  EXPECT_EQ(philly_nodes_for(jobs, 1.0), 2);
  EXPECT_EQ(philly_nodes_for(jobs, 1.5), 3);
  jobs.push_back({0, 1, 64, "a"});
  EXPECT_EQ(philly_nodes_for(jobs, 1.0), 8);
}

}  // namespace
}  // namespace gpurent

#include "sim/alibaba_replay.h"

namespace gpurent {
namespace {

TEST(AlibabaReplay, PodsBecomeJobsWithExactResourcesAndTimes) {
  std::istringstream nodes("sn,cpu_milli,memory_mib,gpu,model\nn1,96000,786432,8,V100M32\n");
  std::istringstream pods(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
      "a,12000,16384,1,460,,LS,Running,10,70,10\n"
      "b,4000,8192,2,1000,V100M32|T4,LS,Running,20,20,20\n");
  auto n = read_trace_nodes(nodes, "n.csv");
  auto p = read_trace_pods(pods, "p.csv");
  ASSERT_TRUE(n.ok() && p.ok());
  auto in = alibaba_replay_input(*n, *p, 2.0);
  ASSERT_TRUE(in.ok()) << in.error().message;
  ASSERT_EQ(in->jobs.size(), 2u);
  const SchedJob& a = in->jobs[0].job;
  EXPECT_EQ(a.gpu_milli, 460);
  EXPECT_EQ(a.cpu_milli, 12000);
  EXPECT_EQ(a.memory_mib, 16384);
  EXPECT_EQ(a.submitted_at, 5000);  // 10 s compressed by 2
  EXPECT_EQ(in->jobs[0].duration_ms, 60000);
  const SchedJob& b = in->jobs[1].job;
  EXPECT_EQ(b.gpus_per_worker, 2);
  EXPECT_EQ(b.gpu_models, (std::vector<std::string>{"V100M32", "T4"}));
  EXPECT_EQ(in->jobs[1].duration_ms, 1);  // deleted when created: still runs a moment
  SchedConfig cfg;
  auto r = replay(*in, cfg);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->finished, 2);

  std::istringstream bare("name,cpu_milli,memory_mib,num_gpu,gpu_milli\nc,1000,1024,1,1000\n");
  auto q = read_trace_pods(bare, "q.csv");
  ASSERT_TRUE(q.ok());
  auto err = alibaba_replay_input(*n, *q);
  ASSERT_FALSE(err.ok());
  EXPECT_NE(err.error().message.find("creation_time"), std::string::npos);
  EXPECT_EQ(err.error().fields.at(0).field, "pods");
  std::istringstream backwards(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
      "late,1000,1024,1,1000,,LS,Running,70,10,70\n"
      "far,1000,1024,1,1000,,LS,Running,0,10000000000000000,0\n");
  auto bk = read_trace_pods(backwards, "b.csv");
  ASSERT_TRUE(bk.ok());
  err = alibaba_replay_input(*n, {bk->at(0)});
  ASSERT_FALSE(err.ok());
  EXPECT_NE(err.error().message.find("pod late: deletion_time is before creation_time"), std::string::npos)
      << err.error().message;
  err = alibaba_replay_input(*n, {bk->at(1)});
  ASSERT_FALSE(err.ok());
  EXPECT_NE(err.error().message.find("pod far"), std::string::npos) << err.error().message;
  std::istringstream odd("sn,cpu_milli,memory_mib,gpu,model\nn1,1500,786432,8,V100M32\n");
  auto on = read_trace_nodes(odd, "n.csv");
  ASSERT_TRUE(on.ok());
  err = alibaba_replay_input(*on, *p);
  ASSERT_FALSE(err.ok());
  EXPECT_NE(err.error().message.find("node n1: cpu_milli must be whole cores"), std::string::npos) << err.error().message;
}

}  // namespace
}  // namespace gpurent
