// gpurent-accept: runs the acceptance stages on the node it runs on (usually as a job in a
// container, docs/acceptance.md) and prints the report that `POST /api/v1/acceptance-runs`
// records: the node, its GPUs, and per stage the tool, its version, the times and the tool's raw
// output. It prints figures for the reader as it goes, but the server derives its own from the raw
// output (src/meter/acceptance.h). The report is the last line of standard output, after
// "GPURENT-ACCEPTANCE-REPORT "; --out also writes it to a file.
//
// Stages (--stages, default all four):
//   gpu      gpurent-gpu-bench (CUDA, built where nvcc is) — or, with --gpu-sim FILE, the simulated
//            GPU source: the figures the file gives, written in the bench's format and marked
//            simulated (tool gpurent-gpu-sim), for machines without GPUs
//   nccl     nccl-tests' all_reduce_perf over the visible GPUs (-b 8M -e 1G -f 2 -g N); with
//            --nccl-launch "LAUNCHER ARGS" across nodes instead: the launcher (mpirun -np 16
//            -H gpn1:8,gpn2:8, or srun --mpi=pmix inside an allocation) starts one rank per GPU
//            (-g 1) of an nccl-tests build with MPI; the ranks' hosts are in the output. With
//            --gpu-sim (and no --nccl-tests), the file's nccl_busbw_gbps as an nccl-tests table
//            (tool nccl-sim), its ranks split over the file's nccl_hosts when it names them
//   storage  fio: a sequential write (fsync at its end) then a sequential read of --storage-size-mb
//            in --storage-dir, 1 MiB blocks; the file is removed afterwards
//   network  iperf3 for --network-seconds against --iperf3-server, or against an iperf3 server it
//            starts on loopback (then it measures this machine's TCP stack, and says so)
// A stage whose tool is missing is reported skipped with why; exit status 0 unless the arguments
// are wrong (2) or the report cannot be written (1).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/fields.h"
#include "exec/process.h"
#include "meter/acceptance.h"

namespace fs = std::filesystem;
using gpurent::json;

namespace {

constexpr const char* kVersion = "1";
constexpr int kToolTimeoutMs = 20 * 60 * 1000;

struct Options {
  std::string node, gpu_sim, gpu_bench, nccl_tests, storage_dir = "/tmp", iperf3_server, out;
  std::vector<std::string> nccl_launch;  // launcher argv for an all-reduce across nodes
  std::set<std::string> stages{"gpu", "nccl", "storage", "network"};
  int64_t storage_size_mb = 256, network_seconds = 3;
};

int64_t now_ms() {
  static gpurent::SystemClock clock;
  return clock.now();
}

std::string self_dir() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "" : p.parent_path().string();
}

// The path of `name`: `given` when set, else beside this program, else on PATH; "" when none.
std::string find_tool(const std::string& given, const std::string& name) {
  if (!given.empty()) return access(given.c_str(), X_OK) == 0 ? given : "";
  if (const std::string here = self_dir() + "/" + name; access(here.c_str(), X_OK) == 0) return here;
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(ss, dir, ':');)
    if (const std::string p = dir + "/" + name; !dir.empty() && access(p.c_str(), X_OK) == 0) return p;
  return "";
}

std::string bounded(std::string s) {
  if (s.size() > gpurent::kMaxStageOutputBytes) s.resize(gpurent::kMaxStageOutputBytes);
  // JSON text must be UTF-8: bytes a tool wrote that are not ASCII-printable are replaced.
  for (char& c : s)
    if (static_cast<unsigned char>(c) >= 0x80 || (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t')) c = '?';
  return s;
}

json stage_doc(const char* kind, const std::string& tool) {
  return {{"stage", kind}, {"tool", tool}, {"tool_version", ""}, {"status", "skipped"},
          {"reason", ""},  {"started_at", gpurent::format_rfc3339(now_ms())}};
}

void finish(json& st, const std::string& status, const std::string& reason, const std::string& output) {
  st["status"] = status;
  if (reason.empty()) st.erase("reason"); else st["reason"] = reason.substr(0, 1000);
  st["output"] = bounded(output);
  st["finished_at"] = gpurent::format_rfc3339(now_ms());
}

// Runs argv; on failure finishes `st` as failed and returns false.
bool run_tool(json& st, const std::vector<std::string>& argv, std::string* out) {
  auto r = gpurent::run_process(argv, {}, "", kToolTimeoutMs);
  if (!r.ok()) {
    finish(st, "failed", r.error().message, "");
    return false;
  }
  *out = r->out;
  if (r->exit_code != 0) {
    finish(st, "failed", argv[0] + " exited with status " + std::to_string(r->exit_code) + ": " + r->err.substr(0, 500),
           r->out + r->err);
    return false;
  }
  return true;
}

// ---- gpu ----

json read_sim(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("--gpu-sim: cannot read " + path);
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("gpus") || !j["gpus"].is_array() || j["gpus"].empty())
    throw std::runtime_error("--gpu-sim: " + path + " is not {\"gpus\": [{\"index\", \"uuid\", \"fp16_tflops\", …}]}");
  return j;
}

double sim_figure(const json& g, const char* key) {
  auto it = g.find(key);
  return it != g.end() && it->is_number() && it->get<double>() > 0 ? it->get<double>() : 0;
}

// The file's figures as the simulated GPU source takes them (fixed point).
std::vector<gpurent::SimulatedGpu> sim_gpus(const json& sim) {
  std::vector<gpurent::SimulatedGpu> out;
  auto x = [](const json& g, const char* key, double scale) { return static_cast<int64_t>(sim_figure(g, key) * scale + 0.5); };
  for (const json& g : sim["gpus"])
    out.push_back({g.value("index", int64_t{0}), g.value("uuid", ""), g.value("name", ""), x(g, "fp16_tflops", 10),
                   x(g, "bf16_tflops", 10), x(g, "fp8_tflops", 10), x(g, "hbm_gbps", 100), x(g, "h2d_gbps", 100),
                   x(g, "d2h_gbps", 100)});
  return out;
}

json gpu_stage(const Options& o, const json* sim, json& gpus) {
  json st = stage_doc("gpu", sim ? "gpurent-gpu-sim" : "gpurent-gpu-bench");
  std::string out;
  if (sim) {
    st["tool_version"] = kVersion;
    out = gpurent::simulated_gpu_bench(sim_gpus(*sim));
  } else {
    const std::string bench = find_tool(o.gpu_bench, "gpurent-gpu-bench");
    if (bench.empty()) {
      finish(st, "skipped", "gpurent-gpu-bench was not found (it is built where nvcc is; --gpu-bench PATH)", "");
      return st;
    }
    if (!run_tool(st, {bench}, &out)) return st;
    if (size_t nl = out.find('\n'); out.rfind("gpurent-gpu-bench ", 0) == 0)
      st["tool_version"] = out.substr(18, std::min(nl, out.size()) - 18).substr(0, 120);
  }
  auto figures = gpurent::parse_gpu_bench(out);
  if (!figures.ok()) {
    finish(st, "failed", figures.error().message, out);
    return st;
  }
  // The GPUs the stage measured: index, UUID and name from its lines.
  std::set<int64_t> seen;
  for (const std::string& line : [&] {
         std::vector<std::string> v;
         std::stringstream ss(out);
         for (std::string l; std::getline(ss, l);) v.push_back(l);
         return v;
       }()) {
    json j = json::parse(line, nullptr, false);
    if (j.is_object() && j.contains("gpu") && j["gpu"].is_number_integer() && seen.insert(j["gpu"].get<int64_t>()).second)
      gpus.push_back({{"index", j["gpu"]}, {"uuid", j.value("uuid", "")}, {"name", j.value("name", "")}});
  }
  for (const auto& g : figures->gemm)
    std::cout << "gpu " << g.gpu << " " << g.dtype << " GEMM: " << gpurent::fixed_text(g.tflops_x10, 1) << " TFLOPS\n";
  for (const auto& c : figures->copies)
    std::cout << "gpu " << c.gpu << " " << c.direction << " copy: " << gpurent::fixed_text(c.gbps_x100, 2) << " GB/s\n";
  finish(st, "ok", "", out);
  return st;
}

// ---- nccl ----

json nccl_stage(const Options& o, const json* gpu_sim, size_t gpu_count) {
  // --nccl-tests names a real all_reduce_perf: it runs even beside --gpu-sim.
  const json* sim = o.nccl_tests.empty() ? gpu_sim : nullptr;
  json st = stage_doc("nccl", sim ? "nccl-sim" : "all_reduce_perf");
  if (gpu_count < 2) {
    finish(st, "skipped", "an all-reduce needs at least two GPUs; " + std::to_string(gpu_count) + " measured", "");
    return st;
  }
  std::string out;
  if (sim) {
    const double busbw = sim_figure(*sim, "nccl_busbw_gbps");
    if (busbw <= 0) {
      finish(st, "skipped", "the --gpu-sim file gives no nccl_busbw_gbps", "");
      return st;
    }
    st["tool_version"] = kVersion;
    std::vector<std::string> hosts;
    if (const auto it = sim->find("nccl_hosts"); it != sim->end() && it->is_array())
      for (const json& h : *it)
        if (h.is_string() && !h.get<std::string>().empty()) hosts.push_back(h.get<std::string>());
    // Every simulated host has as many GPUs as this node.
    out = gpurent::simulated_nccl_tests(static_cast<int64_t>(busbw * 100 + 0.5),
                                        static_cast<int64_t>(gpu_count * std::max<size_t>(1, hosts.size())), hosts);
  } else {
    const std::string tool = find_tool(o.nccl_tests.empty() ? "" : o.nccl_tests + "/all_reduce_perf", "all_reduce_perf");
    if (tool.empty()) {
      finish(st, "skipped", "all_reduce_perf (nccl-tests) was not found (--nccl-tests DIR)", "");
      return st;
    }
    std::vector<std::string> argv = o.nccl_launch;  // across nodes: one rank per GPU under the launcher
    for (const std::string& a : {tool, std::string("-b"), std::string("8M"), std::string("-e"), std::string("1G"),
                                 std::string("-f"), std::string("2"), std::string("-g")})
      argv.push_back(a);
    argv.push_back(o.nccl_launch.empty() ? std::to_string(gpu_count) : "1");
    if (!run_tool(st, argv, &out)) return st;
    if (size_t at = out.find("NCCL version "); at != std::string::npos)
      st["tool_version"] = out.substr(at, out.find_first_of(" \n", at + 13) - at);
  }
  auto n = gpurent::parse_nccl_tests(out);
  if (!n.ok()) {
    finish(st, "failed", n.error().message, out);
    return st;
  }
  std::cout << "nccl all-reduce bus bandwidth: " << gpurent::fixed_text(n->peak_busbw_x100, 2) << " GB/s at "
            << n->peak_size_bytes << " bytes over " << n->ranks << " ranks on " << n->hosts.size() << " host(s)\n";
  finish(st, "ok", "", out);
  return st;
}

// ---- storage ----

json storage_stage(const Options& o) {
  json st = stage_doc("storage", "fio");
  const std::string fio = find_tool("", "fio");
  if (fio.empty()) {
    finish(st, "skipped", "fio was not found (Debian package fio)", "");
    return st;
  }
  std::error_code ec;
  fs::create_directories(o.storage_dir, ec);
  const std::string file = o.storage_dir + "/gpurent-accept-" + std::to_string(getpid()) + ".fio";
  const std::string size = std::to_string(o.storage_size_mb) + "M";
  std::string out;
  const bool ok = run_tool(st,
                           {fio, "--output-format=json", "--filename=" + file, "--bs=1M", "--size=" + size,
                            "--name=write", "--rw=write", "--end_fsync=1", "--name=read", "--stonewall", "--rw=read"},
                           &out);
  fs::remove(file, ec);
  if (!ok) return st;
  auto f = gpurent::parse_fio_json(out);
  if (!f.ok()) {
    finish(st, "failed", f.error().message, out);
    return st;
  }
  st["tool_version"] = f->version;
  std::cout << "storage (" << o.storage_dir << ", " << size << "): write " << f->write_mbps << " MB/s, read "
            << f->read_mbps << " MB/s\n";
  finish(st, "ok", "", out);
  return st;
}

// ---- network ----

json network_stage(const Options& o) {
  json st = stage_doc("network", "iperf3");
  const std::string iperf3 = find_tool("", "iperf3");
  if (iperf3.empty()) {
    finish(st, "skipped", "iperf3 was not found (Debian package iperf3)", "");
    return st;
  }
  std::string host = o.iperf3_server, port = "5201";
  if (host.empty()) {
    // A one-test server on loopback, daemonized: it exits after the test.
    host = "127.0.0.1";
    port = std::to_string(20000 + getpid() % 20000);
    std::string ignored;
    if (!run_tool(st, {iperf3, "-s", "-1", "-D", "-B", host, "-p", port}, &ignored)) return st;
    st["peer"] = "127.0.0.1 (loopback: this machine's TCP stack, not its network)";
    usleep(300'000);
  } else {
    if (size_t colon = host.rfind(':'); colon != std::string::npos) {
      port = host.substr(colon + 1);
      host = host.substr(0, colon);
    }
    st["peer"] = host + ":" + port;
  }
  std::string out;
  if (!run_tool(st, {iperf3, "-c", host, "-p", port, "-t", std::to_string(o.network_seconds), "-J"}, &out)) return st;
  auto n = gpurent::parse_iperf3_json(out);
  if (!n.ok()) {
    finish(st, "failed", n.error().message, out);
    return st;
  }
  st["tool_version"] = n->version;
  std::cout << "network (" << st["peer"].get<std::string>() << "): " << n->received_mbps << " Mbit/s received\n";
  finish(st, "ok", "", out);
  return st;
}

int usage(const std::string& why) {
  std::cerr << "gpurent-accept: " << why << "\n"
            << "usage: gpurent-accept --node NAME [--stages gpu,nccl,storage,network] [--gpu-sim FILE]\n"
               "       [--gpu-bench PATH] [--nccl-tests DIR] [--nccl-launch \"LAUNCHER ARGS\"]\n"
               "       [--storage-dir DIR] [--storage-size-mb N]\n"
               "       [--iperf3-server HOST[:PORT]] [--network-seconds N] [--out FILE]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::vector<std::string> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw std::invalid_argument(a + " needs a value");
      return args[++i];
    };
    try {
      if (a == "--node") o.node = value();
      else if (a == "--gpu-sim") o.gpu_sim = value();
      else if (a == "--gpu-bench") o.gpu_bench = value();
      else if (a == "--nccl-tests") o.nccl_tests = value();
      else if (a == "--nccl-launch") {
        std::stringstream words(value());
        o.nccl_launch.clear();
        for (std::string w; words >> w;) o.nccl_launch.push_back(w);
        if (o.nccl_launch.empty()) return usage("--nccl-launch: give the launcher and its arguments");
      }
      else if (a == "--storage-dir") o.storage_dir = value();
      else if (a == "--iperf3-server") o.iperf3_server = value();
      else if (a == "--out") o.out = value();
      else if (a == "--storage-size-mb") o.storage_size_mb = std::stoll(value());
      else if (a == "--network-seconds") o.network_seconds = std::stoll(value());
      else if (a == "--stages") {
        o.stages.clear();
        std::stringstream ss(value());
        for (std::string s; std::getline(ss, s, ',');) {
          if (s != "gpu" && s != "nccl" && s != "storage" && s != "network")
            return usage("--stages: '" + s + "' is not one of gpu, nccl, storage, network");
          o.stages.insert(s);
        }
      } else if (a == "--help" || a == "-h") {
        usage("runs the acceptance stages on this node and prints the report");
        return 0;
      } else {
        return usage("unknown argument '" + a + "'");
      }
    } catch (const std::exception& e) {
      return usage(a + ": " + e.what());
    }
  }
  if (o.node.empty()) return usage("--node is required (the node's name as gpurent knows it)");
  if (o.storage_size_mb < 1 || o.storage_size_mb > 1'048'576) return usage("--storage-size-mb must be 1..1048576");
  if (o.network_seconds < 1 || o.network_seconds > 600) return usage("--network-seconds must be 1..600");
  json sim;
  try {
    if (!o.gpu_sim.empty()) sim = read_sim(o.gpu_sim);
  } catch (const std::exception& e) {
    return usage(e.what());
  }
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  json report = {{"format", gpurent::kAcceptanceFormat}, {"node", o.node}, {"hostname", host},
                 {"tool_version", kVersion}, {"started_at", gpurent::format_rfc3339(now_ms())}};
  json gpus = json::array(), stages = json::array();
  const json* simp = o.gpu_sim.empty() ? nullptr : &sim;
  if (o.stages.count("gpu")) stages.push_back(gpu_stage(o, simp, gpus));
  if (gpus.empty() && simp)
    for (const json& g : sim["gpus"]) gpus.push_back({{"index", g.value("index", 0)}, {"uuid", g.value("uuid", "")}});
  if (o.stages.count("nccl")) stages.push_back(nccl_stage(o, simp, gpus.size()));
  if (o.stages.count("storage")) stages.push_back(storage_stage(o));
  if (o.stages.count("network")) stages.push_back(network_stage(o));
  report["gpus"] = gpus;
  report["stages"] = stages;
  report["finished_at"] = gpurent::format_rfc3339(now_ms());
  for (const json& s : stages)
    if (s["status"] != "ok") std::cout << s["stage"].get<std::string>() << ": " << s["status"].get<std::string>() << " — " << s.value("reason", "") << "\n";
  const std::string text = report.dump();
  if (!o.out.empty()) {
    std::ofstream f(o.out);
    f << text << "\n";
    if (!f) {
      std::cerr << "gpurent-accept: cannot write " << o.out << "\n";
      return 1;
    }
  }
  std::cout << gpurent::kReportMarker << text << std::endl;
  return 0;
}
