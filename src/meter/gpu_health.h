// GPU health: the readings that say a card is failing, and the rules that take its node out of
// service before it fails under a tenant's job. Readings come from NVIDIA's dcgm-exporter
// (meter/dcgm.h maps its fields); the rules compare a card's reading with the previous one, so a
// count that rises or an XID that appears is what fires, not a value the card has carried since
// before the server started watching (its first reading is the baseline). Pure; thread-safe.
//
//   DCGM field                          reading               rule (fires when …)
//   DCGM_FI_DEV_XID_ERRORS              xid (the last XID)    it changes to 48, 63, 64, 74, 79, 92, 94 or 95
//   DCGM_FI_DEV_ECC_DBE_VOL_TOTAL       ecc_dbe               it rises (double-bit errors: data was lost)
//   DCGM_FI_DEV_ECC_SBE_VOL_TOTAL       ecc_sbe               (kept, no rule: single-bit errors are corrected)
//   DCGM_FI_DEV_RETIRED_PENDING         retired_pending       it becomes > 0 (a page awaits retirement: reset needed)
//   DCGM_FI_DEV_ROW_REMAP_FAILURE       row_remap_failure     it becomes > 0 (no spare rows left)
//   DCGM_FI_DEV_PCIE_REPLAY_COUNTER     pcie_replays          (kept, no rule)
//   DCGM_FI_DEV_GPU_TEMP                temp_c                (kept, no rule)
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/message.h"

namespace gpurent {

struct GpuHealth {
  std::optional<int64_t> xid, ecc_dbe, ecc_sbe, retired_pending, row_remap_failure, pcie_replays, temp_c;

  bool empty() const { return !xid && !ecc_dbe && !ecc_sbe && !retired_pending && !row_remap_failure && !pcie_replays && !temp_c; }
  bool operator==(const GpuHealth&) const = default;
};

// Why a card's node should leave service now: the rule ("xid_79", "ecc_dbe_rising",
// "retired_pages_pending", "row_remap_failure") and the words (health.* messages).
struct HealthFinding {
  std::string rule;
  Message why;
};

// The first rule `now` fires against `before` (nullopt: the card's first reading, a baseline:
// nothing fires). `gpu` names the card in the words ("GPU 3").
std::optional<HealthFinding> judge_gpu_health(const std::optional<GpuHealth>& before, const GpuHealth& now,
                                              const std::string& gpu);

// What is known of a card after a reading: each field `now` holds, else what `before` held. A
// field missing from one scrape (an exporter that skipped it, a NaN) keeps the last value read, so
// it coming back unchanged is no change.
GpuHealth merged_health(const GpuHealth& before, const GpuHealth& now);

// Whether an XID is one the rules take a node out of service for (see the table above).
bool xid_takes_node_out(int64_t xid);

}  // namespace gpurent
