#include "exec/slurm_cli.h"

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

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
        if (!a.empty() && !b.empty()) {
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

std::optional<TimeMs> epoch_s(const json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number_integer()) return std::nullopt;
  const int64_t s = j[key].get<int64_t>();
  if (s <= 0) return std::nullopt;
  return s * 1000;
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
    x.id = j.value("job_id", int64_t{0});
    x.name = j.value("name", "");
    x.comment = j.value("comment", "");
    x.state = j.value("job_state", "");
    x.reason = j.value("state_reason", "");
    x.nodes = expand_hostlist(j.value("nodes", ""));
    x.submit_time = epoch_s(j, "submit_time");
    x.start = epoch_s(j, "start_time");
    x.end = epoch_s(j, "end_time");
    const int64_t status = j.value("exit_code", int64_t{0});  // a wait status: code << 8 | signal
    x.exit_code = static_cast<int>((status >> 8) & 0xff);
    x.exit_signal = static_cast<int>(status & 0x7f);
    x.restarts = j.value("restart_cnt", int64_t{0});
    const json detail = j.value("gres_detail", json::array());
    x.gpu_indices = gpu_indices(detail);
    if (j.contains("job_resources") && j["job_resources"].is_object()) {
      const json nodes = j["job_resources"].value("allocated_nodes", json::array());
      for (size_t i = 0; i < nodes.size() && i < detail.size(); ++i)
        if (nodes[i].is_object() && nodes[i].contains("nodename") && nodes[i]["nodename"].is_string())
          x.gpus_by_node[nodes[i]["nodename"].get<std::string>()] = gpu_indices(detail, i);
    }
    out.push_back(std::move(x));
  }
  return out;
}

Result<std::vector<SlurmNode>> parse_sinfo_json(const std::string& text) {
  auto d = parse_doc(text, "sinfo --json");
  if (!d) return d.error();
  std::vector<SlurmNode> out;
  for (const auto& n : d->value("nodes", json::array())) {
    SlurmNode x;
    x.name = n.value("name", "");
    x.state = n.value("state", "");
    for (const auto& f : n.value("state_flags", json::array()))
      if (f == "DRAIN" || f == "DRAINING" || f == "DRAINED") x.drain = true;
    x.reason = n.value("reason", "");
    x.cpus = n.value("cpus", int64_t{0});
    x.memory_mb = n.value("real_memory", int64_t{0});
    const std::string gres = n.value("gres", "");  // "gpu:h100:8" or "gpu:8", possibly "(S:0-1)"
    for (size_t i = 0; i < gres.size();) {
      size_t c = gres.find(',', i);
      if (c == std::string::npos) c = gres.size();
      std::string g = gres.substr(i, c - i);
      g = g.substr(0, g.find('('));
      if (g.rfind("gpu:", 0) == 0) {
        const size_t last = g.rfind(':');
        x.gpus += std::stoll(g.substr(last + 1));
        if (last > 4) x.gpu_type = g.substr(4, last - 4);
      }
      i = c + 1;
    }
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
      if (t.find_first_not_of("0123456789") != std::string::npos)
        return Error::make(Code::kInvalid,
                           where + ": time '" + t + "' is not epoch seconds (run sacct with SLURM_TIME_FORMAT=%s)");
      *slot = std::stoll(t) * 1000;
    }
    if (!f[4].empty() && f[4].find_first_not_of("0123456789") == std::string::npos) a.elapsed_s = std::stoll(f[4]);
    a.gpus = tres_gpus(f[5]);
    if (f[6] != "None assigned") a.nodes = expand_hostlist(f[6]);
    a.exit_code = std::atoi(f[7].c_str());
    return a;
  });
}

namespace {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

}  // namespace

std::string batch_script(const SlurmSubmit& s) {
  std::string cmd;
  for (const auto& a : s.command) cmd += (cmd.empty() ? "" : " ") + shell_quote(a);
  std::string script = "#!/bin/bash\n# submitted by gpurent for " + s.comment + "\n";
  for (const auto& [k, v] : s.env) script += "export " + k + "=" + shell_quote(v) + "\n";
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
  if (j.gpus_per_node > 0)
    argv.push_back("--gres=gpu:" + (s_.gres_type.empty() ? "" : s_.gres_type + ":") + std::to_string(j.gpus_per_node));
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
  auto r = run({"squeue", "--json"});
  if (!r) return r.error();
  return parse_squeue_json(*r);
}

Result<std::vector<SlurmNode>> SlurmCli::nodes() {
  auto r = run({"sinfo", "--json"});
  if (!r) return r.error();
  return parse_sinfo_json(*r);
}

std::map<std::string, std::string> SlurmCli::conf_values() {
  std::map<std::string, std::string> out;
  std::ifstream conf(s_.conf.empty() ? "/etc/slurm/slurm.conf" : s_.conf);
  std::string line;
  while (std::getline(conf, line)) {
    const size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos || line[b] == '#') continue;
    const size_t eq = line.find('=', b);
    if (eq == std::string::npos || line.find(' ', b) < eq) continue;
    std::string v = line.substr(eq + 1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\r')) v.pop_back();
    out[line.substr(b, eq - b)] = v;
  }
  return out;
}

Result<std::vector<SlurmAccounting>> SlurmCli::accounting(TimeMs since, std::string* source) {
  auto conf = conf_values();
  if (conf.empty()) return Error::make(Code::kUnavailable, "cannot read slurm.conf (" + s_.conf + ")");
  if (conf["AccountingStorageType"] == "accounting_storage/slurmdbd") {
    if (source) *source = "sacct";
    // -S takes local time: a day's margin covers any zone; rows are matched by job id anyway.
    std::string start = format_rfc3339(since - kMsPerDay).substr(0, 19);
    auto r = run({"sacct", "-a", "-X", "-D", "-P", "-n", "-S", start, "-o",
                  "JobID,State,Start,End,ElapsedRaw,AllocTRES,NodeList,ExitCode"},
                 "", {{"SLURM_TIME_FORMAT", "%s"}});
    if (!r) return r.error();
    return parse_sacct(*r);
  }
  if (source) *source = "jobcomp";
  const std::string type = conf["JobCompType"], loc = conf["JobCompLoc"];
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

}  // namespace gpurent
