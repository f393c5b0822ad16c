// Workload fingerprint, output side: the explanation (steps, summary, notes) and to_json.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "advisor/advisor_util.h"
#include "core/json_put.h"
#include "advisor/fingerprint.h"
#include "advisor/fingerprint_internal.h"

namespace gpurent {
using namespace fingerprint_internal;

namespace {

std::string fmt_bp(int64_t bp) { return fixed(bp, 100, 2, false) + " %"; }    // -7000 -> "-70.00 %"
std::string fmt_ms(int64_t us) { return fixed(us, 1000, 3, true) + " ms"; }   // 642857 -> "642.857 ms"
std::string fmt_times(int64_t pm) { return fixed(pm, 1000, 3, true) + "x"; }  // 1667 -> "1.667x"
std::string fmt_x10(int64_t x10) { return fixed(x10, 10, 1, false); }         // 153 -> "15.3"
std::string fmt_mbps(int64_t bps) { return std::to_string(div_half_even_sat(bps, kBytesPerMb)) + " MB/s"; }
std::string money_str(const Money& m) { return m.to_string(); }

const char* bottleneck_en(WorkloadBottleneck b) {
  switch (b) {
    case WorkloadBottleneck::kCompute:
      return "compute";
    case WorkloadBottleneck::kMemoryBandwidth:
      return "memory bandwidth";
    case WorkloadBottleneck::kCommunication:
      return "communication";
    case WorkloadBottleneck::kIo:
      return "I/O (storage)";
    case WorkloadBottleneck::kCpu:
      return "CPU (host side)";
    case WorkloadBottleneck::kUndetermined:
      return "undetermined (unexplained idle time)";
  }
  return "?";
}

const char* bottleneck_zh(WorkloadBottleneck b) {
  switch (b) {
    case WorkloadBottleneck::kCompute:
      return "算力";
    case WorkloadBottleneck::kMemoryBandwidth:
      return "显存带宽";
    case WorkloadBottleneck::kCommunication:
      return "通信";
    case WorkloadBottleneck::kIo:
      return "I/O（存储）";
    case WorkloadBottleneck::kCpu:
      return "CPU（主机侧）";
    case WorkloadBottleneck::kUndetermined:
      return "无法判定（有未解释的空闲时间）";
  }
  return "?";
}

std::string perf_name_en(PerfMode m) {
  switch (m) {
    case PerfMode::kRoofline:
      return "attainable FLOP/s on the roofline, min(peak FP16, AI x memory bandwidth)";
    case PerfMode::kBandwidth:
      return "memory bandwidth (the GPU part is memory-bound)";
    case PerfMode::kPeak:
      return "peak FP16 TFLOPS";
    case PerfMode::kNone:
      return "(no datasheet peak: other models are not compared)";
  }
  return "";
}

std::string perf_name_zh(PerfMode m) {
  switch (m) {
    case PerfMode::kRoofline:
      return "屋顶线可达算力 min(FP16 峰值, 算术强度 x 显存带宽)";
    case PerfMode::kBandwidth:
      return "显存带宽（GPU 部分受带宽限制）";
    case PerfMode::kPeak:
      return "FP16 峰值算力";
    case PerfMode::kNone:
      return "（无规格峰值：不与其他型号比较）";
  }
  return "";
}

json option_json(const FingerprintOption& o) {
  json j = {{"label", o.label},
            {"gpu_model", o.gpu_model},
            {"gpu_count", o.gpu_count},
            {"interconnect", enum_name(kGpuInterconnectNames, o.interconnect)},
            {"link_gbps", o.link_gbps},
            {"faster_storage", o.faster_storage},
            {"gpu_us", o.gpu_us},
            {"host_us", o.host_us},
            {"read_us", o.read_us},
            {"communication_us", o.communication_us},
            {"step_us", o.step_us},
            {"cost_per_hour", o.cost_per_hour.amount_string()},
            {"cost_per_step", o.cost_per_step.amount_string()},
            {"cost_per_1000_steps", o.cost_per_1000_steps.amount_string()}};
  if (o.faster_storage) {
    j["required_read_speedup_permille"] = o.required_read_speedup_permille;
    if (o.required_read_bytes_per_s)
      j["required_read_mb_per_s"] = div_half_even_sat(*o.required_read_bytes_per_s, kBytesPerMb);
  }
  put_opt(j, "cpu_cores_per_gpu", o.cpu_cores_per_gpu);
  return j;
}

}  // namespace

namespace {

// One line of the arithmetic shown to the user, in English and 简体中文, with its formula.
void step(FingerprintResult& r, std::string en, std::string zh, std::string formula, json value) {
  r.steps.push_back({std::move(en), std::move(zh), std::move(formula), std::move(value)});
}

// Today's step: its parts, the roofline, the bottleneck and the read time.
void explain_today(const Analysis& a, FingerprintResult& r) {
  const FingerprintInput& in = *a.in;
  const FingerprintParts& p = r.parts;
  const std::string T = fmt_ms(a.T);
  if (r.step_time_given)
    step(r, "Step time today (T)", "当前步长 T", "T = " + T, a.T);
  else
    step(r, "No step_time_ms: the unit of work (\"step\") is one hour of today's job",
         "未给 step_time_ms：以当前作业一小时的工作量为一“步”", "T = 3600000 ms", a.T);
  step(r, "Exposed data-loader wait W = T x data wait share", "数据加载等待 W = T x 数据等待占比",
       "W = " + T + " x " + fmt_pm(p.data_wait) + " = " + fmt_ms(a.W), a.W);
  step(r, "Exposed communication N = T x NCCL share", "通信时间 N = T x NCCL 占比",
       "N = " + T + " x " + fmt_pm(p.communication) + " = " + fmt_ms(a.N), a.N);
  step(r, "GPU busy G = T x min(GPU utilization, 100 % - W share - N share)",
       "GPU 忙碌 G = T x min(GPU 利用率, 100 % - W 占比 - N 占比)",
       "G = " + T + " x " + fmt_pm(p.gpu) + " = " + fmt_ms(a.G), a.G);
  if (a.H > 0)
    step(r, "Host-side time H = T - W - N - G (CPU work the GPU waits for)",
         "主机侧时间 H = T - W - N - G（GPU 等待 CPU 的时间）",
         "H = " + T + " x " + fmt_pm(p.host) + " = " + fmt_ms(a.H), a.H);
  if (a.X > 0)
    step(r, "Unexplained idle X = T - W - N - G (no measurement attributes it)",
         "未解释空闲 X = T - W - N - G（没有测量能归因）",
         "X = " + T + " x " + fmt_pm(p.unattributed) + " = " + fmt_ms(a.X), a.X);
  const FingerprintRoofline& rf = r.roofline;
  if (rf.compute_efficiency_permille)
    step(r, "Compute efficiency = achieved FLOP/s / catalog peak FP16", "算力效率 = 实测 FLOP/s / 规格 FP16 峰值",
         fmt_x10(*in.achieved_tflops_x10) + " / " + fmt_x10(*rf.peak_tflops_x10) +
             " TFLOPS = " + fmt_pm(*rf.compute_efficiency_permille),
         *rf.compute_efficiency_permille);
  if (rf.bandwidth_efficiency_permille)
    step(r, "Memory bandwidth use = achieved bytes/s / catalog peak bandwidth",
         "显存带宽利用 = 实测字节/秒 / 规格峰值带宽",
         std::to_string(*in.memory_bandwidth_used_gbps) + " / " + std::to_string(*rf.peak_bandwidth_gbps) +
             " GB/s = " + fmt_pm(*rf.bandwidth_efficiency_permille),
         *rf.bandwidth_efficiency_permille);
  if (rf.arithmetic_intensity_x10)
    step(r, "Arithmetic intensity AI = achieved FLOP/s / achieved bytes/s (FLOP per byte)",
         "算术强度 AI = 实测 FLOP/s / 实测字节/秒（每字节 FLOP）",
         "AI = " + fmt_x10(*in.achieved_tflops_x10) + " TFLOPS / " + std::to_string(*in.memory_bandwidth_used_gbps) +
             " GB/s = " + fmt_x10(*rf.arithmetic_intensity_x10) + " FLOP/B",
         fmt_x10(*rf.arithmetic_intensity_x10));
  if (rf.ridge_point_x10)
    step(r, "Ridge point = peak FP16 / peak bandwidth: below it a kernel is memory-bound",
         "屋脊点 = FP16 峰值 / 峰值带宽：低于它即受带宽限制",
         "ridge = " + fmt_x10(*rf.peak_tflops_x10) + " TFLOPS / " + std::to_string(*rf.peak_bandwidth_gbps) +
             " GB/s = " + fmt_x10(*rf.ridge_point_x10) + " FLOP/B",
         fmt_x10(*rf.ridge_point_x10));
  {
    std::string f = "losses: communication " + fmt_pm(p.communication) + ", data wait " + fmt_pm(p.data_wait) +
                    (r.data_wait_cause.empty() ? "" : " (" + r.data_wait_cause + ")") + ", host " + fmt_pm(p.host) +
                    ", unexplained " + fmt_pm(p.unattributed) + "; threshold " + fmt_pm(kLossThresholdPermille) +
                    "; GPU part " + (rf.memory_bound ? "memory-bound" : "compute-bound") + " -> " +
                    enum_name(kWorkloadBottleneckNames, r.bottleneck);
    step(r, 
        "Bottleneck = the largest loss if it is at least 20 % of the step, else what bounds the GPU part "
        "(memory bandwidth when AI < ridge and bytes/s >= 60 % of peak, else compute)",
        "瓶颈 = 占步长至少 20 % 的最大损失项；否则看 GPU 部分（AI < 屋脊点且带宽利用 >= 60 % 为显存带宽，否则为算力）",
        f, enum_name(kWorkloadBottleneckNames, r.bottleneck));
  }
  if (a.R > 0)
    step(r, a.W > 0 ? "Read time per step R = T - N (loading overlaps compute; the wait is what it exceeds compute by)"
                 : "Read time per step R = T x job I/O rate / storage capacity",
         a.W > 0 ? "每步读取时间 R = T - N（加载与计算重叠，等待是超出计算的部分）"
                 : "每步读取时间 R = T x 作业 I/O 速率 / 存储能力",
         "R = " + fmt_ms(a.R), a.R);
}

// What the recommendation changes, part by part, and what a step then costs.
void explain_change(const Analysis& a, FingerprintResult& r) {
  const FingerprintInput& in = *a.in;
  const std::string T = fmt_ms(a.T);
  const FingerprintOption& c = r.current;
  const FingerprintOption& o = r.recommended;
  step(r, "Cost per step today = GPUs x price per GPU-hour x T / 1 h", "当前每步成本 = 卡数 x 每卡时单价 x T / 1 小时",
       std::to_string(c.gpu_count) + " x " + money_str(in.price_per_gpu_hour) + " x " + T +
           " / 3600000 ms = " + money_str(c.cost_per_step),
       c.cost_per_step.amount_string());
  const std::string ratio = std::to_string(a.n) + "/" + std::to_string(o.gpu_count);
  const GpuModel* new_model = a.catalog->find(o.gpu_model);
  const auto speed_now = perf_of(a, *a.model);
  const auto speed_new = new_model ? perf_of(a, *new_model) : std::nullopt;
  const std::string speeds = speed_now && speed_new ? std::to_string(static_cast<int64_t>(*speed_now)) + "/" +
                                                          std::to_string(static_cast<int64_t>(*speed_new))
                                                    : "1/1";
  step(r, "New GPU part G' = G x (GPUs now / GPUs new) x (speed now / speed new), speed = " + perf_name_en(a.mode),
       "新 GPU 时间 G' = G x (现卡数 / 新卡数) x (现速度 / 新速度)，速度 = " + perf_name_zh(a.mode),
       "G' = " + fmt_ms(a.G) + " x " + ratio + " x " + speeds + " (" + a.model->id + " -> " + o.gpu_model +
           ") = " + fmt_ms(o.gpu_us),
       o.gpu_us);
  const std::string cores = std::to_string(a.cores) + "/" + std::to_string(o.cpu_cores_per_gpu.value_or(a.cores));
  step(r, "New host part H' = H x (GPUs now / GPUs new) x (cores now / cores new) + X x (GPUs now / GPUs new)",
       "新主机侧时间 H' = H x (现卡数 / 新卡数) x (现核数 / 新核数) + X x (现卡数 / 新卡数)",
       "H' = " + fmt_ms(a.H) + " x " + ratio + " x " + cores + " + " + fmt_ms(a.X) + " x " + ratio + " = " +
           fmt_ms(o.host_us),
       o.host_us);
  if (o.faster_storage && !(in.faster_storage && in.faster_storage->read_bytes_per_s)) {
    step(r, "Faster storage sized to need: it must read a step's data within the compute time, R' = G' + H'",
         "按需配置更快的存储：一步的数据须在计算时间内读完，R' = G' + H'",
         "R' = " + fmt_ms(o.read_us) + "; read speed x " + fmt_ms(a.R) + " / " + fmt_ms(o.read_us) + " = " +
             fmt_times(o.required_read_speedup_permille) +
             (o.required_read_bytes_per_s ? "; " + fmt_mbps(*in.io_bytes_per_s) + " x " + T + " / " +
                                                fmt_ms(o.read_us) + " = " + fmt_mbps(*o.required_read_bytes_per_s)
                                          : ""),
         o.read_us);
  } else if (o.faster_storage) {
    step(r, "Faster storage of the given capacity: R' = bytes per step / capacity",
         "给定容量的更快存储：R' = 每步字节数 / 存储容量",
         "R' = " + fmt_ms(o.read_us) + " at " + fmt_mbps(*in.faster_storage->read_bytes_per_s), o.read_us);
  } else if (a.read_cpu_bound) {
    step(r, "Data loading is CPU-bound: R' = R x (GPUs now / GPUs new) x (cores now / cores new)",
         "数据加载受 CPU 限制：R' = R x (现卡数 / 新卡数) x (现核数 / 新核数)",
         "R' = " + fmt_ms(a.R) + " x " + ratio + " x " + cores + " = " + fmt_ms(o.read_us), o.read_us);
  } else {
    step(r, "Same storage: read time R' = R", "存储不变：读取时间 R' = R", "R' = " + fmt_ms(o.read_us), o.read_us);
  }
  step(r, "New communication N' = N x [(n'-1)/n'] / [(n-1)/n] x link now / link new (ring all-reduce)",
       "新通信时间 N' = N x [(n'-1)/n'] / [(n-1)/n] x 现链路带宽 / 新链路带宽（环形 all-reduce）",
       "N' = " + fmt_ms(a.N) + " x ring(" + std::to_string(o.gpu_count) + ")/ring(" + std::to_string(a.n) + ") x " +
           std::to_string(a.link_gbps) + "/" + std::to_string(o.link_gbps) + " GB/s = " + fmt_ms(o.communication_us),
       o.communication_us);
  step(r, "New step T' = max(G' + H', R') + N'", "新步长 T' = max(G' + H', R') + N'",
       "T' = max(" + fmt_ms(o.gpu_us + o.host_us) + ", " + fmt_ms(o.read_us) + ") + " + fmt_ms(o.communication_us) +
           " = " + fmt_ms(o.step_us),
       o.step_us);
  step(r, "Cost per step after = cost per hour x T' / 1 h", "调整后每步成本 = 每小时成本 x T' / 1 小时",
       money_str(o.cost_per_hour) + " x " + fmt_ms(o.step_us) + " / 3600000 ms = " + money_str(o.cost_per_step),
       o.cost_per_step.amount_string());
  step(r, "Speed-up = T / T'; cost change = (after - before) / before",
       "加速比 = T / T'；成本变化 = (调整后 - 调整前) / 调整前",
       T + " / " + fmt_ms(o.step_us) + " = " + fmt_times(r.speedup_permille) + "; " + fmt_bp(r.cost_change_bp),
       json{{"speedup_permille", r.speedup_permille}, {"cost_change_bp", r.cost_change_bp}});
}

// The one-paragraph summary, in English and 简体中文.
void summarize(const Analysis& a, FingerprintResult& r) {
  const FingerprintOption& c = r.current;
  const FingerprintOption& o = r.recommended;
  const std::string T = fmt_ms(a.T);
  std::vector<std::string> en, zh;
  if (o.gpu_model != c.gpu_model) {
    en.push_back("move to " + o.gpu_model +
                 (o.interconnect != c.interconnect
                      ? std::string(" (") + enum_name(kGpuInterconnectNames, o.interconnect) + ")"
                      : ""));
    zh.push_back("换用 " + o.gpu_model);
  }
  if (o.gpu_count != c.gpu_count) {
    en.push_back((o.gpu_count < c.gpu_count ? "use fewer GPUs: " : "use more GPUs: ") + std::to_string(o.gpu_count) +
                 " instead of " + std::to_string(c.gpu_count));
    zh.push_back(std::string(o.gpu_count < c.gpu_count ? "减少卡数：" : "增加卡数：") + std::to_string(c.gpu_count) +
                 " -> " + std::to_string(o.gpu_count));
  }
  if (o.faster_storage) {
    std::string rate = o.required_read_bytes_per_s ? " reading at least " + fmt_mbps(*o.required_read_bytes_per_s) : "";
    en.push_back("faster storage" + rate + " (" + fmt_times(o.required_read_speedup_permille) +
                 " today's read speed, e.g. local NVMe cache or a parallel file system)");
    zh.push_back("更快的存储" +
                 (o.required_read_bytes_per_s ? "（读取至少 " + fmt_mbps(*o.required_read_bytes_per_s) + "，" : "（") +
                 "为当前读取速度的 " + fmt_times(o.required_read_speedup_permille) +
                 "，如本地 NVMe 缓存或并行文件系统）");
  }
  if (o.cpu_cores_per_gpu != c.cpu_cores_per_gpu && o.cpu_cores_per_gpu) {
    en.push_back("more CPU cores: " + std::to_string(*o.cpu_cores_per_gpu) + " per GPU instead of " +
                 std::to_string(c.cpu_cores_per_gpu.value_or(0)));
    zh.push_back("增加 CPU 核数：每卡 " + std::to_string(c.cpu_cores_per_gpu.value_or(0)) + " -> " +
                 std::to_string(*o.cpu_cores_per_gpu) + " 核");
  }
  auto join = [](const std::vector<std::string>& v, const std::string& sep) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
    return s;
  };
  const std::string figures_en = "step " + T + " -> " + fmt_ms(o.step_us) + " (" + fmt_times(r.speedup_permille) +
                                 " as fast), cost per step " + money_str(c.cost_per_step) + " -> " +
                                 money_str(o.cost_per_step) + " (" + fmt_bp(r.cost_change_bp) + ")";
  const std::string figures_zh = "步长 " + T + " -> " + fmt_ms(o.step_us) + "（速度 " + fmt_times(r.speedup_permille) +
                                 "），每步成本 " + money_str(c.cost_per_step) + " -> " + money_str(o.cost_per_step) +
                                 "（" + fmt_bp(r.cost_change_bp) + "）";
  const std::string head_en = std::string("Bottleneck: ") + bottleneck_en(r.bottleneck) + ". ";
  const std::string head_zh = std::string("瓶颈：") + bottleneck_zh(r.bottleneck) + "。";
  if (en.empty()) {
    r.summary_en =
        head_en + "Keep the current configuration: no priced option is cheaper per step without being slower.";
    r.summary_zh = head_zh + "保持当前配置：没有更便宜且不更慢的已报价方案。";
  } else {
    r.summary_en = head_en + "Recommended: " + join(en, "; ") + ". Expected: " + figures_en + ".";
    r.summary_zh = head_zh + "建议：" + join(zh, "；") + "。预计：" + figures_zh + "。";
  }
}

// Notes on what the numbers cannot say by themselves.
void add_notes(const Analysis& a, FingerprintResult& r) {
  const FingerprintInput& in = *a.in;
  const FingerprintParts& p = r.parts;
  const FingerprintRoofline& rf = r.roofline;
  const FingerprintOption& c = r.current;
  const FingerprintOption& o = r.recommended;
  auto note = [&](std::string e, std::string z) {
    r.notes_en.push_back(std::move(e));
    r.notes_zh.push_back(std::move(z));
  };
  if (p.unattributed > 0)
    note(fmt_pm(p.unattributed) +
             " of the step is idle time no measurement explains: give data_wait_share_pct, "
             "nccl_share_pct and cpu_utilization_pct (from the framework profiler) to attribute it",
         "步长中有 " + fmt_pm(p.unattributed) +
             " 是无法归因的空闲：请提供 data_wait_share_pct、nccl_share_pct 和 cpu_utilization_pct（来自框架 "
             "profiler）");
  if (r.bottleneck == WorkloadBottleneck::kCompute && rf.compute_efficiency_permille &&
      *rf.compute_efficiency_permille < 400)
    note("the GPU is busy but reaches only " + fmt_pm(*rf.compute_efficiency_permille) +
             " of peak FP16: kernel efficiency (mixed precision, larger batches, fused kernels) may gain more than new "
             "hardware",
         "GPU 忙但只达到 FP16 峰值的 " + fmt_pm(*rf.compute_efficiency_permille) +
             "：优化算子效率（混合精度、更大批量、融合算子）可能比换硬件收益更大");
  if (r.bottleneck == WorkloadBottleneck::kCpu && !a.explore_cores)
    note(
        "host-side time dominates but the CPU is not saturated (or cores per GPU are unknown): more cores may not "
        "help; "
        "look at single-threaded Python, kernel-launch overhead (CUDA graphs) and synchronisations",
        "主机侧时间占主导但 CPU 未饱和（或未给每卡核数）：加核可能无效；请检查单线程 Python、内核启动开销（CUDA "
        "Graphs）和同步");
  if (o.gpu_count < c.gpu_count)
    note("fewer GPUs keep the global batch (gradient accumulation), so per-GPU memory stays at today's peak",
         "减少卡数时保持全局批量（梯度累积），单卡显存峰值不变");
  if (r.fastest_at_same_cost) {
    const FingerprintOption& f = *r.fastest_at_same_cost;
    note(std::to_string(f.gpu_count) + " x " + f.gpu_model + (f.faster_storage ? " with faster storage" : "") +
             " costs about the same per step (" + money_str(f.cost_per_step) + ") and runs faster (" +
             fmt_ms(f.step_us) +
             " per step); the recommendation prefers fewer GPUs (less storage throughput, less "
             "communication, fewer failures)",
         std::to_string(f.gpu_count) + " x " + f.gpu_model + (f.faster_storage ? "（配更快存储）" : "") +
             " 每步成本相近（" + money_str(f.cost_per_step) + "）且更快（每步 " + fmt_ms(f.step_us) +
             "）；建议优先卡数更少的方案（所需存储吞吐更低、通信更少、故障面更小）");
  }
  if (in.offers.empty())
    note(
        "no offers given: other GPU models are not priced; 'alternatives' shows each one's step time and the price per "
        "GPU-hour at which it would cost the same per step as today",
        "未提供报价：其他型号无价格；alternatives 列出各型号的步长及每步成本与当前持平的每卡时价格");
}

}  // namespace

void fingerprint_internal::explain(const Analysis& a, FingerprintResult& r) {
  explain_today(a, r);
  explain_change(a, r);
  summarize(a, r);
  add_notes(a, r);
}

json to_json(const FingerprintResult& r) {
  const FingerprintInput& in = r.input;
  json profile = {{"source", in.source},
                  {"currency", currency_code(in.currency)},
                  {"gpu_model", in.gpu_model},
                  {"gpu_count", in.gpu_count},
                  {"price_per_gpu_hour", in.price_per_gpu_hour.amount_string()}};
  put_opt(profile, "gpu_utilization_permille", in.gpu_utilization_permille);
  put_opt(profile, "peak_memory_mib", in.peak_memory_mib);
  if (in.achieved_tflops_x10) profile["achieved_tflops"] = format_tflops_x10(*in.achieved_tflops_x10);
  put_opt(profile, "memory_bandwidth_used_gbps", in.memory_bandwidth_used_gbps);
  put_opt(profile, "nccl_share_permille", in.nccl_share_permille);
  put_opt(profile, "data_wait_share_permille", in.data_wait_share_permille);
  put_opt(profile, "storage_io_bytes_per_s", in.io_bytes_per_s);
  put_opt(profile, "cpu_utilization_permille", in.cpu_utilization_permille);
  put_opt(profile, "cpu_cores_per_gpu", in.cpu_cores_per_gpu);
  put_opt(profile, "step_time_ms", in.step_time_ms);
  const FingerprintParts& p = r.parts;
  json parts = {{"gpu", p.gpu},
                {"data_wait", p.data_wait},
                {"communication", p.communication},
                {"host", p.host},
                {"unattributed", p.unattributed}};
  const FingerprintRoofline& rf = r.roofline;
  json roof = json::object();
  if (rf.peak_tflops_x10) roof["peak_fp16_tflops"] = format_tflops_x10(*rf.peak_tflops_x10);
  put_opt(roof, "peak_bandwidth_gbps", rf.peak_bandwidth_gbps);
  put_opt(roof, "compute_efficiency_permille", rf.compute_efficiency_permille);
  put_opt(roof, "bandwidth_efficiency_permille", rf.bandwidth_efficiency_permille);
  if (rf.arithmetic_intensity_x10) roof["arithmetic_intensity_flop_per_byte"] = fmt_x10(*rf.arithmetic_intensity_x10);
  if (rf.ridge_point_x10) roof["ridge_point_flop_per_byte"] = fmt_x10(*rf.ridge_point_x10);
  roof["memory_bound"] = rf.memory_bound;
  json secondary = json::array();
  for (auto b : r.secondary) secondary.push_back(enum_name(kWorkloadBottleneckNames, b));
  json options = json::array();
  for (const auto& o : r.options) options.push_back(option_json(o));
  json alts = json::array();
  for (const auto& a : r.alternatives)
    alts.push_back({{"gpu_model", a.gpu_model},
                    {"step_us", a.step_us},
                    {"speedup_permille", a.speedup_permille},
                    {"break_even_price_per_gpu_hour", a.break_even_price_per_gpu_hour.amount_string()}});
  json steps = json::array();
  for (const auto& s : r.steps)
    steps.push_back({{"en", s.en}, {"zh", s.zh}, {"formula", s.formula}, {"value", s.value}});
  return {{"profile", profile},
          {"unit", r.step_time_given ? "step" : "hour_of_current_work"},
          {"step_us", r.step_us},
          {"parts_permille", parts},
          {"data_wait_cause", r.data_wait_cause.empty() ? json(nullptr) : json(r.data_wait_cause)},
          {"roofline", roof},
          {"bottleneck", enum_name(kWorkloadBottleneckNames, r.bottleneck)},
          {"secondary_bottlenecks", secondary},
          {"interconnect_advice",
           {{"interconnect", enum_name(kGpuInterconnectNames, r.interconnect_advice)},
            {"en", r.interconnect_reason_en},
            {"zh", r.interconnect_reason_zh}}},
          {"current", option_json(r.current)},
          {"recommendation", option_json(r.recommended)},
          {"fastest_at_same_cost", r.fastest_at_same_cost ? option_json(*r.fastest_at_same_cost) : json(nullptr)},
          {"speedup_permille", r.speedup_permille},
          {"cost_change_bp", r.cost_change_bp},
          {"summary", {{"en", r.summary_en}, {"zh", r.summary_zh}}},
          {"notes", {{"en", r.notes_en}, {"zh", r.notes_zh}}},
          {"options", options},
          {"options_evaluated", r.options_evaluated},
          {"alternatives", alts},
          {"steps", steps}};
}

}  // namespace gpurent
