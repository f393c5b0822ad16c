#include "demo/builtin_prices.h"

namespace gpurent {

// Rows copied verbatim from ../shared/data/prices (SkyPilot catalog, catalogs/v7/<provider>/vms.csv):
// lambda_vms.csv at commit 11580132cea293395776b033c8533714d42abb4e and runpod_vms.csv at commit
// 0727c2bd9e77f91cb1377127c5f793a28cf01384, read 2026-11-29. Only the GpuInfo column is blanked.
// Each row is the 8-GPU instance's cheapest zone (ties: the alphabetically first) of a model the
// demo rents out, so the built-in world prices exactly as the full lists do
// (demo_world_test checks this whenever the lists are present). RunPod's L40S row keeps its spot
// price above on-demand, as in the list, so the built-in path skips it the same way.
constexpr std::string_view kLambdaExcerpt =
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice\r\n"
    "gpu_8x_a100_80gb_sxm4,A100-80GB,8.0,240.0,1800.0,14.32,asia-northeast-1,,\r\n"
    "gpu_8x_h100_sxm5,H100,8.0,208.0,1800.0,23.92,asia-northeast-1,,\r\n";

constexpr std::string_view kRunpodExcerpt =
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Region,SpotPrice,Price,AvailabilityZone\r\n"
    "8x_A100-80GB_SECURE,A100-80GB,8.0,64.0,640.0,A100-80GB,CA,9.52,12.96,CA-MTL-1\r\n"
    "8x_A100-80GB-SXM_SECURE,A100-80GB-SXM,8.0,128.0,640.0,A100-80GB-SXM,CA,,15.12,CA-MTL-1\r\n"
    "8x_H100-SXM_SECURE,H100-SXM,8.0,160.0,640.0,H100-SXM,CA,21.52,23.92,CA-MTL-1\r\n"
    "8x_H200-SXM_SECURE,H200-SXM,8.0,160.0,1128.0,H200-SXM,CA,28.72,31.92,CA-MTL-1\r\n"
    "8x_L40S_SECURE,L40S,8.0,1024.0,6016.0,L40S,CA,6.88,3.44,CA-MTL-1\r\n";

std::string_view builtin_price_list(std::string_view provider) {
  if (provider == "lambda") return kLambdaExcerpt;
  if (provider == "runpod") return kRunpodExcerpt;
  return {};
}

// Illustrative CNY prices per card-hour for the demo's fictional 华东智算中心, chosen for the demo:
// they come from no published list (none covers Chinese AI computing centres) and quote nobody.
// Reserved prices are stated, not derived by a discount rule, as such centres' contracts state
// them; only the 910B pool has a preemptible (抢占式) price.
const std::vector<StatedPriceSheet>& huadong_price_sheets() {
  static const std::vector<StatedPriceSheet> kSheets = {
      {.gpu_model = "ascend-910b-64gb",
       .currency = Currency::kCNY,
       .on_demand = "11.00",
       .reserved_1m = "9.80",
       .reserved_12m = "7.90",
       .reserved_36m = "6.60",
       .spot = "5.50"},
      {.gpu_model = "a100-sxm4-80gb",
       .currency = Currency::kCNY,
       .on_demand = "13.50",
       .reserved_1m = "12.00",
       .reserved_12m = "9.90",
       .reserved_36m = "8.40",
       .spot = ""},
  };
  return kSheets;
}

}  // namespace gpurent
