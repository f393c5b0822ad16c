// Workload fingerprint, analysis: step parts, roofline, bottleneck, the options (model x count x
// storage x cores) and the recommendation. Parsing is in fingerprint_parse.cc, the explanation
// and JSON in fingerprint_output.cc.
#include "advisor/fingerprint.h"

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "advisor/advisor_util.h"
#include "advisor/fingerprint_internal.h"

namespace gpurent {
using namespace fingerprint_internal;

std::optional<i128> fingerprint_internal::perf_of(const Analysis& a, const GpuModel& m) {
  const FingerprintInput& in = *a.in;
  switch (a.mode) {
    case PerfMode::kRoofline:
      if (!m.fp16_tflops_x10 || !m.memory_bandwidth_gbps || *m.fp16_tflops_x10 == 0) return std::nullopt;
      // attainable = min(peak, AI x bandwidth), AI = achieved FLOP/s / achieved bytes/s; both
      // terms multiplied by the achieved bytes/s so they stay integers.
      return std::min<i128>(static_cast<i128>(*m.fp16_tflops_x10) * *in.memory_bandwidth_used_gbps,
                            static_cast<i128>(*in.achieved_tflops_x10) * *m.memory_bandwidth_gbps);
    case PerfMode::kBandwidth:
      if (!m.memory_bandwidth_gbps || *m.memory_bandwidth_gbps == 0) return std::nullopt;
      return *m.memory_bandwidth_gbps;
    case PerfMode::kPeak:
      if (!m.fp16_tflops_x10 || *m.fp16_tflops_x10 == 0) return std::nullopt;
      return *m.fp16_tflops_x10;
    case PerfMode::kNone:
      if (m.id == a.model->id) return 1;
      return std::nullopt;
  }
  return std::nullopt;
}

namespace {

constexpr int64_t kUsPerHour = 3'600'000'000;

int64_t pcie_gbps(const GpuModel& m) {
  switch (m.pcie_gen.value_or(4)) {
    case 3:
      return 32;
    case 5:
      return 128;
    case 6:
      return 256;
    default:
      return 64;  // gen 4 x16: 32 GB/s each way
  }
}

std::pair<GpuInterconnect, int64_t> link_of(const GpuModel& m, int64_t count, const FingerprintInput& in,
                                            std::optional<GpuInterconnect> override_kind) {
  GpuInterconnect kind = override_kind ? *override_kind
                         : (m.form_factor != FormFactor::kPcie && m.nvlink_gbps.value_or(0) > 0)
                             ? GpuInterconnect::kNvlink
                             : GpuInterconnect::kPcie;
  int64_t intra = kind == GpuInterconnect::kNvlink ? *m.nvlink_gbps : pcie_gbps(m);
  if (count > in.gpus_per_node) intra = std::min(intra, in.network_gbps_per_gpu);
  return {kind, intra};
}
// The new step's parts for one configuration; nullopt when the configuration does not apply.
struct Shape {
  int64_t gpu = 0, host = 0, read = 0, comm = 0, step = 0;
  GpuInterconnect link = GpuInterconnect::kPcie;
  int64_t link_gbps = 0;
  std::optional<int64_t> required_rate;
  int64_t required_speedup = 0;
};

std::optional<Shape> shape_of(const Analysis& a, const GpuModel& m, int64_t count, bool faster,
                              std::optional<int64_t> cores, bool is_current) {
  const FingerprintInput& in = *a.in;
  auto perf_new = perf_of(a, m);
  auto perf_now = perf_of(a, *a.model);
  if (!perf_new || !perf_now || *perf_new == 0) return std::nullopt;
  const int64_t c2 = cores.value_or(a.cores);
  Shape s;
  s.gpu = div_half_even_sat(static_cast<i128>(a.G) * a.n * *perf_now, static_cast<i128>(count) * *perf_new);
  s.host = div_half_even_sat(static_cast<i128>(a.H) * a.n * a.cores, static_cast<i128>(count) * c2) +
           div_half_even_sat(static_cast<i128>(a.X) * a.n, count);
  const int64_t compute = s.gpu + s.host;
  s.read = a.R;
  if (a.read_cpu_bound)
    s.read = div_half_even_sat(static_cast<i128>(a.R) * a.n * a.cores, static_cast<i128>(count) * c2);
  if (faster) {
    if (!a.read_from_storage || a.R == 0) return std::nullopt;
    const FingerprintStorage fs = in.faster_storage.value_or(FingerprintStorage{});
    if (fs.read_bytes_per_s) {
      s.read = in.io_bytes_per_s
                   ? div_half_even_sat(static_cast<i128>(*in.io_bytes_per_s) * a.T, *fs.read_bytes_per_s)
                   : div_half_even_sat(static_cast<i128>(a.R) * *in.storage_read_bytes_per_s, *fs.read_bytes_per_s);
      if (s.read >= a.R) return std::nullopt;
      s.required_rate = fs.read_bytes_per_s;
    } else {
      if (a.R <= compute || compute == 0) return std::nullopt;  // today's storage already keeps up
      s.read = compute;
      if (in.io_bytes_per_s) s.required_rate = div_half_even_sat(static_cast<i128>(*in.io_bytes_per_s) * a.T, compute);
    }
    s.required_speedup = div_half_even_sat(static_cast<i128>(a.R) * 1000, std::max<int64_t>(s.read, 1));
  }
  auto [kind, gbps] = link_of(m, count, in, is_current ? in.interconnect : std::nullopt);
  s.link = kind;
  s.link_gbps = gbps;
  if (count > 1 && a.N > 0)
    s.comm = div_half_even_sat(static_cast<i128>(a.N) * (count - 1) * a.n * a.link_gbps,
                               static_cast<i128>(count) * (a.n - 1) * gbps);
  s.step = std::max(compute, s.read) + s.comm;
  return s;
}

struct Candidate {
  std::string label;
  const GpuModel* model;
  Money price;
  bool is_current;
};

Result<FingerprintOption> price_option(const Analysis& a, const Candidate& c, int64_t count, bool faster,
                                       std::optional<int64_t> cores, const Shape& s) {
  const FingerprintInput& in = *a.in;
  FingerprintOption o;
  o.label = c.label;
  o.gpu_model = c.model->id;
  o.gpu_count = count;
  o.interconnect = s.link;
  o.link_gbps = s.link_gbps;
  o.faster_storage = faster;
  o.required_read_bytes_per_s = s.required_rate;
  o.required_read_speedup_permille = s.required_speedup;
  o.cpu_cores_per_gpu = cores;
  o.gpu_us = s.gpu;
  o.host_us = s.host;
  o.read_us = s.read;
  o.communication_us = s.comm;
  o.step_us = s.step;
  auto hourly = c.price.mul_ratio(count, 1);
  if (!hourly) return hourly.error();
  if (cores && in.cpu_cores_per_gpu && in.price_per_cpu_core_hour && *cores > *in.cpu_cores_per_gpu) {
    auto extra = in.price_per_cpu_core_hour->mul_ratio(count * (*cores - *in.cpu_cores_per_gpu), 1);
    if (!extra) return extra.error();
    hourly = hourly->plus(*extra);
    if (!hourly) return hourly.error();
  }
  if (faster && in.faster_storage) {
    hourly = hourly->plus(in.faster_storage->price_per_hour);
    if (!hourly) return hourly.error();
  }
  o.cost_per_hour = *hourly;
  auto per_step = hourly->mul_ratio(s.step, kUsPerHour);
  auto per_1000 = hourly->mul_ratio(s.step, kUsPerHour / 1000);
  if (!per_step) return per_step.error();
  if (!per_1000) return per_1000.error();
  o.cost_per_step = *per_step;
  o.cost_per_1000_steps = *per_1000;
  return o;
}

// Exact cost per step, scaled by 3.6e9: cost per hour (micro-units) x step (us). Ranking uses it
// so rounding never decides a tie.
i128 cost_key(const FingerprintOption& o) { return static_cast<i128>(o.cost_per_hour.micros()) * o.step_us; }

std::vector<int64_t> gpu_counts(int64_t n, int64_t per_node) {
  std::vector<int64_t> out;
  for (int64_t p = 1; p < per_node && p < n; p *= 2) out.push_back(p);
  for (int64_t p = 1; p * per_node < n; p *= 2) {
    out.push_back(p * per_node);
    if (p >= 2 && p * 3 / 2 * per_node < n) out.push_back(p * 3 / 2 * per_node);
  }
  out.push_back(n);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::optional<int64_t>> core_choices(const Analysis& a) {
  const auto& in = *a.in;
  if (!in.cpu_cores_per_gpu) return {std::nullopt};
  std::vector<std::optional<int64_t>> out{in.cpu_cores_per_gpu};
  if (!a.explore_cores) return out;
  for (int64_t c = *in.cpu_cores_per_gpu * 2; c < in.max_cpu_cores_per_gpu; c *= 2) out.push_back(c);
  if (in.max_cpu_cores_per_gpu > *in.cpu_cores_per_gpu) out.push_back(in.max_cpu_cores_per_gpu);
  return out;
}

bool fits(const FingerprintInput& in, const GpuModel& m) {
  return !in.peak_memory_mib || *in.peak_memory_mib <= m.memory_gib * 1024;
}

}  // namespace

namespace {

// The step's parts in per-mille of today's step, and the time each takes (a.G, a.W, a.N, a.H, a.X,
// and a.R, the read).
void split_step(Analysis& a, FingerprintResult& r, bool cpu_saturated) {
  const FingerprintInput& in = *a.in;
  FingerprintParts& p = r.parts;
  p.data_wait = in.data_wait_share_permille.value_or(0);
  p.communication = in.gpu_count == 1 ? 0 : in.nccl_share_permille.value_or(0);
  const int64_t rest = 1000 - p.data_wait - p.communication;
  p.gpu = in.gpu_utilization_permille ? std::min(*in.gpu_utilization_permille, rest) : rest;
  int64_t idle = rest - p.gpu;
  const bool storage_saturated = in.io_bytes_per_s && in.storage_read_bytes_per_s &&
                                 static_cast<i128>(*in.io_bytes_per_s) * 1000 >=
                                     static_cast<i128>(*in.storage_read_bytes_per_s) * kStorageSaturatedPermille;
  const bool nccl_known = in.nccl_share_permille.has_value() || in.gpu_count == 1;
  if (idle > 0 && !in.data_wait_share_permille && storage_saturated) {
    p.data_wait += idle;  // the storage is at capacity: the unexplained idle time is waiting for it
  } else if (idle > 0 && ((in.data_wait_share_permille && nccl_known) || cpu_saturated)) {
    p.host = idle;
  } else {
    p.unattributed = idle;
  }
  if (p.data_wait > 0) r.data_wait_cause = (cpu_saturated && !storage_saturated) ? "cpu" : "storage";
  a.G = a.T / 1000 * p.gpu;  // T is a whole number of milliseconds: exact
  a.W = a.T / 1000 * p.data_wait;
  a.N = a.T / 1000 * p.communication;
  a.H = a.T / 1000 * p.host;
  a.X = a.T / 1000 * p.unattributed;
  if (a.W > 0) {
    a.R = a.T - a.N;  // reading overlaps compute; the wait is what the read exceeds it by
    a.read_from_storage = r.data_wait_cause == "storage";
    a.read_cpu_bound = r.data_wait_cause == "cpu";
  } else if (in.io_bytes_per_s && in.storage_read_bytes_per_s) {
    a.R = std::min(a.G + a.H + a.X,
                   div_half_even_sat(static_cast<i128>(*in.io_bytes_per_s) * a.T, *in.storage_read_bytes_per_s));
    a.read_from_storage = true;
  }
}

// The roofline: efficiencies against the card's peaks, arithmetic intensity and the ridge, and
// how performance is modelled on other cards (a.mode).
void set_roofline(Analysis& a, FingerprintResult& r) {
  const FingerprintInput& in = *a.in;
  const GpuModel* model = a.model;
  FingerprintRoofline& rf = r.roofline;
  rf.peak_tflops_x10 = model->fp16_tflops_x10;
  rf.peak_bandwidth_gbps = model->memory_bandwidth_gbps;
  const auto& fl = in.achieved_tflops_x10;
  const auto& bw = in.memory_bandwidth_used_gbps;
  if (fl && rf.peak_tflops_x10 && *rf.peak_tflops_x10 > 0)
    rf.compute_efficiency_permille = div_half_even_sat(static_cast<i128>(*fl) * 1000, *rf.peak_tflops_x10);
  if (bw && rf.peak_bandwidth_gbps && *rf.peak_bandwidth_gbps > 0)
    rf.bandwidth_efficiency_permille = div_half_even_sat(static_cast<i128>(*bw) * 1000, *rf.peak_bandwidth_gbps);
  if (fl && bw && *bw > 0) rf.arithmetic_intensity_x10 = div_half_even_sat(static_cast<i128>(*fl) * 1000, *bw);
  if (rf.peak_tflops_x10 && rf.peak_bandwidth_gbps && *rf.peak_bandwidth_gbps > 0)
    rf.ridge_point_x10 = div_half_even_sat(static_cast<i128>(*rf.peak_tflops_x10) * 1000, *rf.peak_bandwidth_gbps);
  const bool near_peak_bw = rf.bandwidth_efficiency_permille.value_or(0) >= kMemoryBoundBandwidthPermille;
  if (fl && bw && *bw > 0 && rf.peak_tflops_x10 && rf.peak_bandwidth_gbps) {
    // AI < ridge  <=>  fl / bw < peak / peak_bw, compared exactly.
    const bool below_ridge =
        static_cast<i128>(*fl) * *rf.peak_bandwidth_gbps < static_cast<i128>(*rf.peak_tflops_x10) * *bw;
    rf.memory_bound = below_ridge && near_peak_bw;
  } else {
    rf.memory_bound = near_peak_bw;
  }
  if (fl && *fl > 0 && bw && *bw > 0 && rf.peak_tflops_x10 && rf.peak_bandwidth_gbps)
    a.mode = PerfMode::kRoofline;
  else if (rf.memory_bound)
    a.mode = PerfMode::kBandwidth;
  else if (rf.peak_tflops_x10 && *rf.peak_tflops_x10 > 0)
    a.mode = PerfMode::kPeak;
  else
    a.mode = PerfMode::kNone;
}

// Bottleneck: the largest loss if it reaches the threshold, else what bounds the GPU part.
void set_bottleneck(Analysis& a, FingerprintResult& r, bool cpu_saturated) {
  const FingerprintInput& in = *a.in;
  const GpuModel* model = a.model;
  const FingerprintParts& p = r.parts;
  const FingerprintRoofline& rf = r.roofline;
  const int64_t loss_io = r.data_wait_cause == "storage" ? p.data_wait : 0;
  const int64_t loss_cpu = p.host + (r.data_wait_cause == "cpu" ? p.data_wait : 0);
  const std::pair<WorkloadBottleneck, int64_t> losses[] = {{WorkloadBottleneck::kCommunication, p.communication},
                                                           {WorkloadBottleneck::kIo, loss_io},
                                                           {WorkloadBottleneck::kCpu, loss_cpu},
                                                           {WorkloadBottleneck::kUndetermined, p.unattributed}};
  const auto* top = &losses[0];
  for (const auto& l : losses)
    if (l.second > top->second) top = &l;
  if (top->second >= kLossThresholdPermille)
    r.bottleneck = top->first;
  else
    r.bottleneck = rf.memory_bound ? WorkloadBottleneck::kMemoryBandwidth : WorkloadBottleneck::kCompute;
  for (const auto& l : losses)
    if (&l != top && l.second >= kLossThresholdPermille) r.secondary.push_back(l.first);
  a.explore_cores = cpu_saturated && (a.H > 0 || a.read_cpu_bound);
  std::tie(a.link, a.link_gbps) = link_of(*model, a.n, in, in.interconnect);
}

// Options: every priced model x GPU count x storage x cores, today's configuration among them.
Status evaluate_options(Analysis& a, FingerprintResult& r) {
  const FingerprintInput& in = *a.in;
  const GpuModel* model = a.model;
  const GpuCatalog& catalog = *a.catalog;
  std::vector<Candidate> cands{{"current_price", model, in.price_per_gpu_hour, true}};
  for (const auto& o : in.offers) cands.push_back({o.name, catalog.find(o.gpu_model), o.price_per_gpu_hour, false});
  const auto counts = gpu_counts(a.n, in.gpus_per_node);
  const auto cores = core_choices(a);
  std::vector<bool> storage{false};
  if (a.read_from_storage && a.R > 0) storage.push_back(true);
  bool current_set = false;
  for (const auto& c : cands) {
    for (int64_t count : counts) {
      for (bool faster : storage) {
        for (const auto& core : cores) {
          const bool is_current = c.is_current && count == a.n && !faster && core == in.cpu_cores_per_gpu;
          if (!is_current && !fits(in, *c.model)) continue;
          auto s = shape_of(a, *c.model, count, faster, core, c.is_current);
          if (!s) continue;
          ++r.options_evaluated;
          if (!is_current && s->step > a.T) continue;  // slower than today: not an option
          auto o = price_option(a, c, count, faster, core, *s);
          if (!o) return o.error();
          if (is_current) {
            r.current = *o;
            current_set = true;
          }
          r.options.push_back(std::move(*o));
        }
      }
    }
  }
  if (!current_set) return Error::make(Code::kInternal, "fingerprint: today's configuration was not evaluated");
  return ok_status();
}

// The recommendation among the options (cheapest first), the fastest at the same cost, the
// speed-up and the cost change.
void recommend(const Analysis& a, FingerprintResult& r) {
  std::stable_sort(r.options.begin(), r.options.end(),
                   [](const FingerprintOption& x, const FingerprintOption& y) { return cost_key(x) < cost_key(y); });
  // A change must earn its keep: save at least kMinChangeGainBp per step, or be that much faster
  // at no higher cost per step. Among such options: the cheapest per step (options within
  // kCostTieBp of it count as equal), then fewest GPUs, shortest step, fewest cores, no storage
  // change. None: keep today's configuration.
  const i128 now = cost_key(r.current);
  auto worth = [&](const FingerprintOption& o) {
    const i128 k = cost_key(o);
    return k * 10'000 <= now * (10'000 - kMinChangeGainBp) ||
           (k <= now && static_cast<i128>(o.step_us) * 10'000 <= static_cast<i128>(a.T) * (10'000 - kMinChangeGainBp));
  };
  auto tiebreak = [](const FingerprintOption& x) {
    return std::make_tuple(x.gpu_count, x.step_us, x.cpu_cores_per_gpu.value_or(0), x.faster_storage);
  };
  const FingerprintOption* rec = nullptr;
  const FingerprintOption* fastest = nullptr;
  std::optional<i128> best;
  for (const auto& o : r.options) {  // cheapest first
    if (!worth(o)) continue;
    if (!best) best = cost_key(o);
    if (cost_key(o) * 10'000 > *best * (10'000 + kCostTieBp)) break;
    if (!rec || tiebreak(o) < tiebreak(*rec)) rec = &o;
    if (!fastest || o.step_us < fastest->step_us) fastest = &o;
  }
  r.recommended = rec ? *rec : r.current;
  if (fastest && static_cast<i128>(fastest->step_us) * 10'000 <=
                     static_cast<i128>(r.recommended.step_us) * (10'000 - kMinChangeGainBp))
    r.fastest_at_same_cost = *fastest;
  if (r.options.size() > 12) r.options.resize(12);
  r.speedup_permille = div_half_even_sat(static_cast<i128>(a.T) * 1000, std::max<int64_t>(r.recommended.step_us, 1));
  const i128 before = cost_key(r.current), after = cost_key(r.recommended);
  r.cost_change_bp = before == 0 ? 0 : div_half_even_sat((after - before) * 10'000, before);
}

// Catalog models nobody priced, at today's count: how much faster, and the price that breaks even.
Status add_unpriced_alternatives(const Analysis& a, FingerprintResult& r) {
  const FingerprintInput& in = *a.in;
  const GpuModel* model = a.model;
  const GpuCatalog& catalog = *a.catalog;
  for (const auto& m : catalog.models()) {
    if (m.id == model->id) continue;
    bool offered = false;
    for (const auto& o : in.offers) offered = offered || o.gpu_model == m.id;
    if (offered || !fits(in, m)) continue;
    auto s = shape_of(a, m, a.n, false, in.cpu_cores_per_gpu, false);
    if (!s || s->step == 0 || s->step > a.T) continue;  // slower than today: no price makes it worth it
    UnpricedAlternative alt;
    alt.gpu_model = m.id;
    alt.step_us = s->step;
    alt.speedup_permille = div_half_even_sat(static_cast<i128>(a.T) * 1000, s->step);
    auto be = in.price_per_gpu_hour.mul_ratio(a.T, s->step);
    if (!be) return be.error();
    alt.break_even_price_per_gpu_hour = *be;
    r.alternatives.push_back(std::move(alt));
  }
  std::stable_sort(r.alternatives.begin(), r.alternatives.end(),
                   [](const auto& x, const auto& y) { return x.speedup_permille > y.speedup_permille; });
  if (r.alternatives.size() > 8) r.alternatives.resize(8);
  return ok_status();
}

// SXM with NVLink or PCIe, and why.
void advise_interconnect(const Analysis& a, FingerprintResult& r) {
  const FingerprintInput& in = *a.in;
  const GpuModel* model = a.model;
  const FingerprintParts& p = r.parts;
  const int64_t comm = p.communication;
  if (in.gpu_count == 1) {
    r.interconnect_advice = GpuInterconnect::kPcie;
    r.interconnect_reason = Message("advisor.fingerprint.interconnect.one_gpu");
  } else if (in.nccl_share_permille) {
    const bool high = comm >= kLossThresholdPermille / 2;
    r.interconnect_advice = high ? GpuInterconnect::kNvlink : GpuInterconnect::kPcie;
    r.interconnect_reason = high ? Message("advisor.fingerprint.interconnect.high_communication")
                                 : Message("advisor.fingerprint.interconnect.low_communication");
    r.interconnect_reason.arg("share", fmt_pm(comm));
  } else {
    const bool large = in.peak_memory_mib && *in.peak_memory_mib * 2 >= model->memory_gib * 1024;
    r.interconnect_advice = large ? GpuInterconnect::kNvlink : GpuInterconnect::kPcie;
    r.interconnect_reason = large ? Message("advisor.fingerprint.interconnect.large_model")
                                  : Message("advisor.fingerprint.interconnect.small_model");
  }
}

}  // namespace

Result<FingerprintResult> compute_fingerprint(const FingerprintInput& in, const GpuCatalog& catalog) {
  const GpuModel* model = catalog.find(in.gpu_model);
  if (!model)
    return Error::invalid("gpu_model", Message("advisor.fingerprint.unknown_gpu_model").arg("model", in.gpu_model));
  if (!in.gpu_utilization_permille && !in.achieved_tflops_x10)
    return Error::invalid("gpu_utilization_pct", Message("advisor.fingerprint.utilization_required"));
  for (size_t i = 0; i < in.offers.size(); ++i)
    if (!catalog.find(in.offers[i].gpu_model))
      return Error::invalid("offers[" + std::to_string(i) + "].gpu_model",
                            Message("advisor.fingerprint.unknown_offer_gpu_model"));
  FingerprintResult r;
  r.input = in;
  Analysis a;
  a.in = &in;
  a.catalog = &catalog;
  a.model = model;
  a.n = in.gpu_count;
  a.cores = in.cpu_cores_per_gpu.value_or(1);
  r.step_time_given = in.step_time_ms.has_value();
  a.T = in.step_time_ms ? *in.step_time_ms * 1000 : kUsPerHour;
  r.step_us = a.T;

  const bool cpu_saturated = in.cpu_utilization_permille && *in.cpu_utilization_permille >= kCpuSaturatedPermille;
  split_step(a, r, cpu_saturated);
  set_roofline(a, r);
  set_bottleneck(a, r, cpu_saturated);
  if (auto s = evaluate_options(a, r); !s) return s.error();
  recommend(a, r);
  if (auto s = add_unpriced_alternatives(a, r); !s) return s.error();
  for (const auto& m : catalog.models()) {
    if (m.id == model->id) {
      r.step_us_by_model[m.id] = a.T;
    } else if (fits(in, m)) {
      auto s = shape_of(a, m, a.n, false, in.cpu_cores_per_gpu, false);
      if (s && s->step > 0) r.step_us_by_model[m.id] = s->step;
    }
  }
  advise_interconnect(a, r);
  explain(a, r);
  return r;
}

}  // namespace gpurent
