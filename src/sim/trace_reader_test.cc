#include "sim/trace_reader.h"

#include <gtest/gtest.h>

#include <sstream>

namespace gpurent {
namespace {

TEST(TraceReader, NodesByHeaderName) {
  std::istringstream in("model,gpu,sn,memory_mib,cpu_milli\nP100,2,n0,262144,64000\r\n\nV100,8,n1,1,96000\n");
  auto r = read_trace_nodes(in, "nodes.csv");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].name, "n0");
  EXPECT_EQ((*r)[0].gpus, 2);
  EXPECT_EQ((*r)[0].cpu_milli, 64000);
  EXPECT_EQ((*r)[1].model, "V100");
}

TEST(TraceReader, PodsKeepSharesAndDropSpecForCpuOnly) {
  std::istringstream in(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos\n"
      "p0,1000,2048,1,1000,V100|T4,LS\n"
      "p1,1000,2048,0,300,T4,BE\n"
      "p2,1000,2048,2,1000,,LS\n");
  auto r = read_trace_pods(in, "pods.csv");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ((*r)[0].pod.gpu_milli, 1000);
  EXPECT_EQ((*r)[0].pod.gpu_spec, "V100|T4");
  EXPECT_EQ((*r)[1].pod.gpu_milli, 0);  // CPU-only: g and spec dropped
  EXPECT_EQ((*r)[1].pod.gpu_spec, "");
  EXPECT_EQ((*r)[2].pod.gpu_demand(), 2000);
}

TEST(TraceReader, ASharePastOneGpuOrOfNothingIsRefusedNotClamped) {
  // More than a whole GPU per card, a negative share, or a GPU pod with no share: the line is
  // wrong, and a clamp would replay a different pod than the trace names.
  const std::string why = "pods.csv:2: column gpu_milli: a pod with num_gpu > 0 needs a share of 1 to 1000, got ";
  for (auto [row, reason] : {std::pair{"p0,1000,2048,1,1500", why + "1500"}, std::pair{"p0,1000,2048,1,-5", why + "-5"},
                             std::pair{"p0,1000,2048,2,0", why + "0"}}) {
    std::istringstream in(std::string("name,cpu_milli,memory_mib,num_gpu,gpu_milli\n") + row + "\n");
    auto r = read_trace_pods(in, "pods.csv");
    ASSERT_FALSE(r.ok()) << row;
    EXPECT_EQ(r.error().message, reason);
  }
  // A CPU-only pod's share is dropped whatever it says (protocol §2).
  std::istringstream cpu("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,2048,0,1500\n");
  auto r = read_trace_pods(cpu, "pods.csv");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ((*r)[0].pod.gpu_milli, 0);
}

TEST(TraceReader, GpuSpecColumnIsOptional) {
  std::istringstream in("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,2048,1,500\n");
  auto r = read_trace_pods(in, "pods.csv");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ((*r)[0].pod.gpu_spec, "");
  EXPECT_EQ((*r)[0].pod.gpu_milli, 500);
}

TEST(TraceReader, AByteOrderMarkIsSkippedAndQuotesAreRefused) {
  std::istringstream bom("\xEF\xBB\xBFname,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,2048,1,500\n");
  auto r = read_trace_pods(bom, "pods.csv");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ((*r)[0].pod.gpu_milli, 500);
  // A quoted spec would keep its quotes and match no model: refused, naming the line.
  std::istringstream quoted("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\np0,1000,2048,1,500,\"A10|T4\"\n");
  auto q = read_trace_pods(quoted, "pods.csv");
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.error().message.rfind("pods.csv:2: quoted fields are not read", 0), 0u) << q.error().message;
}

TEST(TraceReader, ErrorsNameFileLineAndColumn) {
  std::istringstream bad_int("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\np0,1000,2048,x,0,\n");
  auto r = read_trace_pods(bad_int, "pods.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "pods.csv:2: column num_gpu: not an integer: \"x\"");
  std::istringstream missing("sn,cpu_milli,gpu,model\n");
  auto m = read_trace_nodes(missing, "nodes.csv");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message, "nodes.csv:1: column memory_mib: missing column in header");
  std::istringstream short_row("sn,cpu_milli,memory_mib,gpu,model\nn0,1,2\n");
  EXPECT_NE(read_trace_nodes(short_row, "nodes.csv").error().message.find("nodes.csv:2: expected 5 fields, found 3"), std::string::npos);
  std::istringstream neg("sn,cpu_milli,memory_mib,gpu,model\nn0,-1,2,1,T4\n");
  EXPECT_NE(read_trace_nodes(neg, "n.csv").error().message.find("must be >= 0"), std::string::npos);
  std::istringstream frac("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\np,1,1,2,500,\n");
  EXPECT_FALSE(read_trace_pods(frac, "p.csv").ok());
  EXPECT_FALSE(read_trace_pods_file("/nonexistent/pods.csv").ok());
}

}  // namespace
}  // namespace gpurent
