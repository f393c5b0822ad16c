#include "meter/gpu_health.h"

namespace gpurent {

bool xid_takes_node_out(int64_t xid) {
  switch (xid) {
    case 48:  // double-bit ECC error
    case 63:  // ECC page retirement or row remapping recorded: the card needs a reset
    case 64:  // ECC page retirement or row remapping failed
    case 74:  // NVLink error
    case 79:  // the GPU has fallen off the bus
    case 92:  // high single-bit ECC error rate
    case 94:  // contained ECC error
    case 95:  // uncontained ECC error
      return true;
    default:
      return false;
  }
}

GpuHealth merged_health(const GpuHealth& before, const GpuHealth& now) {
  GpuHealth m = now;
  for (auto field : {&GpuHealth::xid, &GpuHealth::ecc_dbe, &GpuHealth::ecc_sbe, &GpuHealth::retired_pending,
                     &GpuHealth::row_remap_failure, &GpuHealth::pcie_replays, &GpuHealth::temp_c})
    if (!(m.*field)) m.*field = before.*field;
  return m;
}

std::optional<HealthFinding> judge_gpu_health(const std::optional<GpuHealth>& before, const GpuHealth& now,
                                              const std::string& gpu) {
  if (!before) return std::nullopt;  // the baseline
  const GpuHealth& b = *before;
  if (now.xid && *now.xid != b.xid.value_or(0) && xid_takes_node_out(*now.xid))
    return HealthFinding{"xid_" + std::to_string(*now.xid),
                         Message("health.xid").arg("gpu", gpu).arg("xid", std::to_string(*now.xid))};
  if (now.ecc_dbe && b.ecc_dbe && *now.ecc_dbe > *b.ecc_dbe)
    return HealthFinding{"ecc_dbe_rising", Message("health.ecc_dbe_rising")
                                               .arg("gpu", gpu)
                                               .arg("from", std::to_string(*b.ecc_dbe))
                                               .arg("to", std::to_string(*now.ecc_dbe))};
  if (now.retired_pending.value_or(0) > 0 && b.retired_pending.value_or(0) == 0)
    return HealthFinding{"retired_pages_pending", Message("health.retired_pages_pending").arg("gpu", gpu)};
  if (now.row_remap_failure.value_or(0) > 0 && b.row_remap_failure.value_or(0) == 0)
    return HealthFinding{"row_remap_failure", Message("health.row_remap_failure").arg("gpu", gpu)};
  return std::nullopt;
}

}  // namespace gpurent
