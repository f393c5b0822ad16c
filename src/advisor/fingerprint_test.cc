#include "advisor/fingerprint.h"

#include <gtest/gtest.h>

#include <map>

#include "catalog/scenario_files_test_util.h"
#include "core/message.h"

namespace gpurent {
namespace {

const GpuCatalog& cat() { return testutil::repo_catalog(); }

FingerprintResult run(const json& body) {
  auto in = parse_fingerprint_input(body, cat());
  EXPECT_TRUE(in.ok()) << (in.ok() ? "" : in.error().message);
  if (!in.ok()) return {};
  auto r = compute_fingerprint(*in, cat());
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : FingerprintResult{};
}

// A message's code and its nested arguments' codes are in every catalogue, and it renders with
// every placeholder filled in every language.
void expect_catalogued(const json& m) {
  const std::string code = m.at("code");
  for (const auto& lang : message_languages()) {
    EXPECT_TRUE(has_message(lang, code)) << lang << " " << code;
    auto msg = message_from_json(m);
    ASSERT_TRUE(msg.ok()) << m.dump();
    EXPECT_EQ(render(*msg, lang).find('{'), std::string::npos) << lang << " " << render(*msg, lang);
  }
  const json args = m.value("args", json::object());
  for (const auto& [name, v] : args.items())
    if (v.is_object()) expect_catalogued(v);
}

// Every text of to_json's answer (summary, notes, interconnect reason, steps) is a catalogued code
// whose English rendering is the text beside it.
void expect_texts_catalogued(const json& j) {
  auto check = [](const json& text, const json& m) {
    expect_catalogued(m);
    auto msg = message_from_json(m);
    ASSERT_TRUE(msg.ok());
    EXPECT_EQ(text, render_en(*msg));
  };
  check(j["summary"], j["summary_message"]);
  check(j["interconnect_advice"]["reason"], j["interconnect_advice"]["reason_message"]);
  for (const auto& n : j["notes"]) check(n["text"], n["text_message"]);
  for (const auto& s : j["steps"]) check(s["text"], s["text_message"]);
}

// The message of the first step with `code`, or an empty message.
Message step_message(const FingerprintResult& r, const std::string& code) {
  for (const auto& s : r.steps)
    if (s.text.code == code) return s.text;
  return Message();
}

std::map<std::string, std::string> parse_errors(const json& body) {
  std::map<std::string, std::string> out;
  auto in = parse_fingerprint_input(body, cat());
  if (!in.ok())
    for (const auto& e : in.error().fields) out[e.field] = e.reason;
  return out;
}

// The example. 16 x A100 SXM4 80GB at 2.00 USD/GPU-h, 35 % GPU utilization, 70 % of the
// 1000 ms step waiting for the data loader, no communication, reading 500 MB/s.
//   W = 700 ms, N = 0, G = 1000 ms x min(35 %, 100 % - 70 % - 0 %) = 300 ms, H = 0.
//   Cause of the wait: storage (CPU not saturated). Read time R = T - N = 1000 ms.
//   Today: 16 x 2.00 = 32.00 USD/h; per step 32 x 1000 ms / 3.6e6 ms = 0.0088888 -> 0.008889.
//   16 GPUs + storage sized to need: G' = 300 ms, R' = 300 ms, T' = 300 ms; 32.00 x 0.3 s -> 0.002667.
//    8 GPUs, same storage: G' = 600 ms, R' = 1000 ms -> T' = 1000 ms; 16.00/h -> 0.004444 (same speed).
//    8 GPUs + faster storage: G' = 600 ms = R', T' = 600 ms; 16.00 x 0.6 s = 9.6 USD-s -> 0.002667.
//    4 GPUs: G' = 1200 ms > 1000 ms: slower than today, not an option.
//   8 and 16 with faster storage cost the same per step (9.6e12 micro-us); fewer GPUs win the tie.
//   Storage needed: 500 MB/s x 1000 ms / 600 ms = 833 MB/s (1.667x today's rate).
//   Speed-up 1000 / 600 = 1.667x; cost change (9.6 - 32) / 32 = -70.00 %.
TEST(Fingerprint, DataStarvedA100sGetFewerGpusAndFasterStorage) {
  auto r = run({{"gpu_model", "a100-sxm4-80gb"},
                {"gpu_count", 16},
                {"gpu_utilization_pct", 35},
                {"data_wait_share_pct", 70},
                {"nccl_share_pct", 0},
                {"step_time_ms", 1000},
                {"storage_io_mb_per_s", 500},
                {"price_per_gpu_hour", "2.00"}});
  EXPECT_EQ(r.bottleneck, WorkloadBottleneck::kIo);
  EXPECT_EQ(r.data_wait_cause, "storage");
  EXPECT_EQ(r.parts.gpu, 300);
  EXPECT_EQ(r.parts.data_wait, 700);
  EXPECT_EQ(r.parts.host, 0);
  EXPECT_EQ(r.current.step_us, 1'000'000);
  EXPECT_EQ(r.current.cost_per_step.micros(), 8'889);
  EXPECT_EQ(r.recommended.gpu_model, "a100-sxm4-80gb");
  EXPECT_EQ(r.recommended.gpu_count, 8);
  EXPECT_TRUE(r.recommended.faster_storage);
  EXPECT_EQ(r.recommended.required_read_bytes_per_s, 833'333'333);
  EXPECT_EQ(r.recommended.required_read_speedup_permille, 1667);
  EXPECT_EQ(r.recommended.step_us, 600'000);
  EXPECT_EQ(r.recommended.cost_per_step.micros(), 2'667);
  EXPECT_EQ(r.recommended.cost_per_1000_steps.micros(), 2'666'667);
  EXPECT_EQ(r.speedup_permille, 1667);
  EXPECT_EQ(r.cost_change_bp, -7000);
  // Both cheaper and faster, and the output says so.
  EXPECT_LT(r.recommended.cost_per_step.micros(), r.current.cost_per_step.micros());
  EXPECT_LT(r.recommended.step_us, r.current.step_us);
  const std::string en = render_en(r.summary), zh = render(r.summary, "zh");
  EXPECT_NE(en.find("use fewer GPUs: 8 instead of 16"), std::string::npos) << en;
  EXPECT_NE(en.find("faster storage reading at least 833 MB/s"), std::string::npos) << en;
  EXPECT_NE(en.find("1000 ms -> 600 ms"), std::string::npos) << en;
  EXPECT_NE(en.find("0.008889 USD -> 0.002667 USD (-70.00 %)"), std::string::npos) << en;
  EXPECT_NE(zh.find("减少卡数：16 -> 8"), std::string::npos) << zh;
  EXPECT_EQ(en,
            "Bottleneck: I/O (storage). Recommended: use fewer GPUs: 8 instead of 16; faster storage reading at least "
            "833 MB/s (1.667x today's read speed, e.g. local NVMe cache or a parallel file system). Expected: step "
            "1000 ms -> 600 ms (1.667x as fast), cost per step 0.008889 USD -> 0.002667 USD (-70.00 %).");
  EXPECT_EQ(zh,
            "瓶颈：I/O（存储）。建议：减少卡数：16 -> 8；更快的存储（读取至少 833 MB/s，为当前读取速度的 "
            "1.667x，如本地 NVMe 缓存或并行文件系统）。预计：步长 1000 ms -> 600 ms（速度 1.667x），每步成本 "
            "0.008889 USD -> 0.002667 USD（-70.00 %）。");
  ASSERT_TRUE(r.fastest_at_same_cost.has_value());  // 16 GPUs + faster storage: 300 ms, same cost
  EXPECT_EQ(r.fastest_at_same_cost->gpu_count, 16);
  EXPECT_EQ(r.fastest_at_same_cost->step_us, 300'000);
  json j = to_json(r);
  EXPECT_EQ(j["recommendation"]["cost_per_step"], "0.002667");
  EXPECT_EQ(j["current"]["cost_per_step"], "0.008889");
  EXPECT_EQ(j["recommendation"]["required_read_mb_per_s"], 833);
  EXPECT_EQ(j["bottleneck"], "io");
  EXPECT_EQ(j["summary"], en);
  EXPECT_EQ(j["summary_message"]["code"], "advisor.fingerprint.summary.recommended");
  EXPECT_EQ(j["summary_message"]["args"]["bottleneck"]["code"], "advisor.fingerprint.bottleneck.io");
  // Notes: fewer GPUs keep the batch; 16 GPUs with faster storage cost the same and run faster.
  ASSERT_EQ(r.notes.size(), 3u);
  EXPECT_EQ(render_en(r.notes[0]),
            "fewer GPUs keep the global batch (gradient accumulation), so per-GPU memory stays at today's peak");
  EXPECT_EQ(j["notes"][1]["text"],
            "16 x a100-sxm4-80gb with faster storage costs about the same per step (0.002667 USD) and runs faster "
            "(300 ms per step); the recommendation prefers fewer GPUs (less storage throughput, less communication, "
            "fewer failures)");
  EXPECT_EQ(
      render(r.notes[1], "zh"),
      "16 x a100-sxm4-80gb（配更快存储） 每步成本相近（0.002667 USD）且更快（每步 300 ms）；建议优先卡数更少的方案"
      "（所需存储吞吐更低、通信更少、故障面更小）");
  EXPECT_EQ(j["notes"][2]["text_message"]["code"], "advisor.fingerprint.note.no_offers");
  expect_texts_catalogued(j);
}

// Compute-bound: 8 x A100 SXM4 80GB at 2.00, 95 % busy, 3 % NCCL, no data wait, 200 of 312
// TFLOPS, 500 ms step. W = 0, N = 15 ms, G = 475 ms, H = 500 - 475 - 15 = 10 ms (both shares
// measured). No loss reaches 20 % and no bandwidth figure: compute. Compute efficiency 2000/3120
// = 641 per-mille. Fewer GPUs: 4 x -> G' = 950 ms, slower. Keep.
// H100 SXM5 (989 TFLOPS, NVLink 900 GB/s) at 8 GPUs: G' = 475 x 3120/9890 = 149.848 ms,
// N' = 15 x 600/900 = 10 ms, T' = 149.848 + 10 + 10 = 169.848 ms; break-even price
// 2.00 x 500 / 169.848 = 5.887617 USD/GPU-h.
TEST(Fingerprint, ComputeBoundKeepsWithoutOffersAndShowsBreakEvenPrices) {
  json body = {{"gpu_model", "a100-sxm4-80gb"}, {"gpu_count", 8},           {"gpu_utilization_pct", 95},
               {"nccl_share_pct", 3},           {"data_wait_share_pct", 0}, {"achieved_tflops", 200},
               {"cpu_utilization_pct", 40},     {"step_time_ms", 500},      {"price_per_gpu_hour", "2.00"}};
  auto r = run(body);
  EXPECT_EQ(r.bottleneck, WorkloadBottleneck::kCompute);
  EXPECT_EQ(r.parts.host, 20);
  EXPECT_EQ(r.roofline.compute_efficiency_permille, 641);
  EXPECT_EQ(r.recommended.label, "current_price");
  EXPECT_EQ(r.recommended.gpu_count, 8);
  EXPECT_EQ(r.cost_change_bp, 0);
  EXPECT_EQ(render_en(r.summary),
            "Bottleneck: compute. Keep the current configuration: no priced option is cheaper per step without being "
            "slower.");
  EXPECT_EQ(render(r.summary, "zh"), "瓶颈：算力。保持当前配置：没有更便宜且不更慢的已报价方案。");
  const UnpricedAlternative* h100 = nullptr;
  for (const auto& a : r.alternatives)
    if (a.gpu_model == "h100-sxm5-80gb") h100 = &a;
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(h100->step_us, 169'848);
  EXPECT_EQ(h100->speedup_permille, 2944);
  EXPECT_EQ(h100->break_even_price_per_gpu_hour.micros(), 5'887'617);
  EXPECT_EQ(r.interconnect_advice, GpuInterconnect::kPcie);  // 3 % communication
  EXPECT_EQ(render_en(r.interconnect_reason), "communication is only 3.0 % of the step (< 10.0 %): PCIe is enough");
  EXPECT_EQ(render(r.interconnect_reason, "zh"), "通信仅占步长的 3.0 %（< 10.0 %）：PCIe 足够");
  expect_texts_catalogued(to_json(r));
}

// Same job with an H100 SXM5 offer at 4.00 (below the 5.89 break-even). 8 x H100: 169.848 ms,
// 32.00/h -> key 32e6 x 169848 = 5.435e12 vs today's 16e6 x 500000 = 8e12.
// 4 x H100: G' = 475 x 8/4 x 3120/9890 = 299.697 ms, H' = 20 ms,
// N' = 15 x (3/4)/(7/8) x 600/900 = 8.571 ms, T' = 328.268 ms; 16.00/h -> 5.252e12: cheaper still.
// 2 x H100: G' = 599.4 ms > 500 ms: slower. Recommended 4 x H100: 1.523x as fast,
// (5.252288e12 - 8e12)/8e12 = -34.35 %.
TEST(Fingerprint, ComputeBoundMovesToAFasterGpuWhenItIsCheaperPerStep) {
  json body = {{"gpu_model", "a100-sxm4-80gb"},
               {"gpu_count", 8},
               {"gpu_utilization_pct", 95},
               {"nccl_share_pct", 3},
               {"data_wait_share_pct", 0},
               {"achieved_tflops", 200},
               {"step_time_ms", 500},
               {"price_per_gpu_hour", "2.00"},
               {"offers", {{{"name", "acme-h100"}, {"gpu_model", "H100-SXM"}, {"price_per_gpu_hour", "4.00"}}}}};
  auto r = run(body);
  EXPECT_EQ(r.bottleneck, WorkloadBottleneck::kCompute);
  EXPECT_EQ(r.recommended.label, "acme-h100");
  EXPECT_EQ(r.recommended.gpu_model, "h100-sxm5-80gb");
  EXPECT_EQ(r.recommended.gpu_count, 4);
  EXPECT_EQ(r.recommended.gpu_us, 299'697);
  EXPECT_EQ(r.recommended.communication_us, 8'571);
  EXPECT_EQ(r.recommended.step_us, 328'268);
  EXPECT_EQ(r.recommended.cost_per_step.micros(), 1'459);  // 16e6 x 328268 / 3.6e9 = 1458.97
  EXPECT_EQ(r.speedup_permille, 1523);
  EXPECT_EQ(r.cost_change_bp, -3435);
}

// Communication-bound: 8 x A100 PCIe 80GB (PCIe gen 4: 64 GB/s) at 1.50, 55 % busy, 40 % NCCL,
// no data wait, 1000 ms. G = 550, N = 400, H = 50 ms. Bottleneck communication (400 >= 200).
// Offer A100 SXM4 80GB (NVLink 600 GB/s) at 1.80: G' = 550 (same 312 TFLOPS), H' = 50,
// N' = 400 x 64/600 = 42.667 ms, T' = 642.667 ms; 14.40/h x 0.642667 s -> 0.002571 vs
// 12.00/h x 1 s = 0.003333; (14.4e6 x 642667 - 12e12) / 12e12 = -22.88 %.
TEST(Fingerprint, CommunicationBoundPcieJobMovesToNvlink) {
  json body = {{"gpu_model", "a100-pcie-80gb"},
               {"gpu_count", 8},
               {"gpu_utilization_pct", 55},
               {"nccl_share_pct", 40},
               {"data_wait_share_pct", 0},
               {"step_time_ms", 1000},
               {"peak_memory_mib", 40000},
               {"price_per_gpu_hour", "1.50"},
               {"offers", {{{"gpu_model", "a100-sxm4-80gb"}, {"price_per_gpu_hour", "1.80"}}}}};
  auto r = run(body);
  EXPECT_EQ(r.bottleneck, WorkloadBottleneck::kCommunication);
  EXPECT_EQ(r.current.interconnect, GpuInterconnect::kPcie);
  EXPECT_EQ(r.current.link_gbps, 64);
  EXPECT_EQ(r.interconnect_advice, GpuInterconnect::kNvlink);
  EXPECT_EQ(r.recommended.label, "offers[0]");
  EXPECT_EQ(r.recommended.gpu_model, "a100-sxm4-80gb");
  EXPECT_EQ(r.recommended.interconnect, GpuInterconnect::kNvlink);
  EXPECT_EQ(r.recommended.gpu_count, 8);
  EXPECT_EQ(r.recommended.communication_us, 42'667);
  EXPECT_EQ(r.recommended.step_us, 642'667);
  EXPECT_EQ(r.current.cost_per_step.micros(), 3'333);
  EXPECT_EQ(r.recommended.cost_per_step.micros(), 2'571);
  EXPECT_EQ(r.cost_change_bp, -2288);
  EXPECT_EQ(r.speedup_permille, 1556);
  EXPECT_NE(render_en(r.summary).find("Recommended: move to a100-sxm4-80gb (nvlink). Expected:"), std::string::npos)
      << render_en(r.summary);
  EXPECT_NE(render(r.summary, "zh").find("建议：换用 a100-sxm4-80gb（nvlink）。预计："), std::string::npos)
      << render(r.summary, "zh");
  json j = to_json(r);
  EXPECT_EQ(j["interconnect_advice"]["interconnect"], "nvlink");
  EXPECT_EQ(j["interconnect_advice"]["reason"],
            "communication is 40.0 % of the step (>= 10.0 %): SXM with NVLink/NVSwitch (300-1800 GB/s per GPU vs "
            "32-128 GB/s for PCIe) shrinks it");
  EXPECT_EQ(j["interconnect_advice"]["reason_message"]["code"], "advisor.fingerprint.interconnect.high_communication");
  EXPECT_EQ(j["interconnect_advice"]["reason_message"]["args"]["share"], "40.0 %");
  EXPECT_NE(render(r.interconnect_reason, "zh").find("通信占步长的 40.0 %（>= 10.0 %）"), std::string::npos)
      << render(r.interconnect_reason, "zh");
  expect_texts_catalogued(j);
}

// Memory-bound: 8 x A100 PCIe 80GB at 1.50, 95 % busy but 40 TFLOPS (12.8 % of 312) while moving
// 1700 of 1935 GB/s (87.9 %), 2 % NCCL, 200 ms. AI = 400/1700 x 100 = 23.5 FLOP/B < ridge
// 3120/1935 x 100 = 161.2: memory bandwidth. Speed = min(peak x 1700, 400 x bandwidth):
// A100 PCIe 774000, H100 SXM5 1340000, H200 1920000.
// G = 190, N = 4, H = 6 ms.  8 x H200 (3.50): G' = 190 x 774/1920 = 76.594, N' = 4 x 64/900 =
// 0.284, T' = 82.878 ms, key 28e6 x 82878 = 2.3206e12.  4 x H200: G' = 153.188 (153187.5 half to
// even), H' = 12, N' = 4 x (3/4)/(7/8) x 64/900 = 0.244, T' = 165.432 ms, key 14e6 x 165432 =
// 2.3160e12: the cheapest, 8 x H200 within 1 % -> fewer GPUs. 8 x H100 (2.80): G' = 109.746,
// T' = 116.030, key 2.599e12 > today's 12e6 x 200000 = 2.4e12. Change: -3.50 %, 1.209x as fast
// (a change: 5 % faster at no higher cost).
TEST(Fingerprint, MemoryBoundJobMovesToHigherBandwidthHbm) {
  json body = {{"gpu_model", "a100-pcie-80gb"},
               {"gpu_count", 8},
               {"gpu_utilization_pct", 95},
               {"achieved_tflops", 40},
               {"memory_bandwidth_used_gbps", 1700},
               {"nccl_share_pct", 2},
               {"data_wait_share_pct", 0},
               {"step_time_ms", 200},
               {"price_per_gpu_hour", "1.50"},
               {"offers",
                {{{"gpu_model", "h100-sxm5-80gb"}, {"price_per_gpu_hour", "2.80"}},
                 {{"gpu_model", "h200-sxm-141gb"}, {"price_per_gpu_hour", "3.50"}}}}};
  auto r = run(body);
  EXPECT_EQ(r.roofline.compute_efficiency_permille, 128);
  EXPECT_EQ(r.roofline.bandwidth_efficiency_permille, 879);
  EXPECT_EQ(r.roofline.arithmetic_intensity_x10, 235);
  EXPECT_EQ(r.roofline.ridge_point_x10, 1612);
  EXPECT_TRUE(r.roofline.memory_bound);
  EXPECT_EQ(r.bottleneck, WorkloadBottleneck::kMemoryBandwidth);
  EXPECT_EQ(r.recommended.gpu_model, "h200-sxm-141gb");
  EXPECT_EQ(r.recommended.gpu_count, 4);
  EXPECT_EQ(r.recommended.gpu_us, 153'188);
  EXPECT_EQ(r.recommended.step_us, 165'432);
  EXPECT_EQ(r.cost_change_bp, -350);
  EXPECT_EQ(r.speedup_permille, 1209);
  ASSERT_TRUE(r.fastest_at_same_cost.has_value());
  EXPECT_EQ(r.fastest_at_same_cost->gpu_count, 8);
  EXPECT_EQ(r.fastest_at_same_cost->step_us, 82'878);
}

// CPU-bound: 4 x A100 SXM4 80GB at 2.00, GPU 20 % busy, CPU 100 % on 4 cores per GPU, no data
// wait, no NCCL, 1000 ms. G = 200, H = 800 ms -> cpu. Cores explored: 4, 8, 16 (default max).
// 4 GPUs x 16 cores: H' = 800 x 4/16 = 200, T' = 400 ms, key 8e6 x 4e5 = 3.2e12.
// 2 GPUs x 16 cores: G' = 400, H' = 800 x (4/2) x (4/16) = 400, T' = 800 ms, key 4e6 x 8e5 =
// 3.2e12: same cost, fewer GPUs. 2 x 8 cores: 400 + 800 > 1000: slower. Change -60.00 %.
TEST(Fingerprint, CpuBoundJobGetsMoreCoresPerGpu) {
  json body = {{"gpu_model", "a100-sxm4-80gb"}, {"gpu_count", 4},         {"gpu_utilization_pct", 20},
               {"cpu_utilization_pct", 100},    {"cpu_cores_per_gpu", 4}, {"nccl_share_pct", 0},
               {"data_wait_share_pct", 0},      {"step_time_ms", 1000},   {"price_per_gpu_hour", "2.00"}};
  auto r = run(body);
  EXPECT_EQ(r.bottleneck, WorkloadBottleneck::kCpu);
  EXPECT_EQ(r.parts.host, 800);
  EXPECT_EQ(r.recommended.cpu_cores_per_gpu, 16);
  EXPECT_EQ(r.recommended.gpu_count, 2);
  EXPECT_EQ(r.recommended.step_us, 800'000);
  EXPECT_EQ(r.cost_change_bp, -6000);
  EXPECT_NE(render_en(r.summary).find("more CPU cores: 16 per GPU instead of 4"), std::string::npos)
      << render_en(r.summary);
  EXPECT_NE(render(r.summary, "zh").find("增加 CPU 核数：每卡 4 -> 16 核"), std::string::npos)
      << render(r.summary, "zh");
  // Priced cores: 0.05 per extra core-hour. 4 GPUs x 16: 8.00 + 4 x 12 x 0.05 = 10.40/h x 0.4 s
  // -> key 4.16e12; 2 x 16: 4.00 + 2 x 12 x 0.05 = 5.20/h x 0.8 s -> 4.16e12 (a tie: fewer GPUs);
  // 4 x 8: 8.00 + 0.80 = 8.80/h, H' = 400, T' = 600 ms -> 5.28e12. Cost -48.00 %.
  body["price_per_cpu_core_hour"] = "0.05";
  auto priced = run(body);
  EXPECT_EQ(priced.recommended.gpu_count, 2);
  EXPECT_EQ(priced.recommended.cpu_cores_per_gpu, 16);
  EXPECT_EQ(priced.recommended.cost_per_hour.micros(), 5'200'000);
  EXPECT_EQ(priced.cost_change_bp, -4800);
}

TEST(Fingerprint, CpuBoundDataLoaderScalesWithCoresNotStorage) {
  // 8 GPUs, 40 % busy, 50 % waiting for the loader while the CPU is at 95 %: the loader is
  // decoding-bound (cpu), so faster storage is not an option; cores are.
  auto r = run({{"gpu_model", "a100-sxm4-80gb"},
                {"gpu_count", 8},
                {"gpu_utilization_pct", 40},
                {"data_wait_share_pct", 50},
                {"nccl_share_pct", 5},
                {"cpu_utilization_pct", 95},
                {"cpu_cores_per_gpu", 8},
                {"step_time_ms", 1000},
                {"price_per_gpu_hour", "2.00"}});
  EXPECT_EQ(r.data_wait_cause, "cpu");
  EXPECT_EQ(r.bottleneck, WorkloadBottleneck::kCpu);
  EXPECT_FALSE(r.recommended.faster_storage);
  EXPECT_EQ(r.recommended.cpu_cores_per_gpu, 16);
  for (const auto& o : r.options) EXPECT_FALSE(o.faster_storage);
}

// Metered: 8 x A100 PCIe 80GB (alias "A100-80GB"), mean utilization 350 per-mille, 3.6e12 bytes
// over one hour -> 1e9 B/s. Nothing explains the 65 % idle: undetermined. With the storage's
// capacity (1000 MB/s, read at 100 %) the idle time is attributed to storage: io.
TEST(Fingerprint, ProfileFromMeteredSamples) {
  MeteredJobUsage u{.avg_gpu_utilization_permille = 350,
                    .peak_memory_mib = 30'000,
                    .storage_io_bytes = 3'600'000'000'000,
                    .duration_ms = 3'600'000};
  auto in = fingerprint_input_from_metered("A100-80GB", 8, Money(2'000'000, Currency::kUSD), u, cat());
  ASSERT_TRUE(in.ok()) << in.error().message;
  EXPECT_EQ(in->gpu_model, "a100-pcie-80gb");
  EXPECT_EQ(in->source, "metered");
  EXPECT_EQ(in->io_bytes_per_s, 1'000'000'000);
  auto r = compute_fingerprint(*in, cat());
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->step_time_given);
  EXPECT_EQ(r->step_us, 3'600'000'000);
  EXPECT_EQ(r->parts.unattributed, 650);
  EXPECT_EQ(r->bottleneck, WorkloadBottleneck::kUndetermined);
  EXPECT_EQ(r->recommended.label, "current_price");
  ASSERT_FALSE(r->notes.empty());
  EXPECT_EQ(render_en(r->notes[0]),
            "65.0 % of the step is idle time no measurement explains: give data_wait_share_pct, nccl_share_pct and "
            "cpu_utilization_pct (from the framework profiler) to attribute it");
  EXPECT_NE(render(r->notes[0], "zh").find("步长中有 65.0 % 是无法归因的空闲"), std::string::npos)
      << render(r->notes[0], "zh");
  EXPECT_EQ(to_json(*r)["unit"], "hour_of_current_work");
  EXPECT_EQ(render_en(step_message(*r, "advisor.fingerprint.step.step_time_hour")),
            "No step_time_ms: the unit of work (\"step\") is one hour of today's job");
  expect_texts_catalogued(to_json(*r));
  EXPECT_EQ(r->current.cost_per_step.micros(), 16'000'000);  // one hour of 8 x 2.00

  FingerprintInput with_cap = *in;
  with_cap.storage_read_bytes_per_s = 1'000'000'000;
  auto r2 = compute_fingerprint(with_cap, cat());
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(r2->parts.data_wait, 650);
  EXPECT_EQ(r2->bottleneck, WorkloadBottleneck::kIo);

  auto unknown = fingerprint_input_from_metered("no-such-gpu", 8, Money(1, Currency::kUSD), u, cat());
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().fields[0].coded.code, "advisor.fingerprint.unknown_gpu_model");
  EXPECT_EQ(unknown.error().message, "gpu_model: unknown GPU model 'no-such-gpu'");
  EXPECT_EQ(render(unknown.error().detail, "zh"), "gpu_model：未知的 GPU 型号“no-such-gpu”");
  u.duration_ms = 0;
  auto no_time = fingerprint_input_from_metered("A100-80GB", 8, Money(1, Currency::kUSD), u, cat());
  ASSERT_FALSE(no_time.ok());
  EXPECT_EQ(no_time.error().fields[0].coded.code, "advisor.fingerprint.positive");
  EXPECT_EQ(no_time.error().fields[0].reason, "must be positive");
}

TEST(Fingerprint, FasterStorageWithAGivenCapacityAndPrice) {
  // The example with storage offered at 1000 MB/s for 3.00 USD/h. 16 GPUs: R' = 500 MB/s x 1 s /
  // 1000 MB/s = 500 ms, T' = max(300, 500) = 500 ms, (32 + 3) x 0.5 s -> key 17.5e12.
  // 8 GPUs: T' = max(600, 500) = 600 ms, (16 + 3) x 0.6 -> 11.4e12: cheapest.
  auto r = run({{"gpu_model", "a100-sxm4-80gb"},
                {"gpu_count", 16},
                {"gpu_utilization_pct", 35},
                {"data_wait_share_pct", 70},
                {"step_time_ms", 1000},
                {"storage_io_mb_per_s", 500},
                {"price_per_gpu_hour", "2.00"},
                {"faster_storage", {{"capacity_mb_per_s", 1000}, {"price_per_hour", "3.00"}}}});
  EXPECT_EQ(r.recommended.gpu_count, 8);
  EXPECT_TRUE(r.recommended.faster_storage);
  EXPECT_EQ(r.recommended.read_us, 500'000);
  EXPECT_EQ(r.recommended.step_us, 600'000);
  EXPECT_EQ(r.recommended.cost_per_hour.micros(), 19'000'000);
  EXPECT_EQ(r.cost_change_bp, -6438);  // (11.4 - 32) / 32 = -64.375 % -> -6438 bp (half to even)
}

TEST(Fingerprint, RejectsBadInputWithFieldPaths) {
  auto e = parse_errors({{"gpu_model", "a100-sxm4-80gb"},
                         {"gpu_count", 0},
                         {"gpu_utilization_pct", 120},
                         {"nccl_share_pct", 60},
                         {"data_wait_share_pct", 60},
                         {"price_per_gpu_hour", "-1"},
                         {"achieved_tflops", 400},
                         {"step_time_ms", 1.5},
                         {"typo", 1},
                         {"offers", {{{"gpu_model", "nope"}, {"price_per_gpu_hour", 2.5}}}}});
  EXPECT_EQ(e["gpu_count"], "must be at least 1 (got 0)");
  EXPECT_EQ(e["gpu_utilization_pct"], "must be at most 100 (got 120)");
  EXPECT_EQ(e["data_wait_share_pct"], "nccl_share_pct + data_wait_share_pct must not exceed 100");
  EXPECT_EQ(e["price_per_gpu_hour"], "must not be negative");
  EXPECT_NE(e["achieved_tflops"].find("exceeds the FP16 peak"), std::string::npos);
  EXPECT_EQ(e["step_time_ms"], "must be a whole number");
  EXPECT_EQ(e["typo"], "unknown field");
  EXPECT_NE(e["offers[0].gpu_model"].find("unknown GPU model"), std::string::npos);
  EXPECT_NE(e["offers[0].price_per_gpu_hour"].find("floating-point"), std::string::npos);

  e = parse_errors({{"gpu_model", "a100-sxm4-80gb"},
                    {"gpu_count", 1},
                    {"price_per_gpu_hour", "0"},
                    {"nccl_share_pct", 5},
                    {"peak_memory_mib", 90000},
                    {"memory_bandwidth_used_gbps", 3000},
                    {"faster_storage", {{"capacity_mb_per_s", 100}}}});
  EXPECT_EQ(e["gpu_utilization_pct"], "is required (or gpu_utilization_permille, or achieved_tflops)");
  EXPECT_EQ(e["price_per_gpu_hour"], "must be greater than 0");
  EXPECT_NE(e["nccl_share_pct"].find("single GPU"), std::string::npos);
  EXPECT_NE(e["peak_memory_mib"].find("81920 MiB"), std::string::npos);
  EXPECT_NE(e["memory_bandwidth_used_gbps"].find("2039 GB/s"), std::string::npos);
  EXPECT_NE(e["faster_storage.capacity_mb_per_s"].find("needs storage_io_mb_per_s"), std::string::npos);

  e = parse_errors({{"gpu_model", "a100-pcie-80gb"},
                    {"gpu_count", 8},
                    {"gpu_utilization_pct", 50},
                    {"gpu_utilization_permille", 500},
                    {"interconnect", "nvlink"},
                    {"price_per_gpu_hour", "1"}});
  EXPECT_NE(e["gpu_utilization_permille"].find("not both"), std::string::npos);
  EXPECT_NE(e["interconnect"].find("NVLink bridges join two PCIe cards"), std::string::npos);
  EXPECT_EQ(parse_errors(json::array()).count(""), 1u);

  // The reasons are message codes, worded in the reader's language.
  auto in = parse_fingerprint_input({{"gpu_model", "a100-pcie-80gb"},
                                     {"gpu_count", 8},
                                     {"gpu_utilization_pct", 50},
                                     {"interconnect", "nvlink"},
                                     {"peak_memory_mib", 90000},
                                     {"price_per_gpu_hour", "1"}},
                                    cat());
  ASSERT_FALSE(in.ok());
  std::map<std::string, FieldError> f;
  for (const auto& fe : in.error().fields) f[fe.field] = fe;
  EXPECT_EQ(f["interconnect"].coded.code, "advisor.fingerprint.nvlink_bridge_two");
  EXPECT_EQ(f["interconnect"].reason,
            "NVLink bridges join two PCIe cards; with 8 cards the all-reduce crosses PCIe (use \"pcie\")");
  EXPECT_EQ(render(f["interconnect"].coded, "zh"),
            "NVLink 桥只能连接两张 PCIe 卡；8 张卡时 all-reduce 要经过 PCIe（请使用 \"pcie\"）");
  EXPECT_EQ(f["peak_memory_mib"].coded.code, "advisor.fingerprint.peak_memory_exceeds");
  EXPECT_EQ(f["peak_memory_mib"].reason, "exceeds the memory of one a100-pcie-80gb (81920 MiB)");
  EXPECT_EQ(render(f["peak_memory_mib"].coded, "zh"), "超过了单张 a100-pcie-80gb 的显存（81920 MiB）");
}

TEST(Fingerprint, OutputCarriesItsArithmeticAsMessageCodes) {
  auto r = run({{"gpu_model", "a100-sxm4-80gb"},
                {"gpu_count", 16},
                {"gpu_utilization_pct", 35},
                {"data_wait_share_pct", 70},
                {"step_time_ms", 1000},
                {"price_per_gpu_hour", "2.00"}});
  json j = to_json(r);
  ASSERT_TRUE(j["steps"].is_array());
  ASSERT_GE(j["steps"].size(), 10u);
  for (const auto& s : j["steps"]) {
    EXPECT_FALSE(s["text"].get<std::string>().empty());
    EXPECT_TRUE(s["text_message"].is_object());
    EXPECT_FALSE(s["formula"].get<std::string>().empty());
    EXPECT_TRUE(s.contains("value"));
    EXPECT_FALSE(s.contains("en"));
  }
  expect_texts_catalogued(j);
  EXPECT_EQ(j["steps"][1]["formula"], "W = 1000 ms x 70.0 % = 700 ms");
  EXPECT_EQ(j["steps"][1]["text"], "Exposed data-loader wait W = T x data wait share");
  EXPECT_EQ(j["steps"][1]["text_message"]["code"], "advisor.fingerprint.step.data_wait");
  EXPECT_EQ(render(r.steps[1].text, "zh"), "数据加载等待 W = T x 数据等待占比");
  // A step with a translated argument: what "speed" means (peak FP16 here: no FLOP/s or bytes/s given).
  const Message g = step_message(r, "advisor.fingerprint.step.new_gpu_part");
  EXPECT_EQ(render_en(g),
            "New GPU part G' = G x (GPUs now / GPUs new) x (speed now / speed new), speed = peak FP16 TFLOPS");
  EXPECT_EQ(render(g, "zh"), "新 GPU 时间 G' = G x (现卡数 / 新卡数) x (现速度 / 新速度)，速度 = FP16 峰值算力");
  EXPECT_FALSE(j["summary"].get<std::string>().empty());
  EXPECT_NE(render(r.summary, "zh").find("瓶颈：I/O（存储）。"), std::string::npos) << render(r.summary, "zh");
}

// Properties over a grid of profiles: today's option reproduces today's step; the parts sum to
// the step; the recommendation is never slower nor dearer per step than today.
TEST(Fingerprint, PropertiesOverAGridOfProfiles) {
  int checked = 0;
  for (int64_t n : {1, 2, 8, 24})
    for (int64_t util : {5, 40, 90})
      for (int64_t wait : {0, 30, 60})
        for (int64_t nccl : {0, 25})
          for (int64_t cpu : {30, 100}) {
            if (n == 1 && nccl > 0) continue;
            json body = {{"gpu_model", "a100-pcie-80gb"},
                         {"gpu_count", n},
                         {"gpu_utilization_pct", util},
                         {"data_wait_share_pct", wait},
                         {"nccl_share_pct", nccl},
                         {"cpu_utilization_pct", cpu},
                         {"cpu_cores_per_gpu", 4},
                         {"step_time_ms", 730},
                         {"storage_io_mb_per_s", 300},
                         {"price_per_gpu_hour", "1.37"},
                         {"offers", {{{"gpu_model", "h100-sxm5-80gb"}, {"price_per_gpu_hour", "3.10"}}}}};
            auto r = run(body);
            const auto& p = r.parts;
            EXPECT_EQ(p.gpu + p.data_wait + p.communication + p.host + p.unattributed, 1000);
            EXPECT_EQ(r.current.step_us, 730'000) << body.dump();
            EXPECT_LE(r.recommended.step_us, 730'000) << body.dump();
            EXPECT_LE(static_cast<__int128>(r.recommended.cost_per_hour.micros()) * r.recommended.step_us,
                      static_cast<__int128>(r.current.cost_per_hour.micros()) * r.current.step_us)
                << body.dump();
            for (const auto& o : r.options) EXPECT_LE(o.step_us, 730'000);
            expect_texts_catalogued(to_json(r));
            ++checked;
          }
  EXPECT_GT(checked, 100);
}

}  // namespace
}  // namespace gpurent
