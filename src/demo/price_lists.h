// Reading public GPU price lists — the SkyPilot catalog tables (schema v7) that
// ../shared/data/prices holds for Lambda and RunPod — into exact per-GPU-hour prices, and picking
// one representative price per (provider, GPU model) for the demo world's offers.
//
// The lists state USD per hour for the WHOLE instance; a per-GPU-hour price is the decimal text
// parsed with Money::parse and divided by the GPU count with Money::mul_ratio (never a double).
// Columns are found by header name (their order differs between the files); CRLF and LF line
// ends, RFC 4180 quoting and a UTF-8 byte-order mark are accepted.
// Pure functions and value types; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/money.h"
#include "core/result.h"

namespace gpurent {

// A parsed CSV file: the header and the data rows, each row as long as the header.
struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<size_t> row_lines;  // 1-based line on which each row starts

  // Position of a header name, or nullopt.
  std::optional<size_t> column(std::string_view name) const;
};

// `label` names the source in errors ("lambda_vms.csv line 12: ...").
Result<CsvTable> parse_csv(std::string_view text, const std::string& label);

// The catalog id of the GPU a list row sells, for the models the demo world rents out; "" for
// every other row. Price-list names are ambiguous ("A100-80GB" is PCIe at RunPod but SXM4 in
// Lambda's gpu_8x_a100_80gb_sxm4; "H100" is PCIe at RunPod and SXM5 in Lambda's
// gpu_8x_h100_sxm5), so the rule is per provider and looks at the instance type as well.
std::string demo_gpu_model(std::string_view provider, std::string_view instance_type,
                           std::string_view accelerator_name);

// "23.92" USD/h for 8 GPUs -> 2.99 USD per GPU-hour, exactly; a division that does not come out
// even is rounded half to even at the micro-unit. Errors: malformed decimal, count < 1.
Result<Money> per_gpu_hour(std::string_view instance_price, int64_t gpu_count, Currency currency = Currency::kUSD);

// One row of a list that sells a model the demo world uses.
struct InstancePrice {
  std::string provider;       // "lambda", "runpod"
  std::string instance_type;  // "gpu_8x_h100_sxm5", "8x_H200-SXM_SECURE"
  std::string gpu_model;      // catalog id (demo_gpu_model)
  int64_t gpu_count = 0;
  std::string zone;     // AvailabilityZone where the list has one, else Region
  Money price_per_gpu;  // USD per GPU-hour
  std::optional<Money> spot_per_gpu;
  size_t line = 0;  // where in the file

  bool operator==(const InstancePrice&) const = default;
};

// Reads one provider's list ("lambda" or "runpod"); keeps only the rows demo_gpu_model() knows,
// and checks only those rows' values (a malformed row of another model does not matter).
// Errors name the label, line and column.
Result<std::vector<InstancePrice>> read_price_list(std::string_view provider, std::string_view csv_text,
                                                   const std::string& label);

// The price the demo world offers for one (provider, GPU model), per GPU-hour, with how it was
// chosen. Rule (representative_prices):
//   * instance size: the 8-GPU instance when the list has one (the demo's SXM and most PCIe nodes
//     are 8-GPU boards, and multi-GPU prices are not always 8x the 1-GPU price), else the largest;
//   * on-demand: the minimum per-GPU price over every region/zone of that size (lists repeat rows
//     across zones; ties go to the alphabetically first zone);
//   * spot: the minimum over the same rows of the spot prices that do not exceed their row's
//     on-demand price, and only if it does not exceed the chosen on-demand price. A spot price
//     above on-demand (RunPod's L40S rows) is a list error — interruptible capacity is never
//     dearer than on-demand — so it is skipped and a note says so.
struct GpuPrice {
  std::string provider;
  std::string gpu_model;
  std::string instance_type;
  int64_t gpu_count = 0;
  std::string zone;  // where the minimum on-demand price was found
  Money on_demand;
  std::optional<Money> spot;
  std::vector<std::string> notes;  // what was skipped and why

  bool operator==(const GpuPrice&) const = default;
};

// One entry per (provider, gpu_model) present in `rows`, sorted by provider then gpu_model.
std::vector<GpuPrice> representative_prices(const std::vector<InstancePrice>& rows);

}  // namespace gpurent
