// The acceptance parsers on recorded tool outputs (testdata/acceptance/SOURCE.md), and the report.
#include "meter/acceptance.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace gpurent {
namespace {

std::string accept_recorded(const std::string& name) {
  std::ifstream in(std::string(GPURENT_SOURCE_DIR) + "/src/meter/testdata/acceptance/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_FALSE(ss.str().empty()) << name;
  return ss.str();
}

TEST(AcceptanceParsers, NcclTestsBusBandwidthIsTheLargestMessagesOutOfPlace) {
  auto r = parse_nccl_tests(accept_recorded("nccl_all_reduce_2x8_h100.txt"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->ranks, 16);
  EXPECT_EQ(r->peak_size_bytes, 8589934592);
  EXPECT_EQ(r->peak_busbw_x100, 33882);  // 338.82 GB/s
  EXPECT_EQ(r->avg_busbw_x100, 7074);    // the tool's own average, 70.742
  EXPECT_EQ(r->wrong, 0);
  // Two nodes of eight ranks each (mpirun across them): the hosts, in rank order.
  EXPECT_EQ(r->hosts, (std::vector<std::string>{"ztan-mig-235z", "ztan-mig-gq73"}));
}

TEST(AcceptanceParsers, SimulatedNcclTestsReadBackWithTheirHosts) {
  auto one = parse_nccl_tests(simulated_nccl_tests(35550, 4));
  ASSERT_TRUE(one.ok()) << one.error().message;
  EXPECT_EQ(one->ranks, 4);
  EXPECT_EQ(one->peak_busbw_x100, 35550);
  EXPECT_EQ(one->hosts, (std::vector<std::string>{"sim"}));
  auto two = parse_nccl_tests(simulated_nccl_tests(18000, 16, {"gpn1", "gpn2"}));
  ASSERT_TRUE(two.ok()) << two.error().message;
  EXPECT_EQ(two->ranks, 16);
  EXPECT_EQ(two->peak_busbw_x100, 18000);
  EXPECT_EQ(two->hosts, (std::vector<std::string>{"gpn1", "gpn2"}));
}

TEST(AcceptanceParsers, NcclTestsCountsWrongResultsAndRefusesOutputWithoutATable) {
  std::string text = accept_recorded("nccl_all_reduce_2x8_h100.txt");
  const size_t at = text.find("338.82      0");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 13, "338.82      3");
  EXPECT_EQ(parse_nccl_tests(text)->wrong, 3);
  auto none = parse_nccl_tests("# nThread 1 nGpus 8\nNCCL WARN Cuda failure 'out of memory'\n");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("no table header"), std::string::npos) << none.error().message;
}

// nccl-tests before 2.11 printed no root column and an "error" magnitude instead of "#wrong":
// the columns are the header's, so busbw is still read from its own column.
TEST(AcceptanceParsers, NcclTestsWithoutARootColumnReadBusbwByTheHeader) {
  const std::string old =
      "#  Rank  0 Group  0 Pid  11 on gpn1 device  0 [0x04] NVIDIA A100-SXM4-80GB\n"
      "#  Rank  1 Group  0 Pid  12 on gpn1 device  1 [0x05] NVIDIA A100-SXM4-80GB\n"
      "#\n"
      "#                                                     out-of-place                       in-place\n"
      "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
      "#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
      "     1048576        262144   float     sum    40.12   26.14   26.14  0e+00    39.90   26.28   26.28  0e+00\n"
      "   268435456      67108864   float     sum   1205.3  222.71  222.71  0e+00   1203.1  223.12  223.12  0e+00\n";
  auto r = parse_nccl_tests(old);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->peak_size_bytes, 268435456);
  EXPECT_EQ(r->peak_busbw_x100, 22271) << "the busbw column, not the error column next to it";
  EXPECT_EQ(r->wrong, 0);
}

TEST(AcceptanceParsers, NcclTestsRefusesImpossibleBandwidthAndBoundsTheWrongCount) {
  std::string text = accept_recorded("nccl_all_reduce_2x8_h100.txt");
  const size_t at = text.find("338.82      0");
  ASSERT_NE(at, std::string::npos);
  std::string fast = text;
  fast.replace(at, 6, "200000");  // 200,000 GB/s: no measurement could record it
  auto r = parse_nccl_tests(fast);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("100,000 GB/s"), std::string::npos) << r.error().message;
  // Thousands of rows each claiming 10^15 wrong results: the sum stays bounded (no overflow).
  std::string many = "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n";
  for (int i = 0; i < 20000; ++i) many += std::to_string(i + 1) + " 1 float sum -1 1 1 1 1e15 1 1 1 1e15\n";
  auto w = parse_nccl_tests(many);
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w->wrong, 1'000'000'000'000'000);
}

TEST(AcceptanceParsers, GpuBenchRefusesAGemmTooSmallToRecord) {
  auto r = parse_gpu_bench(R"({"test":"gemm","gpu":0,"dtype":"fp16","m":1,"n":1,"k":1,"iterations":1,"seconds":1})");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("0.05 TFLOPS"), std::string::npos) << r.error().message;
}

TEST(AcceptanceParsers, FioJsonAfterItsBannerSumsReadAndWriteOverJobs) {
  auto r = parse_fio_json(accept_recorded("fio_write_then_read.json"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->version, "fio-3.33");
  EXPECT_EQ(r->write_mbps, 1839);  // 1,838,599,013 B/s
  EXPECT_EQ(r->read_mbps, 642);    // 642,190,086 B/s
  EXPECT_EQ(r->write_iops, 1753);
  EXPECT_EQ(r->read_iops, 612);
  EXPECT_FALSE(parse_fio_json("fio: pid=0, err=2/file:filesetup.c:150, error=No such file or directory").ok());
  EXPECT_FALSE(parse_fio_json(R"({"fio version":"fio-3.33","jobs":[{"jobname":"r","error":5,"read":{},"write":{}}]})").ok());
}

TEST(AcceptanceParsers, Iperf3JsonReadsTheReceiversRate) {
  auto r = parse_iperf3_json(accept_recorded("iperf3_loopback.json"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->version, "iperf 3.12");
  EXPECT_EQ(r->received_mbps, 20870);  // 20,870,006,109 bit/s
  EXPECT_EQ(r->sent_mbps, 20870);
  EXPECT_EQ(r->retransmits, 16);
  auto refused = parse_iperf3_json(R"({"start":{},"intervals":[],"end":{},"error":"unable to connect to server: Connection refused"})");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("Connection refused"), std::string::npos);
}

TEST(AcceptanceParsers, GpuBenchFiguresAreDerivedFromSizesAndTimes) {
  auto r = parse_gpu_bench(accept_recorded("gpu_bench_h100.txt"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->gemm.size(), 3u);
  EXPECT_EQ(r->gemm[0].tflops_x10, 7000);  // 2·8192³·100 ÷ 0.157073088 s = 700.0 TFLOPS
  EXPECT_EQ(r->gemm[0].dtype, "fp16");
  EXPECT_EQ(r->gemm[1].dtype, "bf16");
  EXPECT_EQ(r->gemm[2].tflops_x10, 5000);
  EXPECT_EQ(r->gemm[2].uuid, "GPU-5f3a2a1e-0000-4000-8000-000000000001");
  ASSERT_EQ(r->copies.size(), 2u);
  EXPECT_EQ(r->copies[0].gbps_x100, 300000);  // d2d counts read and write: 3,000.00 GB/s
  EXPECT_EQ(r->copies[1].gbps_x100, 5000);    // h2d 50.00 GB/s
}

TEST(AcceptanceParsers, GpuBenchRefusesImpossibleLines) {
  const char* bad[] = {
      R"({"test":"gemm","gpu":0,"dtype":"fp16","m":8192,"n":8192,"k":8192,"iterations":100,"seconds":0})",
      R"({"test":"gemm","gpu":0,"dtype":"fp16","m":8192,"n":8192,"k":8192,"iterations":100,"seconds":1e-7})",
      R"({"test":"gemm","gpu":0,"dtype":"int4","m":8,"n":8,"k":8,"iterations":1,"seconds":1})",
      R"({"test":"gemm","gpu":99,"dtype":"fp16","m":8,"n":8,"k":8,"iterations":1,"seconds":1})",
      R"({"test":"copy","gpu":0,"direction":"p2p","bytes":8,"iterations":1,"seconds":1})",
      R"({"test":"copy","gpu":0,"direction":"d2d","bytes":8,"iterations":1,"seconds":-1})",
      R"({"test":"burn","gpu":0,"iterations":1,"seconds":1})",
      "{not json",
      "only a banner",
  };
  for (const char* line : bad) EXPECT_FALSE(parse_gpu_bench(line).ok()) << line;
}

json accept_stage(const char* kind, const char* tool, const std::string& output, const char* status = "ok") {
  return {{"stage", kind},
          {"tool", tool},
          {"tool_version", "x"},
          {"status", status},
          {"started_at", "2026-12-04T10:00:00Z"},
          {"finished_at", "2026-12-04T10:01:00Z"},
          {"output", output}};
}

json accept_report(json stages) {
  return {{"format", kAcceptanceFormat},
          {"node", "box"},
          {"started_at", "2026-12-04T10:00:00Z"},
          {"finished_at", "2026-12-04T10:05:00Z"},
          {"gpus",
           {{{"index", 0}, {"uuid", "GPU-5f3a2a1e-0000-4000-8000-000000000000"}},
            {{"index", 1}, {"uuid", "GPU-5f3a2a1e-0000-4000-8000-000000000001"}}}},
          {"stages", std::move(stages)}};
}

TEST(AcceptanceReport, EveryStageIsReadFromItsRawOutput) {
  json skipped = accept_stage("network", "iperf3", "", "skipped");
  skipped["reason"] = "no peer";
  auto r = parse_acceptance_report(accept_report({accept_stage("gpu", "gpurent-gpu-bench", accept_recorded("gpu_bench_h100.txt")),
                                           accept_stage("nccl", "all_reduce_perf", accept_recorded("nccl_all_reduce_2x8_h100.txt")),
                                           accept_stage("storage", "fio", accept_recorded("fio_write_then_read.json")), skipped}));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->stages.size(), 4u);
  EXPECT_EQ(r->stages[0].gpu.gemm[0].tflops_x10, 7000);
  EXPECT_FALSE(r->stages[0].simulated);
  EXPECT_EQ(r->stages[1].nccl.peak_busbw_x100, 33882);
  EXPECT_EQ(r->stages[2].storage.read_mbps, 642);
  EXPECT_EQ(r->stages[3].status, "skipped");
}

TEST(AcceptanceReport, ErrorsNameTheField) {
  auto wrong_tool = parse_acceptance_report(accept_report({accept_stage("storage", "dd", "x")}));
  ASSERT_FALSE(wrong_tool.ok());
  EXPECT_NE(wrong_tool.error().message.find("stages[0].tool"), std::string::npos) << wrong_tool.error().message;
  auto bad_output = parse_acceptance_report(accept_report({accept_stage("storage", "fio", "fio: no space left")}));
  ASSERT_FALSE(bad_output.ok());
  EXPECT_NE(bad_output.error().message.find("stages[0].output: fio:"), std::string::npos) << bad_output.error().message;
  json no_reason = accept_stage("nccl", "all_reduce_perf", "", "skipped");
  auto skipped = parse_acceptance_report(accept_report({no_reason}));
  ASSERT_FALSE(skipped.ok());
  EXPECT_NE(skipped.error().message.find("stages[0].reason"), std::string::npos) << skipped.error().message;
  // A GPU figure for a GPU the report does not list, or under another UUID, is refused.
  std::string other = accept_recorded("gpu_bench_h100.txt");
  for (size_t at; (at = other.find("000000000001")) != std::string::npos;) other.replace(at, 12, "0000000000ff");
  auto uuid = parse_acceptance_report(accept_report({accept_stage("gpu", "gpurent-gpu-bench", other)}));
  ASSERT_FALSE(uuid.ok());
  EXPECT_NE(uuid.error().message.find("GPU 1 is GPU-5f3a2a1e-0000-4000-8000-0000000000ff"), std::string::npos)
      << uuid.error().message;
  json two = accept_report({accept_stage("storage", "fio", accept_recorded("fio_write_then_read.json")),
                     accept_stage("storage", "fio", accept_recorded("fio_write_then_read.json"))});
  EXPECT_FALSE(parse_acceptance_report(two).ok());
  json fmt = accept_report({});
  fmt["format"] = "other/2";
  EXPECT_FALSE(parse_acceptance_report(fmt).ok());
}

TEST(AcceptanceReport, TheReportIsTheLastMarkedLineOfALog) {
  const std::string log = "starting\nGPURENT-ACCEPTANCE-REPORT {\"a\":1}\nmore\nGPURENT-ACCEPTANCE-REPORT {\"b\":2}\r\ntail\n";
  EXPECT_EQ(find_report_in_log(log), "{\"b\":2}");
  EXPECT_FALSE(find_report_in_log("no report here\n").has_value());
  EXPECT_EQ(fixed_text(8714, 1), "871.4");
  EXPECT_EQ(fixed_text(401205, 2), "4012.05");
  EXPECT_EQ(fixed_text(7, 0), "7");
}

}  // namespace
}  // namespace gpurent
