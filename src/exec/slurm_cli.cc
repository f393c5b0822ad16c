#include "exec/slurm_cli.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "core/shell_quote.h"
#include "exec/process.h"

namespace gpurent {

using json = nlohmann::json;

std::vector<std::string> expand_hostlist(const std::string& list) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < list.size()) {
    // One element: prefix[ranges]suffix? up to a comma outside brackets.
    size_t j = i;
    int depth = 0;
    while (j < list.size() && (list[j] != ',' || depth > 0)) {
      if (list[j] == '[') ++depth;
      if (list[j] == ']') --depth;
      ++j;
    }
    const std::string item = list.substr(i, j - i);
    const size_t lb = item.find('['), rb = item.find(']');
    if (lb == std::string::npos || rb == std::string::npos || rb < lb) {
      if (!item.empty()) out.push_back(item);
    } else {
      const std::string prefix = item.substr(0, lb), suffix = item.substr(rb + 1),
                        ranges = item.substr(lb + 1, rb - lb - 1);
      size_t k = 0;
      while (k <= ranges.size()) {
        size_t c = ranges.find(',', k);
        if (c == std::string::npos) c = ranges.size();
        const std::string r = ranges.substr(k, c - k);
        const size_t dash = r.find('-');
        const std::string a = r.substr(0, dash), b = dash == std::string::npos ? a : r.substr(dash + 1);
        const auto digits = [](const std::string& t) {
          return !t.empty() && t.size() <= 9 && t.find_first_not_of("0123456789") == std::string::npos;
        };
        // A malformed or absurd range ("[a-b]", "[1-999999999]") names no node: skipped, not thrown.
        if (digits(a) && digits(b) && std::stol(b) - std::stol(a) < 100'000) {
          const long lo = std::stol(a), hi = std::stol(b);
          for (long n = lo; n <= hi; ++n) {
            std::string num = std::to_string(n);
            if (num.size() < a.size()) num.insert(0, a.size() - num.size(), '0');  // zero padding
            out.push_back(prefix + num + suffix);
          }
        }
        k = c + 1;
      }
    }
    i = j + 1;
  }
  return out;
}

namespace {

// Slurm's JSON changed over its data_parser versions; these readers take every form seen:
//   22.05 (v0.0.38):        "start_time": 1700000000, "job_state": "RUNNING", "exit_code": 512
//   23.02+ (v0.0.39..0.0.42): "start_time": {"set": true, "infinite": false, "number": 1700000000},
//                           "job_state": ["RUNNING"], "exit_code": {"status": [...], "return_code":
//                           {"number": 2}, "signal": {"id": {"number": 9}}}
// (testdata/: real output of 22.05 and 24.11.)

// An integer, or the {set, infinite, number} object of v0.0.39+; nullopt when unset or infinite.
std::optional<int64_t> slurm_number(const json& v) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_object() && v.value("set", true) && !v.value("infinite", false) && v.contains("number") &&
      v["number"].is_number_integer())
    return v["number"].get<int64_t>();
  return std::nullopt;
}

std::optional<int64_t> slurm_number(const json& j, const char* key) {
  return j.is_object() && j.contains(key) ? slurm_number(j[key]) : std::nullopt;
}

// A string, or the first word of a flag array (["MIXED", "DRAIN"] -> "MIXED").
std::string slurm_word(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return "";
  const json& v = j[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array() && !v.empty() && v[0].is_string()) return v[0].get<std::string>();
  return "";
}

std::optional<TimeMs> epoch_s(const json& j, const char* key) {
  const auto s = slurm_number(j, key);
  if (!s || *s <= 0) return std::nullopt;
  return *s * 1000;
}

// The job script's exit code and the signal that ended it.
std::pair<int, int> exit_status(const json& j) {
  if (!j.is_object() || !j.contains("exit_code")) return {0, 0};
  const json& e = j["exit_code"];
  if (e.is_object()) {
    const int code = static_cast<int>(slurm_number(e, "return_code").value_or(0));
    const json sig = e.value("signal", json::object());
    return {code, static_cast<int>(slurm_number(sig, "id").value_or(0))};
  }
  const int64_t status = slurm_number(e).value_or(0);  // a wait status: code << 8 | signal
  return {static_cast<int>((status >> 8) & 0xff), static_cast<int>(status & 0x7f)};
}

// The names of a job's nodes in the order gres_detail lists them: job_resources.allocated_nodes
// [{"nodename"}] up to 23.11, job_resources.nodes.allocation [{"name"}] from 24.05.
std::vector<std::string> allocated_node_names(const json& j) {
  std::vector<std::string> out;
  if (!j.contains("job_resources") || !j["job_resources"].is_object()) return out;
  const json& r = j["job_resources"];
  const auto collect = [&out](const json& list, const char* key) {
    if (!list.is_array()) return;
    for (const auto& n : list)
      if (n.is_object() && n.contains(key) && n[key].is_string()) out.push_back(n[key].get<std::string>());
  };
  if (r.contains("allocated_nodes")) collect(r["allocated_nodes"], "nodename");
  if (out.empty() && r.contains("nodes") && r["nodes"].is_object())
    collect(r["nodes"].value("allocation", json::array()), "name");
  return out;
}

std::vector<int64_t> gpu_indices(const json& detail, size_t i = 0) {
  std::vector<int64_t> out;
  if (!detail.is_array() || detail.size() <= i || !detail[i].is_string()) return out;
  const std::string s = detail[i].get<std::string>();  // "gpu:h100:2(IDX:0-1,4)"
  const size_t at = s.find("IDX:");
  if (at == std::string::npos) return out;
  const std::string list = s.substr(at + 4, s.find(')', at) - at - 4);
  for (const auto& x : expand_hostlist("[" + list + "]")) out.push_back(std::stoll(x));
  return out;
}

Result<json> parse_doc(const std::string& text, const char* what) {
  json d = json::parse(text, nullptr, false);
  if (d.is_discarded() || !d.is_object())
    return Error::make(Code::kUnavailable, std::string(what) + " did not print JSON");
  if (d.contains("errors") && d["errors"].is_array() && !d["errors"].empty())
    return Error::make(Code::kUnavailable, std::string(what) + " reported: " + d["errors"].dump());
  return d;
}

}  // namespace

Result<std::vector<SlurmJob>> parse_squeue_json(const std::string& text) {
  auto d = parse_doc(text, "squeue --json");
  if (!d) return d.error();
  std::vector<SlurmJob> out;
  for (const auto& j : d->value("jobs", json::array())) {
    SlurmJob x;
    if (!j.is_object()) continue;
    x.id = slurm_number(j, "job_id").value_or(0);
    x.name = slurm_word(j, "name");
    x.comment = slurm_word(j, "comment");
    x.user = slurm_word(j, "user_name");
    x.partition = slurm_word(j, "partition");
    x.state = slurm_word(j, "job_state");
    // From 23.02 the state is a list whose flags follow the base state: ["CANCELLED", "COMPLETING"]
    // is a run whose processes are still being killed. 22.05 prints that as "COMPLETING" alone, and
    // so does this reader: such a run is not over.
    if (const json st = j.value("job_state", json()); st.is_array())
      for (const auto& f : st)
        if (f.is_string() && f.get<std::string>() == "COMPLETING") x.state = "COMPLETING";
    x.reason = slurm_word(j, "state_reason");
    x.nodes = expand_hostlist(slurm_word(j, "nodes"));
    x.submit_time = epoch_s(j, "submit_time");
    x.start = epoch_s(j, "start_time");
    x.end = epoch_s(j, "end_time");
    std::tie(x.exit_code, x.exit_signal) = exit_status(j);
    x.restarts = slurm_number(j, "restart_cnt").value_or(0);
    const json detail = j.value("gres_detail", json::array());
    x.gpu_indices = gpu_indices(detail);
    const std::vector<std::string> names = allocated_node_names(j);
    for (size_t i = 0; i < names.size() && i < detail.size(); ++i) x.gpus_by_node[names[i]] = gpu_indices(detail, i);
    out.push_back(std::move(x));
  }
  return out;
}

namespace {

// "gpu:h100:8(S:0-1),shard:2" -> 8 GPUs of type h100.
void read_gres(const std::string& gres, SlurmNode& x) {
  for (size_t i = 0; i < gres.size();) {
    size_t c = gres.find(',', i);
    if (c == std::string::npos) c = gres.size();
    std::string g = gres.substr(i, c - i);
    g = g.substr(0, g.find('('));
    if (g.rfind("gpu:", 0) == 0) {
      const size_t last = g.rfind(':');
      const std::string count = g.substr(last + 1);
      if (!count.empty() && count.size() < 10 && count.find_first_not_of("0123456789") == std::string::npos)
        x.gpus += std::stoll(count);
      if (last > 4) x.gpu_type = g.substr(4, last - 4);
    }
    i = c + 1;
  }
}

// "ib,fabric-a" -> {"ib", "fabric-a"}; Slurm writes "(null)" for none.
std::vector<std::string> read_features(const std::string& list);

// Features as a string (22.05) or an array of strings (24.11's scontrol).
std::vector<std::string> read_features(const json& v) {
  if (v.is_string()) return read_features(v.get<std::string>());
  std::vector<std::string> out;
  if (v.is_array())
    for (const auto& f : v)
      if (f.is_string() && !f.get<std::string>().empty() && out.size() < 64) out.push_back(f.get<std::string>());
  return out;
}

std::vector<std::string> read_features(const std::string& list) {
  std::vector<std::string> out;
  for (size_t i = 0; i <= list.size();) {
    size_t c = list.find(',', i);
    if (c == std::string::npos) c = list.size();
    std::string f = list.substr(i, c - i);
    if (!f.empty() && f != "(null)") out.push_back(std::move(f));
    i = c + 1;
  }
  return out;
}

bool is_drain_flag(const std::string& f) { return f == "DRAIN" || f == "DRAINING" || f == "DRAINED"; }

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A node state: "idle" with state_flags ["DRAIN"] (22.05), or ["IDLE", "DRAIN"] (23.02+).
void read_state(const json& state, const json& flags, SlurmNode& x) {
  if (state.is_string()) x.state = lower(state.get<std::string>());
  if (state.is_array())
    for (const auto& f : state) {
      if (!f.is_string()) continue;
      if (x.state.empty()) x.state = lower(f.get<std::string>());
      else if (is_drain_flag(f.get<std::string>())) x.drain = true;
    }
  if (flags.is_array())
    for (const auto& f : flags)
      if (f.is_string() && is_drain_flag(f.get<std::string>())) x.drain = true;
}

// 23.02+: sinfo groups nodes by partition and state; a node in two partitions shows twice.
std::vector<SlurmNode> sinfo_groups(const json& groups) {
  std::vector<SlurmNode> out;
  std::map<std::string, bool> seen;
  for (const auto& g : groups) {
    if (!g.is_object()) continue;
    SlurmNode base;
    read_state(g.value("node", json::object()).value("state", json()), json(), base);
    const json reason = g.value("reason", json());
    base.reason = reason.is_object() ? slurm_word(reason, "description") : reason.is_string() ? reason.get<std::string>() : "";
    base.cpus = slurm_number(g.value("cpus", json::object()), "maximum").value_or(0);
    base.memory_mb = slurm_number(g.value("memory", json::object()), "maximum").value_or(0);
    base.sockets = slurm_number(g.value("sockets", json::object()), "maximum").value_or(0);
    base.cores_per_socket = slurm_number(g.value("cores", json::object()), "maximum").value_or(0);
    const json features = g.value("features", json());
    base.features = read_features(features.is_object() ? slurm_word(features, "active")
                                  : features.is_string() ? features.get<std::string>()
                                                         : "");
    const json gres = g.value("gres", json());
    read_gres(gres.is_object() ? slurm_word(gres, "total") : gres.is_string() ? gres.get<std::string>() : "", base);
    const json names = g.value("nodes", json::object()).value("nodes", json::array());
    for (const auto& n : names) {
      if (!n.is_string() || seen[n.get<std::string>()]) continue;
      seen[n.get<std::string>()] = true;
      SlurmNode x = base;
      x.name = n.get<std::string>();
      out.push_back(std::move(x));
    }
  }
  return out;
}

}  // namespace

std::vector<SlurmNic> nics_from_features(const std::vector<std::string>& features) {
  std::string fabric;
  for (const std::string& f : features) {
    if (f.rfind("fabric-", 0) != 0) continue;
    const std::string name = f.substr(7);
    const bool slug = !name.empty() && name.size() <= 63 && name.front() != '-' && name.back() != '-' &&
                      name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") == std::string::npos;
    if (slug) fabric = name;
  }
  std::vector<SlurmNic> out;
  for (const std::string& f : features) {
    std::string kind;
    for (const char* k : {"infiniband", "ib", "roce"})
      if (f.rfind(k, 0) == 0) {
        kind = k;
        break;
      }
    if (kind.empty() || f.size() > 32) continue;
    const std::string rate = f.substr(kind.size());
    if (!rate.empty() && (rate.size() > 4 || rate.find_first_not_of("0123456789") != std::string::npos)) continue;
    SlurmNic n{f, kind == "roce", rate.empty() ? 100 : std::stoll(rate), fabric};
    if (n.gbps < 1 || n.gbps > 3200 || out.size() >= 32) continue;
    out.push_back(std::move(n));
  }
  return out;
}

void add_node_topology(std::vector<SlurmNode>& nodes, const std::string& text) {
  auto d = parse_doc(text, "scontrol show nodes --json");
  if (!d) return;
  const json all = d->value("nodes", json::array());
  std::map<std::string, const json*> by_name;
  for (const auto& n : all)
    if (n.is_object()) by_name[slurm_word(n, "name")] = &n;
  for (SlurmNode& x : nodes) {
    auto it = by_name.find(x.name);
    if (it == by_name.end()) continue;
    const json& n = *it->second;
    x.sockets = slurm_number(n, "sockets").value_or(x.sockets);
    x.cores_per_socket = slurm_number(n, "cores").value_or(x.cores_per_socket);
    x.features = read_features(n.contains("active_features") ? n["active_features"] : n.value("features", json()));
  }
}

std::map<std::string, std::vector<int64_t>> parse_gres_conf_cores(const std::string& text,
                                                                  const std::vector<std::string>& nodes) {
  std::map<std::string, std::vector<int64_t>> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    line = line.substr(0, line.find('#'));
    std::map<std::string, std::string> kv;
    std::istringstream words(line);
    for (std::string w; words >> w;) {
      const size_t eq = w.find('=');
      if (eq == std::string::npos) continue;
      std::string key = w.substr(0, eq);
      for (char& ch : key) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      kv[key] = w.substr(eq + 1);
    }
    if (kv["name"] != "gpu" || kv["file"].empty()) continue;
    const size_t count = expand_hostlist(kv["file"]).size();
    if (count == 0 || count > 1024) continue;
    int64_t core = -1;
    if (const std::string& cores = kv["cores"]; !cores.empty()) {
      const std::string first = cores.substr(0, cores.find_first_of(",-"));
      if (!first.empty() && first.size() <= 9 && first.find_first_not_of("0123456789") == std::string::npos)
        core = std::stoll(first);
    }
    for (const std::string& node : kv.count("nodename") ? expand_hostlist(kv["nodename"]) : nodes) {
      auto& gpus = out[node];
      if (gpus.size() + count <= 1024) gpus.insert(gpus.end(), count, core);
    }
  }
  return out;
}

Result<std::vector<SlurmNode>> parse_sinfo_json(const std::string& text) {
  auto d = parse_doc(text, "sinfo --json");
  if (!d) return d.error();
  if (d->contains("sinfo") && (*d)["sinfo"].is_array()) return sinfo_groups((*d)["sinfo"]);
  std::vector<SlurmNode> out;
  for (const auto& n : d->value("nodes", json::array())) {
    if (!n.is_object()) continue;
    SlurmNode x;
    x.name = slurm_word(n, "name");
    read_state(n.value("state", json()), n.value("state_flags", json()), x);
    x.reason = slurm_word(n, "reason");
    x.cpus = slurm_number(n, "cpus").value_or(0);
    x.memory_mb = slurm_number(n, "real_memory").value_or(0);
    x.sockets = slurm_number(n, "sockets").value_or(0);
    x.cores_per_socket = slurm_number(n, "cores").value_or(0);
    x.features = read_features(n.contains("active_features") ? n["active_features"] : n.value("features", json()));
    read_gres(slurm_word(n, "gres"), x);
    out.push_back(std::move(x));
  }
  return out;
}

namespace {

// Calls parse(line, line number) for every non-blank line; the first error stops it.
template <typename ParseLine>
Result<std::vector<SlurmAccounting>> parse_records(const std::string& text, ParseLine parse) {
  std::vector<SlurmAccounting> out;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    Result<SlurmAccounting> a = parse(line, n);
    if (!a) return a.error();
    out.push_back(std::move(*a));
  }
  return out;
}

}  // namespace

Result<std::vector<SlurmAccounting>> parse_jobcomp(const std::string& text) {
  return parse_records(text, [](const std::string& line, int n) -> Result<SlurmAccounting> {
    std::map<std::string, std::string> kv;
    std::istringstream words(line);
    std::string w;
    while (words >> w) {
      const size_t eq = w.find('=');
      if (eq != std::string::npos) kv[w.substr(0, eq)] = w.substr(eq + 1);
    }
    SlurmAccounting a;
    try {
      a.id = std::stoll(kv.at("JobId"));
    } catch (...) {
      return Error::make(Code::kInvalid, "jobcomp line " + std::to_string(n) + ": no JobId");
    }
    a.state = kv["JobState"];
    for (auto [key, slot] : {std::pair{"StartTime", &a.start}, std::pair{"EndTime", &a.end}}) {
      const std::string& t = kv[key];
      if (t.empty() || t == "Unknown" || t == "None") continue;
      auto ms = parse_rfc3339(t + "Z", key);
      if (!ms) return Error::make(Code::kInvalid, "jobcomp line " + std::to_string(n) + ": " + ms.error().message);
      *slot = *ms;
    }
    a.nodes = expand_hostlist(kv["NodeList"]);
    a.gpus = tres_gpus(kv["Tres"]);
    if (a.start && a.end) a.elapsed_s = (*a.end - *a.start) / 1000;
    a.exit_code = std::atoi(kv["ExitCode"].c_str());
    a.name = kv["Name"];
    a.user = kv["UserId"].substr(0, kv["UserId"].find('('));  // "alice(1000)" -> alice
    a.partition = kv["Partition"];
    return a;
  });
}

int64_t tres_gpus(const std::string& tres) {
  int64_t total = 0;
  std::istringstream in(tres);
  std::string item;
  while (std::getline(in, item, ',')) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = item.substr(0, eq);
    if (key != "gres/gpu" && key.rfind("gres/gpu:", 0) != 0) continue;
    if (key != "gres/gpu" && tres.find("gres/gpu=") != std::string::npos) continue;  // typed and total both listed
    total += std::atoll(item.c_str() + eq + 1);
  }
  return total;
}

Result<std::vector<SlurmAccounting>> parse_sacct(const std::string& text) {
  return parse_records(text, [](const std::string& line, int n) -> Result<SlurmAccounting> {
    std::vector<std::string> f;
    std::istringstream cols(line);
    std::string c;
    while (std::getline(cols, c, '|')) f.push_back(c);
    while (f.size() < 8) f.emplace_back();
    const std::string where = "sacct line " + std::to_string(n);
    SlurmAccounting a;
    // Steps (7.batch) are filtered out by -X; a job array's 7_1 names its own job.
    char* end = nullptr;
    a.id = std::strtoll(f[0].c_str(), &end, 10);
    if (f[0].empty() || a.id <= 0 || (*end != '\0' && *end != '_'))
      return Error::make(Code::kInvalid, where + ": JobID '" + f[0] + "' is not a job id");
    a.state = f[1].substr(0, f[1].find(' '));
    for (auto [i, slot] : {std::pair{2, &a.start}, std::pair{3, &a.end}}) {
      const std::string& t = f[i];
      if (t.empty() || t == "Unknown" || t == "None") continue;
      if (t.size() > 12 || t.find_first_not_of("0123456789") != std::string::npos)
        return Error::make(Code::kInvalid,
                           where + ": time '" + t + "' is not epoch seconds (run sacct with SLURM_TIME_FORMAT=%s)");
      *slot = std::stoll(t) * 1000;
    }
    if (!f[4].empty() && f[4].size() <= 12 && f[4].find_first_not_of("0123456789") == std::string::npos)
      a.elapsed_s = std::stoll(f[4]);
    a.gpus = tres_gpus(f[5]);
    if (f[6] != "None assigned") a.nodes = expand_hostlist(f[6]);
    a.exit_code = std::atoi(f[7].c_str());
    if (f.size() > 8) a.user = f[8];
    if (f.size() > 9) a.partition = f[9];
    for (size_t i = 10; i < f.size(); ++i) a.name += (i > 10 ? "|" : "") + f[i];  // last: a name may hold '|'
    return a;
  });
}

std::string batch_script(const SlurmSubmit& s) {
  std::string cmd;
  for (const auto& a : s.command) cmd += (cmd.empty() ? "" : " ") + shell_quote(a);
  std::string script = "#!/bin/bash\n# submitted by gpurent for " + s.comment + "\n";
  for (const auto& [k, v] : s.env) script += "export " + k + "=" + shell_quote(v) + "\n";
  if (!s.script.empty()) return script + s.script;
  return script + "exec " + cmd + "\n";
}

Result<std::string> SlurmCli::run(std::vector<std::string> argv, const std::string& stdin_text,
                                  std::map<std::string, std::string> env) {
  if (!s_.conf.empty()) env["SLURM_CONF"] = s_.conf;
  auto r = run_process(argv, env, stdin_text, s_.timeout_ms);
  if (!r) return r.error();
  if (r->exit_code != 0) {
    std::string err = r->err.empty() ? r->out : r->err;
    while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
    return Error::make(Code::kUnavailable, argv[0] + " failed (exit " + std::to_string(r->exit_code) + "): " + err);
  }
  return r->out;
}

Result<int64_t> SlurmCli::submit(const SlurmSubmit& j) {
  if (j.nodes.empty()) return Error::make(Code::kInternal, "slurm submit: no nodes");
  std::vector<std::string> argv = {"sbatch",
                                   "--parsable",
                                   j.requeue ? "--requeue" : "--no-requeue",
                                   "-J",
                                   j.name,
                                   "--comment",
                                   j.comment,
                                   "-N",
                                   std::to_string(j.nodes.size()),
                                   "--ntasks-per-node=1"};
  std::string list;
  for (const auto& n : j.nodes) list += (list.empty() ? "" : ",") + n;
  argv.insert(argv.end(), {"--nodelist", list});
  if (j.gpus_per_node > 0) {
    argv.push_back("--gres=gpu:" + (s_.gres_type.empty() ? "" : s_.gres_type + ":") + std::to_string(j.gpus_per_node));
    // The job's CPUs come from the cores gres.conf binds its GPUs to (their socket, so their NUMA node).
    if (j.bind_cpus) argv.push_back("--gres-flags=enforce-binding");
  }
  if (j.cpus_per_node > 0) argv.push_back("--cpus-per-task=" + std::to_string(j.cpus_per_node));
  if (j.mem_mib_per_node > 0) argv.push_back("--mem=" + std::to_string(j.mem_mib_per_node) + "M");
  if (!s_.partition.empty()) argv.insert(argv.end(), {"-p", s_.partition});
  if (!j.workdir.empty()) argv.insert(argv.end(), {"-D", j.workdir});
  if (j.time_limit_s) argv.push_back("--time=" + std::to_string((*j.time_limit_s + 59) / 60));
  argv.insert(argv.end(), {"-o", j.output.empty() ? "/dev/null" : j.output});
  argv.push_back("--export=ALL");  // the job's own variables are exported by the batch script
  auto out = run(argv, batch_script(j));
  if (!out) return out.error();
  try {
    return std::stoll(out->substr(0, out->find_first_of(";\n")));
  } catch (...) {
    return Error::make(Code::kUnavailable, "sbatch printed no job id: " + *out);
  }
}

Status SlurmCli::cancel(int64_t id) {
  auto r = run({"scancel", std::to_string(id)});
  if (!r) return r.error();
  return ok_status();
}

Status SlurmCli::requeue(int64_t id) {
  auto r = run({"scontrol", "requeue", std::to_string(id)});
  if (!r) return r.error();
  return ok_status();
}

Result<std::vector<SlurmJob>> SlurmCli::jobs() {
  // --states=all: from 23.02 squeue --json leaves finished jobs out unless asked (22.05 lists all).
  auto r = run({"squeue", "--json", "--states=all"});
  if (!r) return r.error();
  return parse_squeue_json(*r);
}

Result<int64_t> parse_kill_wait(const std::string& show_config) {
  std::istringstream in(show_config);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("KillWait", 0) != 0) continue;
    const size_t eq = line.find('=');
    if (line.find_first_not_of(' ', 8) != eq || eq == std::string::npos) continue;  // KillWaitX = …
    std::istringstream value(line.substr(eq + 1));
    int64_t s = -1;
    std::string unit;
    if (value >> s >> unit && s >= 0 && unit == "sec") return s;
    return Error::invalid("KillWait", "scontrol show config: '" + line + "' is not a number of seconds");
  }
  return Error::invalid("KillWait", "scontrol show config names no KillWait");
}

int64_t fitted_stop_timeout(int64_t configured, int64_t kill_wait_s) {
  return std::max<int64_t>(1, std::min(configured, kill_wait_s / 2));
}

Result<int64_t> SlurmCli::kill_wait_s() {
  auto r = run({"scontrol", "show", "config"});
  if (!r) return r.error();
  return parse_kill_wait(*r);
}

Result<std::vector<SlurmNode>> SlurmCli::nodes() {
  auto r = run({"sinfo", "--json"});
  if (!r) return r.error();
  auto nodes = parse_sinfo_json(*r);
  if (!nodes) return nodes;
  // 23.02+ groups sinfo's nodes without telling features apart: scontrol has them per node.
  if (r->find("\"sinfo\"") != std::string::npos)
    if (auto per_node = run({"scontrol", "show", "nodes", "--json"})) add_node_topology(*nodes, *per_node);
  // Which cores each GPU is bound to: gres.conf beside slurm.conf (Slurm reads it from there too).
  const std::string conf = s_.conf.empty() ? "/etc/slurm/slurm.conf" : s_.conf;
  std::ifstream gres(conf.substr(0, conf.rfind('/') + 1) + "gres.conf");
  if (gres) {
    std::vector<std::string> names;
    for (const SlurmNode& n : *nodes) names.push_back(n.name);
    const std::string text((std::istreambuf_iterator<char>(gres)), std::istreambuf_iterator<char>());
    auto cores = parse_gres_conf_cores(text, names);
    for (SlurmNode& n : *nodes)
      if (auto it = cores.find(n.name); it != cores.end()) n.gpu_cores = it->second;
  }
  return nodes;
}

std::map<std::string, std::string> parse_slurm_conf_values(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    line = line.substr(0, line.find('#'));
    const size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos) continue;
    const size_t eq = line.find('=', b);
    if (eq == std::string::npos) continue;
    std::string key = line.substr(b, eq - b);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
    if (key.empty() || key.find_first_of(" \t") != std::string::npos) continue;
    for (char& ch : key) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    std::string v = line.substr(eq + 1);
    const size_t vb = v.find_first_not_of(" \t");
    v = vb == std::string::npos ? "" : v.substr(vb);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\r')) v.pop_back();
    out[key] = v;
  }
  return out;
}

std::map<std::string, std::string> SlurmCli::conf_values() {
  std::ifstream conf(s_.conf.empty() ? "/etc/slurm/slurm.conf" : s_.conf);
  return parse_slurm_conf_values(std::string((std::istreambuf_iterator<char>(conf)), std::istreambuf_iterator<char>()));
}

Result<std::vector<SlurmAccounting>> SlurmCli::accounting(TimeMs since, std::string* source, TimeMs until) {
  auto conf = conf_values();
  if (conf.empty()) return Error::make(Code::kUnavailable, "cannot read slurm.conf (" + s_.conf + ")");
  if (conf["accountingstoragetype"] == "accounting_storage/slurmdbd") {
    if (source) *source = "sacct";
    // -S takes local time: a day's margin covers any zone; rows are matched by job id anyway.
    std::string start = format_rfc3339(since - kMsPerDay).substr(0, 19);
    std::vector<std::string> args{
        "sacct", "-a",
        "-X",    "-D",
        "-P",    "-n",
        "-S",    start,
        "-o",    "JobID,State,Start,End,ElapsedRaw,AllocTRES,NodeList,ExitCode,User,Partition,JobName"};
    if (until > 0) args.insert(args.begin() + 8, {"-E", format_rfc3339(until + kMsPerDay).substr(0, 19)});
    auto r = run(args, "", {{"SLURM_TIME_FORMAT", "%s"}});
    if (!r) return r.error();
    return parse_sacct(*r);
  }
  if (source) *source = "jobcomp";
  const std::string type = conf["jobcomptype"], loc = conf["jobcomploc"];
  if (type != "jobcomp/filetxt" || loc.empty())
    return Error::make(
        Code::kUnavailable,
        "slurm.conf names neither slurmdbd accounting (AccountingStorageType=accounting_storage/slurmdbd, "
        "for sacct) nor JobCompType=jobcomp/filetxt with a JobCompLoc");
  std::ifstream in(loc);
  if (!in) return std::vector<SlurmAccounting>{};  // no job finished yet
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_jobcomp(ss.str());
}

Result<std::vector<SlurmAccounting>> SlurmCli::accounted_since(TimeMs since) {
  // Only a cluster that keeps no accounting answers "nothing": sacct failing (slurmdbd down), a
  // timeout or an unreadable slurm.conf is an error the caller waits out.
  auto conf = conf_values();
  if (conf.empty()) return Error::make(Code::kUnavailable, "cannot read slurm.conf (" + s_.conf + ")");
  const bool kept = conf["accountingstoragetype"] == "accounting_storage/slurmdbd" ||
                    (conf["jobcomptype"] == "jobcomp/filetxt" && !conf["jobcomploc"].empty());
  if (!kept) return std::vector<SlurmAccounting>();
  return accounting(since);
}

Result<std::optional<SlurmAccounting>> BatchSystem::accounted(int64_t id, TimeMs since) {
  auto all = accounted_since(since);
  if (!all) return all.error();
  for (const SlurmAccounting& a : *all)
    if (a.id == id) return std::optional<SlurmAccounting>(a);
  return std::optional<SlurmAccounting>();
}

}  // namespace gpurent
