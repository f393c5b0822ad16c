// Workload fingerprint, input side: validating a profile (parse_fingerprint_input) and deriving
// one from metered samples (fingerprint_input_from_metered).
#include <algorithm>
#include <optional>
#include <string>

#include "advisor/advisor_util.h"
#include "advisor/fingerprint.h"
#include "advisor/fingerprint_internal.h"
#include "model/enums_supply.h"

namespace gpurent {
using namespace fingerprint_internal;

namespace {

constexpr int64_t kMaxGpus = 100'000;
constexpr int64_t kMaxMbPerS = 10'000'000;  // 10 TB/s: catches unit mistakes
// Price ceilings (whole units) that keep every product below 2^63 micro-units.
constexpr int64_t kMaxGpuHourPrice = 10'000;
constexpr int64_t kMaxCoreHourPrice = 100;
constexpr int64_t kMaxStorageHourPrice = 1'000'000;

std::optional<int64_t> pct_as_permille(Fields& f, const char* key) {
  auto v = f.opt_integer(key, 0, 100);
  if (!v) return std::nullopt;
  return *v * 10;
}

}  // namespace

Result<FingerprintInput> parse_fingerprint_input(const json& body, const GpuCatalog& catalog) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  FingerprintInput in;
  in.currency = f.enumeration("currency", kCurrencies, std::optional<Currency>(Currency::kUSD));
  const Currency cur = in.currency;
  const GpuModel* m = read_gpu_model_ref(f, catalog, "gpu_model");
  if (m) in.gpu_model = m->id;
  in.gpu_count = f.integer("gpu_count", 1, kMaxGpus);
  in.gpus_per_node = f.opt_integer("gpus_per_node", 1, 64).value_or(kDefaultGpusPerNode);
  if (f.has("interconnect")) {
    in.interconnect = f.enumeration("interconnect", kGpuInterconnectNames);
    if (m && *in.interconnect == GpuInterconnect::kNvlink) {
      if (m->nvlink_gbps.value_or(0) == 0)
        f.error("interconnect", Message("advisor.fingerprint.no_nvlink").arg("model", m->id));
      else if (m->form_factor == FormFactor::kPcie && in.gpu_count > 2)
        f.error("interconnect",
                Message("advisor.fingerprint.nvlink_bridge_two").arg("gpus", std::to_string(in.gpu_count)));
    }
  } else {
    f.raw("interconnect");
  }
  in.peak_memory_mib = f.opt_integer("peak_memory_mib", 0, int64_t{1} << 24);
  if (m && in.peak_memory_mib && *in.peak_memory_mib > m->memory_gib * 1024)
    f.error("peak_memory_mib", Message("advisor.fingerprint.peak_memory_exceeds")
                                   .arg("model", m->id)
                                   .arg("mib", std::to_string(m->memory_gib * 1024)));
  auto util_pct = pct_as_permille(f, "gpu_utilization_pct");
  auto util_pm = f.opt_integer("gpu_utilization_permille", 0, 1000);
  if (util_pct && util_pm) f.error("gpu_utilization_permille", Message("advisor.fingerprint.utilization_both"));
  in.gpu_utilization_permille = util_pct ? util_pct : util_pm;
  if (const json* t = f.raw("achieved_tflops")) {
    auto r = parse_tflops_x10(*t);
    if (!r) {
      if (r.error().detail.empty())
        f.error("achieved_tflops", r.error().message);
      else
        f.error("achieved_tflops", r.error().detail);
    } else if (m && m->fp16_tflops_x10 && *r > *m->fp16_tflops_x10) {
      f.error("achieved_tflops", Message("advisor.fingerprint.tflops_exceeds_peak")
                                     .arg("model", m->id)
                                     .arg("tflops", format_tflops_x10(*m->fp16_tflops_x10)));
    } else {
      in.achieved_tflops_x10 = *r;
    }
  }
  in.memory_bandwidth_used_gbps = f.opt_integer("memory_bandwidth_used_gbps", 0, 100'000);
  if (m && in.memory_bandwidth_used_gbps && m->memory_bandwidth_gbps &&
      *in.memory_bandwidth_used_gbps > *m->memory_bandwidth_gbps)
    f.error("memory_bandwidth_used_gbps", Message("advisor.fingerprint.bandwidth_exceeds")
                                              .arg("model", m->id)
                                              .arg("gbps", std::to_string(*m->memory_bandwidth_gbps)));
  in.nccl_share_permille = pct_as_permille(f, "nccl_share_pct");
  in.data_wait_share_permille = pct_as_permille(f, "data_wait_share_pct");
  if (in.nccl_share_permille.value_or(0) + in.data_wait_share_permille.value_or(0) > 1000)
    f.error("data_wait_share_pct", Message("advisor.fingerprint.shares_exceed_100"));
  if (in.nccl_share_permille.value_or(0) > 0 && in.gpu_count == 1)
    f.error("nccl_share_pct", Message("advisor.fingerprint.nccl_single_gpu"));
  if (auto io = f.opt_integer("storage_io_mb_per_s", 0, kMaxMbPerS)) in.io_bytes_per_s = *io * kBytesPerMb;
  if (auto cap = f.opt_integer("storage_capacity_mb_per_s", 1, kMaxMbPerS))
    in.storage_read_bytes_per_s = *cap * kBytesPerMb;
  if (in.io_bytes_per_s && in.storage_read_bytes_per_s && *in.io_bytes_per_s > *in.storage_read_bytes_per_s)
    f.error("storage_io_mb_per_s", Message("advisor.fingerprint.io_exceeds_capacity"));
  in.cpu_utilization_permille = pct_as_permille(f, "cpu_utilization_pct");
  in.cpu_cores_per_gpu = f.opt_integer("cpu_cores_per_gpu", 1, 1024);
  if (auto mx = f.opt_integer("max_cpu_cores_per_gpu", 1, 1024)) {
    in.max_cpu_cores_per_gpu = *mx;
    if (in.cpu_cores_per_gpu && *mx < *in.cpu_cores_per_gpu)
      f.error("max_cpu_cores_per_gpu", Message("advisor.fingerprint.max_cores_below_cores"));
  } else {
    in.max_cpu_cores_per_gpu = std::max(kDefaultMaxCpuCoresPerGpu, in.cpu_cores_per_gpu.value_or(0));
  }
  in.price_per_cpu_core_hour = read_capped_money(f, "price_per_cpu_core_hour", cur, kMaxCoreHourPrice, false, false);
  in.step_time_ms = f.opt_integer("step_time_ms", 1, kMsPerHour);
  in.price_per_gpu_hour =
      read_capped_money(f, "price_per_gpu_hour", cur, kMaxGpuHourPrice, true, true).value_or(Money::zero(cur));
  f.object("faster_storage", false, [&](Fields& s) {
    FingerprintStorage st;
    st.price_per_hour =
        read_capped_money(s, "price_per_hour", cur, kMaxStorageHourPrice, false, false).value_or(Money::zero(cur));
    if (auto c = s.opt_integer("capacity_mb_per_s", 1, kMaxMbPerS)) {
      st.read_bytes_per_s = *c * kBytesPerMb;
      if (!in.io_bytes_per_s && !in.storage_read_bytes_per_s)
        s.error("capacity_mb_per_s", Message("advisor.fingerprint.storage_needs_io"));
      else if (in.storage_read_bytes_per_s && *st.read_bytes_per_s <= *in.storage_read_bytes_per_s)
        s.error("capacity_mb_per_s", Message("advisor.fingerprint.storage_not_faster"));
    }
    in.faster_storage = st;
  });
  in.network_gbps_per_gpu = f.opt_integer("network_gbps_per_gpu", 1, 100'000).value_or(kDefaultNetworkGbpsPerGpu);
  f.objects("offers", false, kMaxFingerprintOffers, [&](Fields& o, size_t i) {
    FingerprintOffer off;
    off.name = o.opt_str("name", {.max_len = 64}).value_or("offers[" + std::to_string(i) + "]");
    if (const GpuModel* om = read_gpu_model_ref(o, catalog, "gpu_model")) off.gpu_model = om->id;
    off.price_per_gpu_hour =
        read_capped_money(o, "price_per_gpu_hour", cur, kMaxGpuHourPrice, true, true).value_or(Money::zero(cur));
    in.offers.push_back(std::move(off));
  });
  if (!in.gpu_utilization_permille && !in.achieved_tflops_x10 && !f.has("achieved_tflops") &&
      !f.has("gpu_utilization_pct") && !f.has("gpu_utilization_permille"))
    f.error("gpu_utilization_pct", Message("advisor.fingerprint.utilization_required"));
  f.finish();
  if (!errs.empty()) return errs.to_error();
  return in;
}

Result<FingerprintInput> fingerprint_input_from_metered(const std::string& gpu_model, int64_t gpu_count,
                                                        Money price_per_gpu_hour, const MeteredJobUsage& usage,
                                                        const GpuCatalog& catalog) {
  const GpuModel* m = catalog.find(gpu_model);
  if (!m) return Error::invalid("gpu_model", Message("advisor.fingerprint.unknown_gpu_model").arg("model", gpu_model));
  if (gpu_count < 1 || gpu_count > kMaxGpus)
    return Error::invalid("gpu_count", Message("advisor.fingerprint.range").arg("min", "1").arg("max", "100000"));
  if (price_per_gpu_hour.micros() <= 0 || price_per_gpu_hour.micros() > kMaxGpuHourPrice * Money::kMicrosPerUnit)
    return Error::invalid("price_per_gpu_hour", Message("advisor.fingerprint.price_range").arg("max", "10000"));
  if (usage.avg_gpu_utilization_permille < 0 || usage.avg_gpu_utilization_permille > 1000)
    return Error::invalid("avg_gpu_utilization_permille",
                          Message("advisor.fingerprint.range").arg("min", "0").arg("max", "1000"));
  if (usage.peak_memory_mib < 0 || usage.peak_memory_mib > m->memory_gib * 1024)
    return Error::invalid("peak_memory_mib", Message("advisor.fingerprint.peak_memory_range").arg("model", m->id));
  if (usage.storage_io_bytes < 0)
    return Error::invalid("storage_io_bytes", FieldReason{"field.not_negative"}.message());
  if (usage.duration_ms <= 0) return Error::invalid("duration_ms", Message("advisor.fingerprint.positive"));
  FingerprintInput in;
  in.currency = price_per_gpu_hour.currency();
  in.source = "metered";
  in.gpu_model = m->id;
  in.gpu_count = gpu_count;
  in.price_per_gpu_hour = price_per_gpu_hour;
  in.gpu_utilization_permille = usage.avg_gpu_utilization_permille;
  in.peak_memory_mib = usage.peak_memory_mib;
  in.io_bytes_per_s = div_half_even_sat(static_cast<i128>(usage.storage_io_bytes) * 1000, usage.duration_ms);
  return in;
}

}  // namespace gpurent
