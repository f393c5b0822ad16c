// Acceptance runs: what a node measured of itself, read from the raw output of the tools that
// measured it. `gpurent-accept` (tools/accept/) runs on a node, usually as a job in a container,
// and prints one report: the node, its GPUs, and per stage the tool, its version, the times and the
// tool's raw output. The server never takes a figure from the report's word: it derives every
// figure here, from the raw output, with the parser of the tool that wrote it:
//   gpu      gpurent-gpu-bench (tools/accept/gpu_bench.cu: cuBLAS GEMM and CUDA copies) or its
//            simulated stand-in gpurent-gpu-sim: one JSON object per line, each a GEMM
//            ({"test":"gemm","gpu","uuid","dtype","m","n","k","iterations","seconds"}: TFLOPS =
//            2·m·n·k·iterations ÷ seconds ÷ 10¹²) or a copy ({"test":"copy","gpu","uuid",
//            "direction": d2d|h2d|d2h,"bytes","iterations","seconds"}: GB/s = bytes moved ÷ seconds
//            ÷ 10⁹, where a device-to-device copy moves its bytes twice, read and written, as
//            CUDA's bandwidthTest counts it)
//   nccl     nccl-tests' all_reduce_perf (or the simulated nccl-sim) text output: the bus bandwidth
//            of the largest message, out of place; the tool's own "Avg bus bandwidth" is kept too
//   storage  fio --output-format=json: read and write bytes per second summed over its jobs
//   network  iperf3 -J: the receiver's bits per second
// Figures are integers in fixed units (TFLOPS ×10, GB/s ×100, MB/s, Mbit/s), never floating point
// once derived. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/fields.h"
#include "core/result.h"

namespace gpurent {

inline constexpr const char* kAcceptanceFormat = "gpurent-acceptance/1";
inline constexpr size_t kMaxStageOutputBytes = 256 * 1024;  // each stage's raw output

// ---- the tools' outputs ----

struct GemmFigure {
  int64_t gpu = 0;
  std::string uuid;
  std::string dtype;       // fp16, bf16, fp8
  int64_t tflops_x10 = 0;  // 871.4 TFLOPS -> 8714
};
struct CopyFigure {
  int64_t gpu = 0;
  std::string uuid;
  std::string direction;    // d2d, h2d, d2h
  int64_t gbps_x100 = 0;    // 4012.35 GB/s -> 401235
};
struct GpuBenchFigures {
  std::vector<GemmFigure> gemm;
  std::vector<CopyFigure> copies;
};
// Lines that are not JSON objects (a banner, a warning) are skipped; a JSON line that is a test
// with a missing or impossible field is an error naming the line.
Result<GpuBenchFigures> parse_gpu_bench(std::string_view text);

struct NcclFigures {
  int64_t ranks = 0;                 // "#  Rank  N ..." lines
  int64_t peak_busbw_x100 = 0;       // GB/s ×100 at the largest size, out of place
  int64_t peak_size_bytes = 0;
  std::optional<int64_t> avg_busbw_x100;  // the tool's "Avg bus bandwidth"
  int64_t wrong = 0;                 // #wrong summed (a number; "N/A" counts 0; 0 for releases before 2.11)
  // The hosts the ranks ran on ("#  Rank 0 Group 0 Pid 1 on HOST device 0 ..."), distinct, in
  // rank order: more than one when the all-reduce ran across nodes (under mpirun or srun).
  std::vector<std::string> hosts;
};
// Columns are found by the table header's names, so releases with and without the root column
// read alike. A bus bandwidth above 100,000 GB/s is an error, not a figure.
Result<NcclFigures> parse_nccl_tests(std::string_view text);

struct FioFigures {
  std::string version;  // "fio-3.33"
  int64_t read_mbps = 0, write_mbps = 0;  // MB/s (10⁶ bytes), summed over the jobs
  int64_t read_iops = 0, write_iops = 0;
};
Result<FioFigures> parse_fio_json(std::string_view text);

struct Iperf3Figures {
  std::string version;  // "iperf 3.12"
  int64_t received_mbps = 0;  // Mbit/s at the receiver
  int64_t sent_mbps = 0;
  int64_t retransmits = 0;
};
Result<Iperf3Figures> parse_iperf3_json(std::string_view text);

// ---- the report ----

enum class AcceptanceStageKind { kGpu, kNccl, kStorage, kNetwork };
inline constexpr EnumEntry<AcceptanceStageKind> kAcceptanceStageNames[] = {{AcceptanceStageKind::kGpu, "gpu"},
                                                                          {AcceptanceStageKind::kNccl, "nccl"},
                                                                          {AcceptanceStageKind::kStorage, "storage"},
                                                                          {AcceptanceStageKind::kNetwork, "network"}};

struct AcceptanceGpu {
  int64_t index = 0;
  std::string uuid;  // may be empty when the source cannot tell (no NVML, no CUDA)
  std::string name;
};

struct AcceptanceStage {
  AcceptanceStageKind kind = AcceptanceStageKind::kGpu;
  std::string tool, tool_version;
  std::string status;  // ok, skipped, failed
  std::string reason;  // skipped or failed: why
  std::string peer;    // network: the iperf3 server measured against ("127.0.0.1 (loopback…)")
  TimeMs started_at = 0, finished_at = 0;
  std::string output;  // the tool's raw output
  bool simulated = false;  // the tool is a simulated stand-in (gpurent-gpu-sim, nccl-sim)
  // Derived from `output` (status ok only):
  GpuBenchFigures gpu;
  NcclFigures nccl;
  FioFigures storage;
  Iperf3Figures network;
};

struct AcceptanceReport {
  std::string node;  // the node's name as the runner was told it
  std::string hostname;
  std::string tool_version;  // gpurent-accept's
  std::vector<AcceptanceGpu> gpus;
  TimeMs started_at = 0, finished_at = 0;
  std::vector<AcceptanceStage> stages;
};

// Reads a report and derives every stage's figures from its raw output; errors name the field
// ("stages[2].output: fio: …"). A stage whose tool is not the one its kind is read with is refused.
Result<AcceptanceReport> parse_acceptance_report(const json& body);

// The report in a job's output: the text after the last line starting "GPURENT-ACCEPTANCE-REPORT ".
inline constexpr std::string_view kReportMarker = "GPURENT-ACCEPTANCE-REPORT ";
std::optional<std::string> find_report_in_log(std::string_view log);

// The simulated GPU source (machines without GPUs: tests, the demo): the lines gpurent-gpu-bench
// would print for GPUs of these figures (tool gpurent-gpu-sim), and the table all_reduce_perf
// would print for this bus bandwidth over `ranks` GPUs, 8 MiB to 1 GiB (tool nccl-sim), the ranks
// split evenly over `hosts` in order (none: one host, "sim"). A figure
// of 0 leaves its line out. Reading them back gives the figures (to their rounding).
struct SimulatedGpu {
  int64_t index = 0;
  std::string uuid, name;
  int64_t fp16_tflops_x10 = 0, bf16_tflops_x10 = 0, fp8_tflops_x10 = 0;
  int64_t hbm_gbps_x100 = 0, h2d_gbps_x100 = 0, d2h_gbps_x100 = 0;
};
std::string simulated_gpu_bench(const std::vector<SimulatedGpu>& gpus);
std::string simulated_nccl_tests(int64_t busbw_x100, int64_t ranks, const std::vector<std::string>& hosts = {});

// Decimal text of a fixed-point figure: (8714, 1) -> "871.4", (401235, 2) -> "4012.35".
std::string fixed_text(int64_t v, int decimals);

}  // namespace gpurent
