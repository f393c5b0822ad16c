#include "sim/philly.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "sim/trace_reader.h"

namespace gpurent {
namespace {

// "2017-10-09 07:01:55" -> ms since the epoch (UTC), via the RFC 3339 parser.
std::optional<TimeMs> parse_stamp(const std::string& s) {
  if (s.size() != 19 || s[10] != ' ') return std::nullopt;
  auto t = parse_rfc3339(s.substr(0, 10) + "T" + s.substr(11) + "Z", "timestamp");
  if (!t) return std::nullopt;
  return *t;
}

}  // namespace

Result<std::vector<PhillyJob>> read_philly(std::istream& in, const std::string& source) {
  std::string line;
  if (!std::getline(in, line)) return Error::invalid(source, "empty file (expected a header line)");
  if (auto why = csv_line_problem(line, true); !why.empty()) return Error::invalid(source + ":1", why);
  const auto header = split_csv_line(line);
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  for (const char* need : {"timestamp", "duration", "num_gpus", "cluster"})
    if (!col.count(need)) return Error::invalid(source, std::string("missing column '") + need + "'");
  std::vector<PhillyJob> out;
  for (int64_t ln = 2; std::getline(in, line); ++ln) {
    if (line.empty() || line == "\r") continue;
    if (auto why = csv_line_problem(line, false); !why.empty())
      return Error::invalid(source + ":" + std::to_string(ln), why);
    const auto f = split_csv_line(line);
    auto where = [&](const char* c) { return source + ":" + std::to_string(ln) + " column " + c; };
    if (f.size() != header.size()) return Error::invalid(where("*"), "has " + std::to_string(f.size()) + " fields, expected " + std::to_string(header.size()));
    PhillyJob j;
    auto t = parse_stamp(f[col["timestamp"]]);
    if (!t) return Error::invalid(where("timestamp"), "expected YYYY-MM-DD HH:MM:SS, got \"" + f[col["timestamp"]] + "\"");
    j.submit = *t;
    // Durations are decimal seconds ("66.0"); parse the integer and fraction parts exactly.
    const std::string& d = f[col["duration"]];
    const size_t dot = d.find('.');
    int64_t whole = 0, frac_ms = 0;
    auto ip = d.substr(0, dot);
    auto [p, ec] = std::from_chars(ip.data(), ip.data() + ip.size(), whole);
    bool ok = ec == std::errc() && p == ip.data() + ip.size() && !ip.empty() && ip[0] != '-';  // not "-0.5"
    if (ok && dot != std::string::npos) {
      std::string frac = d.substr(dot + 1);
      ok = !frac.empty() && std::all_of(frac.begin(), frac.end(), ::isdigit);
      frac = (frac + "000").substr(0, 3);
      if (ok) frac_ms = std::stoll(frac);
    }
    // Ten years bound a job (and keep the milliseconds far from int64's end).
    constexpr int64_t kMaxDurationS = 10LL * 366 * kSecondsPerDay;
    if (!ok || whole > kMaxDurationS)
      return Error::invalid(where("duration"),
                            "expected seconds between 0 and " + std::to_string(kMaxDurationS) + ", got \"" + d + "\"");
    j.duration_ms = whole * 1000 + frac_ms;
    const std::string& g = f[col["num_gpus"]];
    auto [gp, gec] = std::from_chars(g.data(), g.data() + g.size(), j.gpus);
    if (gec != std::errc() || gp != g.data() + g.size() || j.gpus < 1 || j.gpus > 1024)
      return Error::invalid(where("num_gpus"), "expected 1..1024, got \"" + g + "\"");
    j.vc = f[col["cluster"]];
    if (j.vc.empty()) return Error::invalid(where("cluster"), "is empty");
    out.push_back(std::move(j));
  }
  if (out.empty()) return Error::invalid(source, "no jobs");
  // The file is not in time order; replays and --limit want submission order.
  std::stable_sort(out.begin(), out.end(), [](const PhillyJob& a, const PhillyJob& b) { return a.submit < b.submit; });
  return out;
}

Result<std::vector<PhillyJob>> read_philly_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error::invalid(path, "cannot open");
  return read_philly(in, path);
}

int64_t philly_nodes_for(const std::vector<PhillyJob>& jobs, double headroom) {
  TimeMs first = INT64_MAX, last = INT64_MIN;
  long double gpu_ms = 0;
  int64_t largest = 0;
  for (const auto& j : jobs) {
    first = std::min(first, j.submit);
    last = std::max(last, j.submit + j.duration_ms);
    gpu_ms += static_cast<long double>(j.gpus) * static_cast<long double>(j.duration_ms);
    largest = std::max(largest, j.gpus);
  }
  const long double mean = last > first ? gpu_ms / static_cast<long double>(last - first) : 0;
  const auto by_load = static_cast<int64_t>(std::ceil(static_cast<double>(mean) * headroom / 8.0));
  return std::max(by_load, (largest + 7) / 8);
}

ReplayInput philly_replay_input(const std::vector<PhillyJob>& jobs, int64_t nodes) {
  ReplayInput in;
  for (int64_t i = 0; i < nodes; ++i) {
    SchedNode n;
    n.id = "philly-" + std::to_string(i + 1);
    n.gpu_model = "v100-sxm2-32gb";
    n.form_factor = FormFactor::kSxm;
    n.gpu_memory_gib = 32;
    n.cpu_cores = 64;
    n.memory_gib = 512;
    n.gpu_domains.assign(8, n.id + "/nvlink");
    in.nodes.push_back(std::move(n));
  }
  std::set<std::string> vcs;
  for (const auto& j : jobs) vcs.insert(j.vc);
  for (const auto& vc : vcs) {
    SchedProject p;
    p.id = p.name = p.tenant = vc;
    p.quota.gpus_per_model[kAnyGpuModel] = kMaxQuotaGpus;
    in.projects.push_back(std::move(p));
  }
  int64_t seq = 0;
  for (const auto& j : jobs) {
    ReplayJob r;
    r.job.id = "philly-" + std::to_string(++seq);
    r.job.tenant = r.job.project = j.vc;
    r.job.workers = (j.gpus + 7) / 8;
    r.job.gpus_per_worker = j.gpus / r.job.workers;
    if (r.job.gpus_per_worker * r.job.workers != j.gpus) {  // not an even split: one GPU per worker
      r.job.workers = j.gpus;
      r.job.gpus_per_worker = 1;
    }
    r.job.submitted_at = j.submit;
    // A replay knows each job's recorded duration: it is both the estimate and the limit
    // (backfill with exact user estimates).
    r.job.expected_duration_ms = r.job.time_limit_ms = std::max<int64_t>(1, j.duration_ms);
    r.duration_ms = j.duration_ms;
    in.jobs.push_back(std::move(r));
  }
  return in;
}

}  // namespace gpurent
