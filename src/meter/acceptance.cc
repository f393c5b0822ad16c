// Parsers of the acceptance tools' outputs and of gpurent-accept's report (acceptance.h).
#include "meter/acceptance.h"

#include <algorithm>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "core/fields.h"

namespace gpurent {

namespace {

constexpr double kMaxFigure = 1e15;  // any figure above this (in its unit) is nonsense
// The most bus bandwidth a measurement may record (model/measurement.cc's busbw_gbps bound).
constexpr double kMaxBusbwGbps = 100'000;

Error tool_error(const std::string& tool, const std::string& why) { return Error::invalid("", tool + ": " + why); }

// A finite, non-negative JSON number; nullopt otherwise.
std::optional<double> number_at(const json& obj, const char* key) {
  if (!obj.is_object()) return std::nullopt;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < 0 || v > kMaxFigure) return std::nullopt;
  return v;
}

std::optional<int64_t> whole_at(const json& obj, const char* key, int64_t min, int64_t max) {
  if (!obj.is_object()) return std::nullopt;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number_integer()) return std::nullopt;
  const int64_t v = it->get<int64_t>();
  if (v < min || v > max) return std::nullopt;
  return v;
}

std::string string_at(const json& obj, const char* key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

// Rounds half away from zero; v is finite and bounded by the callers.
int64_t round_figure(double v) { return static_cast<int64_t>(std::llround(v)); }

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> out;
  size_t at = 0;
  while (at <= text.size()) {
    size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(at, nl - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back(line);
    at = nl + 1;
  }
  return out;
}

std::vector<std::string_view> split_blanks(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

std::optional<double> decimal(std::string_view s) {
  if (s.empty() || s.size() > 32) return std::nullopt;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')) return std::nullopt;
  const std::string copy(s);
  char* end = nullptr;
  const double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !std::isfinite(v) || v < 0 || v > kMaxFigure) return std::nullopt;
  return v;
}

bool valid_dtype(const std::string& d) { return d == "fp16" || d == "bf16" || d == "fp8"; }
bool valid_direction(const std::string& d) { return d == "d2d" || d == "h2d" || d == "d2h"; }

}  // namespace

std::string fixed_text(int64_t v, int decimals) {
  const bool neg = v < 0;
  uint64_t a = neg ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  uint64_t scale = 1;
  for (int i = 0; i < decimals; ++i) scale *= 10;
  std::string out = (neg ? "-" : "") + std::to_string(a / scale);
  if (decimals > 0) {
    std::string frac = std::to_string(a % scale);
    out += "." + std::string(static_cast<size_t>(decimals) - frac.size(), '0') + frac;
  }
  return out;
}

Result<GpuBenchFigures> parse_gpu_bench(std::string_view text) {
  GpuBenchFigures out;
  int line_no = 0;
  for (std::string_view line : split_lines(text)) {
    ++line_no;
    if (line.empty() || line.front() != '{') continue;
    json j = json::parse(line, nullptr, false);
    const std::string where = "line " + std::to_string(line_no);
    if (j.is_discarded() || !j.is_object()) return tool_error("gpu-bench", where + " is not a JSON object");
    const std::string test = string_at(j, "test");
    auto gpu = whole_at(j, "gpu", 0, 63);
    auto iterations = whole_at(j, "iterations", 1, 1'000'000'000);
    auto seconds = number_at(j, "seconds");
    if (!gpu) return tool_error("gpu-bench", where + ": gpu must be an index 0..63");
    if (!iterations) return tool_error("gpu-bench", where + ": iterations must be a whole number from 1");
    if (!seconds || *seconds < 1e-6) return tool_error("gpu-bench", where + ": seconds must be a positive number");
    const std::string uuid = string_at(j, "uuid");
    if (uuid.size() > 80) return tool_error("gpu-bench", where + ": uuid is too long");
    if (test == "gemm") {
      const std::string dtype = string_at(j, "dtype");
      auto m = whole_at(j, "m", 1, 1 << 20), n = whole_at(j, "n", 1, 1 << 20), k = whole_at(j, "k", 1, 1 << 20);
      if (!valid_dtype(dtype)) return tool_error("gpu-bench", where + ": dtype must be fp16, bf16 or fp8");
      if (!m || !n || !k) return tool_error("gpu-bench", where + ": m, n and k must be whole numbers 1..1048576");
      // 2·m·n·k floating-point operations per multiply (a multiply and an add per term).
      const double flops = 2.0 * static_cast<double>(*m) * static_cast<double>(*n) * static_cast<double>(*k) *
                           static_cast<double>(*iterations);
      const double tflops = flops / *seconds / 1e12;
      if (tflops > 1e6) return tool_error("gpu-bench", where + ": more than 1,000,000 TFLOPS is not a measurement");
      // A figure is kept to 0.1 TFLOPS, and a measurement of 0.0 cannot be recorded.
      if (tflops < 0.05) return tool_error("gpu-bench", where + ": under 0.05 TFLOPS (too small a GEMM to measure a GPU)");
      out.gemm.push_back({*gpu, uuid, dtype, round_figure(tflops * 10)});
    } else if (test == "copy") {
      const std::string dir = string_at(j, "direction");
      auto bytes = whole_at(j, "bytes", 1, int64_t{1} << 40);
      if (!valid_direction(dir)) return tool_error("gpu-bench", where + ": direction must be d2d, h2d or d2h");
      if (!bytes) return tool_error("gpu-bench", where + ": bytes must be a whole number from 1");
      // A device-to-device copy reads and writes every byte (bandwidthTest's convention).
      const double moved = static_cast<double>(*bytes) * static_cast<double>(*iterations) * (dir == "d2d" ? 2.0 : 1.0);
      const double gbps = moved / *seconds / 1e9;
      if (gbps > 1e6) return tool_error("gpu-bench", where + ": more than 1,000,000 GB/s is not a measurement");
      out.copies.push_back({*gpu, uuid, dir, round_figure(gbps * 100)});
    } else {
      return tool_error("gpu-bench", where + ": test must be gemm or copy");
    }
  }
  if (out.gemm.empty() && out.copies.empty()) return tool_error("gpu-bench", "no result line");
  return out;
}

Result<NcclFigures> parse_nccl_tests(std::string_view text) {
  NcclFigures out;
  // The table's columns, from its header: nccl-tests 2.11 and later print a root column and
  // "#wrong" counts, earlier releases neither (their "error" is a magnitude, not counted here).
  std::optional<size_t> busbw_col;
  std::vector<size_t> wrong_cols;
  size_t width = 0;
  for (std::string_view line : split_lines(text)) {
    if (line.rfind("#", 0) == 0) {
      std::vector<std::string_view> w = split_blanks(line.substr(1));
      if (w.size() >= 2 && w[0] == "Rank") {
        ++out.ranks;
        for (size_t i = 2; i + 1 < w.size(); ++i)
          if (w[i] == "on") {
            const std::string host(w[i + 1]);
            if (std::find(out.hosts.begin(), out.hosts.end(), host) == out.hosts.end()) out.hosts.push_back(host);
            break;
          }
      }
      if (!busbw_col && !w.empty() && w[0] == "size") {
        for (size_t i = 0; i < w.size(); ++i) {
          if (w[i] == "busbw" && !busbw_col) busbw_col = i;  // the first: out of place
          if (w[i] == "#wrong") wrong_cols.push_back(i);
        }
        if (busbw_col) width = std::max(*busbw_col, wrong_cols.empty() ? 0 : wrong_cols.front()) + 1;
      }
      if (line.find("Avg bus bandwidth") != std::string_view::npos) {
        const size_t colon = line.find(':');
        if (colon != std::string_view::npos) {
          std::vector<std::string_view> v = split_blanks(line.substr(colon + 1));
          if (!v.empty())
            if (auto d = decimal(v[0])) out.avg_busbw_x100 = round_figure(*d * 100);
        }
      }
      continue;
    }
    if (!busbw_col) continue;
    std::vector<std::string_view> w = split_blanks(line);
    if (w.size() < width) continue;
    auto size = decimal(w[0]);
    auto busbw = decimal(w[*busbw_col]);
    if (!size || !busbw || w[0].find_first_not_of("0123456789") != std::string_view::npos) continue;
    if (*busbw > kMaxBusbwGbps)
      return tool_error("nccl-tests", "a bus bandwidth above 100,000 GB/s is not a measurement");
    for (size_t c : wrong_cols)  // each count bounded by decimal(), the sum by kMaxFigure: no overflow
      if (c < w.size())
        if (auto wrong = decimal(w[c]))
          out.wrong = std::min<int64_t>(out.wrong + static_cast<int64_t>(*wrong), static_cast<int64_t>(kMaxFigure));
    const int64_t bytes = round_figure(*size);
    if (bytes >= out.peak_size_bytes) {
      out.peak_size_bytes = bytes;
      out.peak_busbw_x100 = round_figure(*busbw * 100);
    }
  }
  if (!busbw_col) return tool_error("nccl-tests", "no table header (size … busbw) in the output");
  if (out.peak_size_bytes == 0) return tool_error("nccl-tests", "no result row in the output");
  return out;
}

Result<FioFigures> parse_fio_json(std::string_view text) {
  // fio may print warnings before its JSON: read from the first '{'.
  const size_t brace = text.find('{');
  if (brace == std::string_view::npos) return tool_error("fio", "no JSON object in the output");
  json j = json::parse(text.substr(brace), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return tool_error("fio", "the output is not JSON");
  auto jobs = j.find("jobs");
  if (jobs == j.end() || !jobs->is_array() || jobs->empty()) return tool_error("fio", "no jobs in the output");
  FioFigures out;
  out.version = string_at(j, "fio version");
  double read = 0, write = 0, riops = 0, wiops = 0;
  for (const json& job : *jobs) {
    if (auto e = whole_at(job, "error", 0, 0); !e) return tool_error("fio", "job " + string_at(job, "jobname") + " failed");
    for (const char* dir : {"read", "write"}) {
      auto d = job.find(dir);
      if (d == job.end() || !d->is_object()) return tool_error("fio", std::string("a job has no ") + dir + " section");
      auto bw = number_at(*d, "bw_bytes");
      auto iops = number_at(*d, "iops");
      if (!bw || !iops) return tool_error("fio", std::string(dir) + ".bw_bytes and .iops must be numbers");
      (std::string_view(dir) == "read" ? read : write) += *bw;
      (std::string_view(dir) == "read" ? riops : wiops) += *iops;
    }
  }
  if (read <= 0 && write <= 0) return tool_error("fio", "neither reads nor writes were measured");
  out.read_mbps = round_figure(read / 1e6);
  out.write_mbps = round_figure(write / 1e6);
  out.read_iops = round_figure(riops);
  out.write_iops = round_figure(wiops);
  return out;
}

Result<Iperf3Figures> parse_iperf3_json(std::string_view text) {
  const size_t brace = text.find('{');
  if (brace == std::string_view::npos) return tool_error("iperf3", "no JSON object in the output");
  json j = json::parse(text.substr(brace), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return tool_error("iperf3", "the output is not JSON");
  if (const std::string err = string_at(j, "error"); !err.empty()) return tool_error("iperf3", err.substr(0, 200));
  Iperf3Figures out;
  if (auto st = j.find("start"); st != j.end() && st->is_object()) out.version = string_at(*st, "version");
  auto end = j.find("end");
  if (end == j.end() || !end->is_object()) return tool_error("iperf3", "no end section in the output");
  auto recv = end->find("sum_received");
  auto sent = end->find("sum_sent");
  if (recv == end->end() || sent == end->end()) return tool_error("iperf3", "no sum_received/sum_sent (a UDP or failed test?)");
  auto r = number_at(*recv, "bits_per_second");
  auto s = number_at(*sent, "bits_per_second");
  if (!r || !s) return tool_error("iperf3", "bits_per_second must be numbers");
  out.received_mbps = round_figure(*r / 1e6);
  out.sent_mbps = round_figure(*s / 1e6);
  out.retransmits = whole_at(*sent, "retransmits", 0, std::numeric_limits<int64_t>::max()).value_or(0);
  return out;
}

std::optional<std::string> find_report_in_log(std::string_view log) {
  std::optional<std::string> found;
  for (std::string_view line : split_lines(log))
    if (line.rfind(kReportMarker, 0) == 0) found = std::string(line.substr(kReportMarker.size()));
  return found;
}

std::string simulated_gpu_bench(const std::vector<SimulatedGpu>& gpus) {
  std::string out = "gpurent-gpu-sim 1: simulated GPUs (no device was measured)\n";
  constexpr int64_t n = 8192, iterations = 50;
  for (const SimulatedGpu& g : gpus) {
    const json base = {{"gpu", g.index}, {"uuid", g.uuid}, {"name", g.name.empty() ? "simulated GPU" : g.name}};
    const std::pair<const char*, int64_t> gemms[] = {
        {"fp16", g.fp16_tflops_x10}, {"bf16", g.bf16_tflops_x10}, {"fp8", g.fp8_tflops_x10}};
    for (const auto& [dtype, x10] : gemms) {
      if (x10 <= 0) continue;
      json l = base;
      l.update({{"test", "gemm"}, {"dtype", dtype}, {"m", n}, {"n", n}, {"k", n}, {"iterations", iterations},
                {"seconds", 2.0 * n * n * n * iterations / (static_cast<double>(x10) / 10 * 1e12)}});
      out += l.dump() + "\n";
    }
    const std::pair<const char*, int64_t> copies[] = {
        {"d2d", g.hbm_gbps_x100}, {"h2d", g.h2d_gbps_x100}, {"d2h", g.d2h_gbps_x100}};
    for (const auto& [dir, x100] : copies) {
      if (x100 <= 0) continue;
      constexpr int64_t bytes = int64_t{1} << 30, times = 20;
      const double moved = static_cast<double>(bytes) * times * (std::string_view(dir) == "d2d" ? 2 : 1);
      json l = base;
      l.update({{"test", "copy"}, {"direction", dir}, {"bytes", bytes}, {"iterations", times},
                {"seconds", moved / (static_cast<double>(x100) / 100 * 1e9)}});
      out += l.dump() + "\n";
    }
  }
  return out;
}

std::string simulated_nccl_tests(int64_t busbw_x100, int64_t ranks, const std::vector<std::string>& hosts) {
  std::string out = "# nccl-sim 1: simulated all-reduce (no device was measured)\n";
  out += "# nThread 1 nGpus " + std::to_string(ranks) + " minBytes 8388608 maxBytes 1073741824 step: 2(factor)\n#\n";
  out += "# Using devices\n";
  for (int64_t r = 0; r < ranks; ++r)
    out += "#  Rank " + std::to_string(r) + " Group  0 Pid 1 on " +
           (hosts.empty() ? std::string("sim") : hosts[static_cast<size_t>(r) * hosts.size() / static_cast<size_t>(ranks)]) +
           " device " + std::to_string(hosts.empty() ? r : r % std::max<int64_t>(1, ranks / static_cast<int64_t>(hosts.size()))) +
           " simulated\n";
  out += "#\n#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
         "#wrong\n";
  // nccl-tests' all-reduce: busbw = algbw × 2(n−1)/n.
  const double busbw = static_cast<double>(busbw_x100) / 100;
  const double algbw = ranks > 1 ? busbw * static_cast<double>(ranks) / (2.0 * static_cast<double>(ranks - 1)) : busbw;
  for (int64_t size = int64_t{8} << 20; size <= int64_t{1} << 30; size *= 2) {
    const double us = static_cast<double>(size) / (algbw * 1e9) * 1e6;
    char row[200];
    std::snprintf(row, sizeof row, "%12lld %13lld     float     sum      -1 %8.1f %7.2f %7.2f      0 %8.1f %7.2f %7.2f      0\n",
                  static_cast<long long>(size), static_cast<long long>(size / 4), us, algbw, busbw, us, algbw, busbw);
    out += row;
  }
  return out + "# Out of bounds values : 0 OK\n";
}

Result<AcceptanceReport> parse_acceptance_report(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  AcceptanceReport r;
  const std::string format = f.str("format", {.max_len = 64});
  if (!format.empty() && format != kAcceptanceFormat)
    f.error("format", "must be " + std::string(kAcceptanceFormat) + " (a report of another gpurent-accept?)");
  r.node = f.str("node", {.max_len = 63, .pattern = kSlug, .pattern_help = kSlugHelp});  // the node's name
  r.hostname = f.opt_str("hostname", {.min_len = 0, .max_len = 255}).value_or("");
  r.tool_version = f.opt_str("tool_version", {.min_len = 0, .max_len = 64}).value_or("");
  r.started_at = f.time("started_at");
  r.finished_at = f.time("finished_at");
  if (r.finished_at < r.started_at) f.error("finished_at", "is before started_at");
  f.objects("gpus", false, 64, [&](Fields& g, size_t) {
    AcceptanceGpu gpu;
    gpu.index = g.integer("index", 0, 63);
    gpu.uuid = g.opt_str("uuid", {.min_len = 0, .max_len = 80}).value_or("");
    gpu.name = g.opt_str("name", {.min_len = 0, .max_len = 128}).value_or("");
    for (const auto& seen : r.gpus)
      if (seen.index == gpu.index) g.error("index", "is listed twice");
    r.gpus.push_back(std::move(gpu));
  });
  f.objects("stages", true, 16, [&](Fields& s, size_t) {
    AcceptanceStage st;
    st.kind = s.enumeration("stage", kAcceptanceStageNames);
    st.tool = s.str("tool", {.max_len = 64});
    st.tool_version = s.opt_str("tool_version", {.min_len = 0, .max_len = 128}).value_or("");
    st.status = s.str("status", {.max_len = 16});
    st.reason = s.opt_str("reason", {.min_len = 0, .max_len = 1024}).value_or("");
    st.peer = s.opt_str("peer", {.min_len = 0, .max_len = 256}).value_or("");
    st.started_at = s.time("started_at");
    st.finished_at = s.time("finished_at");
    // The raw output is kept as the tool wrote it (line breaks, tabs), only bounded in size.
    if (const json* o = s.raw("output")) {
      if (!o->is_string())
        s.error("output", "must be a string (the tool's raw output)");
      else if (o->get_ref<const std::string&>().size() > kMaxStageOutputBytes)
        s.error("output", "is longer than " + std::to_string(kMaxStageOutputBytes) + " bytes");
      else
        st.output = o->get<std::string>();
    }
    if (st.finished_at < st.started_at) s.error("finished_at", "is before started_at");
    if (st.status != "ok" && st.status != "skipped" && st.status != "failed")
      s.error("status", "must be ok, skipped or failed");
    if ((st.status == "skipped" || st.status == "failed") && st.reason.empty())
      s.error("reason", "a skipped or failed stage says why");
    for (const auto& seen : r.stages)
      if (seen.kind == st.kind) s.error("stage", "is listed twice");
    // Each stage is read with its tool's parser; a tool gpurent cannot read is refused.
    using K = AcceptanceStageKind;
    const bool known = (st.kind == K::kGpu && (st.tool == "gpurent-gpu-bench" || st.tool == "gpurent-gpu-sim")) ||
                       (st.kind == K::kNccl && (st.tool == "all_reduce_perf" || st.tool == "nccl-sim")) ||
                       (st.kind == K::kStorage && st.tool == "fio") || (st.kind == K::kNetwork && st.tool == "iperf3");
    if (!st.tool.empty() && !known) s.error("tool", "is not a tool this stage is read from");
    st.simulated = st.tool == "gpurent-gpu-sim" || st.tool == "nccl-sim";
    if (known && st.status == "ok") {
      auto fail = [&](const Error& e) { s.error("output", e.message); };
      switch (st.kind) {
        case K::kGpu:
          if (auto g = parse_gpu_bench(st.output)) st.gpu = std::move(*g); else fail(g.error());
          break;
        case K::kNccl:
          if (auto n = parse_nccl_tests(st.output)) st.nccl = *n; else fail(n.error());
          break;
        case K::kStorage:
          if (auto o = parse_fio_json(st.output)) st.storage = *o; else fail(o.error());
          break;
        case K::kNetwork:
          if (auto o = parse_iperf3_json(st.output)) st.network = *o; else fail(o.error());
          break;
      }
    }
    r.stages.push_back(std::move(st));
  });
  f.finish();
  if (!errs.empty()) return errs.to_error();
  // Every GPU figure names a GPU the report lists, with the same UUID.
  for (size_t i = 0; i < r.stages.size(); ++i) {
    const auto check = [&](int64_t gpu, const std::string& uuid) -> std::optional<Error> {
      for (const auto& g : r.gpus)
        if (g.index == gpu) {
          if (!uuid.empty() && !g.uuid.empty() && uuid != g.uuid)
            return Error::invalid("stages[" + std::to_string(i) + "].output",
                                  "GPU " + std::to_string(gpu) + " is " + uuid + " in the output but " + g.uuid + " in gpus");
          return std::nullopt;
        }
      return Error::invalid("stages[" + std::to_string(i) + "].output",
                            "GPU " + std::to_string(gpu) + " is not in the report's gpus");
    };
    for (const auto& g : r.stages[i].gpu.gemm)
      if (auto e = check(g.gpu, g.uuid)) return *e;
    for (const auto& c : r.stages[i].gpu.copies)
      if (auto e = check(c.gpu, c.uuid)) return *e;
  }
  return r;
}

}  // namespace gpurent
