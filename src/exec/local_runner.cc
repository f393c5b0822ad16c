#include "exec/local_runner.h"
#include "core/shell_quote.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

namespace gpurent {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr DurationMs kStartGraceMs = 30 * kMsPerSecond;  // a run without a pid file this long never started
constexpr DurationMs kKeepEndedMs = kMsPerDay;           // folders of ended runs are removed after this

TimeMs wall_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::optional<std::string> read_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return std::nullopt;
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// Writes the file whole or not at all (temporary file, then rename).
Status write_text(const fs::path& p, const std::string& text, mode_t mode = 0600) {
  const fs::path tmp = p.string() + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return Error::make(Code::kUnavailable, "cannot write " + tmp.string() + ": " + std::strerror(errno));
  size_t off = 0;
  while (off < text.size()) {
    const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n <= 0) {
      ::close(fd);
      return Error::make(Code::kUnavailable, "cannot write " + tmp.string() + ": " + std::strerror(errno));
    }
    off += static_cast<size_t>(n);
  }
  ::close(fd);
  if (std::rename(tmp.c_str(), p.c_str()) != 0)
    return Error::make(Code::kUnavailable, "cannot write " + p.string() + ": " + std::strerror(errno));
  return ok_status();
}

// The wrapper process of a run, when it still runs (its command line names this run's wrapper,
// so a reused pid does not count).
bool wrapper_alive(int64_t pid, const std::string& wrapper) {
  if (pid <= 1) return false;
  auto cmdline = read_text("/proc/" + std::to_string(pid) + "/cmdline");
  if (!cmdline) return false;
  auto stat = read_text("/proc/" + std::to_string(pid) + "/stat");  // a zombie is not alive
  if (stat) {
    const size_t close = stat->rfind(')');
    if (close != std::string::npos && close + 2 < stat->size() && (*stat)[close + 2] == 'Z') return false;
  }
  return cmdline->find(wrapper) != std::string::npos;
}

// Starts `bash wrapper` in a session of its own, detached from this process (its parent is init,
// so nothing here waits for it), with no descriptor of the server's open.
Status spawn_detached(const std::string& wrapper) {
  const char* argv[] = {"bash", wrapper.c_str(), nullptr};
  const pid_t pid = fork();
  if (pid < 0) return Error::make(Code::kUnavailable, std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // The server blocks or ignores signals it handles itself (SIGTERM, SIGPIPE, …): a run starts
    // with none blocked and every one at its default, or the wrapper could not be stopped.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig = 1; sig < NSIG; ++sig)
      if (sig != SIGKILL && sig != SIGSTOP) signal(sig, SIG_DFL);
    setsid();
    if (fork() != 0) _exit(0);
    const int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) {
      dup2(null, 0);
      dup2(null, 1);
      dup2(null, 2);
    }
    if (close_range(3, ~0U, 0) != 0)
      for (int fd = 3; fd < 4096; ++fd) ::close(fd);
    execv("/bin/bash", const_cast<char* const*>(argv));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return ok_status();
}

std::string join_indices(const std::vector<int64_t>& v) {
  std::string out;
  for (int64_t g : v) out += (out.empty() ? "" : ",") + std::to_string(g);
  return out;
}

}  // namespace

std::string local_run_wrapper(const std::string& run_dir, const std::string& node, const std::vector<int64_t>& gpus,
                              int64_t run_id, const std::string& output, int64_t time_limit_s) {
  std::ostringstream o;
  o << "#!/bin/bash\n"
    << "# gpurent local run " << run_id << " (exec/local_runner.h): runs script.sh, records its end.\n"
    << "cd " << shell_quote(run_dir) << " || exit 1\n"
    << "exec </dev/null >>wrapper.log 2>&1\n"
    << "finish() { printf '%s %s\\n' \"$1\" \"$(date +%s%3N)\" > exit.tmp && mv exit.tmp exit; exit 0; }\n"
    << "[ -e ending ] && finish 143  # cancelled before it started\n"
    << "after() {  # after N seconds, run the rest (in the background; its pid in $!; TERM cancels it)\n"
    << "  local n=$1; shift\n"
    << "  ( trap 'kill \"$s\" 2>/dev/null; exit 0' TERM; sleep \"$n\" & s=$!; wait \"$s\"; \"$@\" ) &\n"
    << "}\n"
    << "child='' killer='' timer=''\n"
    // Once: the server asks again on every tick until the run is gone, and a script still
    // stopping its container must not be sent into its trap over and over.
    << "stop() {  # SIGTERM to the script (its trap stops the container), SIGKILL a minute later\n"
    << "  [ -n \"$killer\" ] && return 0\n"
    << "  killer=pending  # a signal from here on finds it stopping\n"
    << "  [ -e ending ] || printf '%s\\n' \"$1\" > ending\n"
    << "  [ -z \"$child\" ] && { killer=''; return 0; }  # not started yet: stopped once it is, below\n"
    << "  kill -TERM \"$child\" 2>/dev/null\n"
    << "  after 60 kill -KILL \"$child\"; killer=$!\n"
    << "}\n"
    // The traps before the pid file: the server signals the pid it reads there, and a signal
    // before the trap would end this wrapper unrecorded, its script left running.
    << "trap 'stop cancelled' TERM INT\n"
    << "trap 'stop timeout' USR1\n"
    << "printf '%s %s\\n' \"$$\" \"$(date +%s%3N)\" > pid.tmp && mv pid.tmp pid\n"
    << "export GPURENT_RUN_ID=" << run_id << " GPURENT_RUN_NODE=" << shell_quote(node)
    << " GPURENT_RUN_GPUS=" << shell_quote(join_indices(gpus)) << "\n"
    << "[ -e ending ] && finish 143  # cancelled while starting\n"
    << "bash " << shell_quote(run_dir + "/script.sh") << " >>" << shell_quote(output.empty() ? "/dev/null" : output)
    << " 2>&1 &\n"
    << "child=$!\n"
    << "[ -e ending ] && stop \"$(cat ending)\"  # a signal that came before the script started\n";
  if (time_limit_s > 0) o << "after " << time_limit_s << " kill -USR1 $$; timer=$!\n";
  o << "while kill -0 \"$child\" 2>/dev/null; do wait \"$child\"; done\n"
    // Ended: a signal from now on is not a cancel of it (and would start a killer nobody stops).
    << "trap '' TERM INT USR1\n"
    << "wait \"$child\"; rc=$?\n"
    << "for p in $timer $killer; do kill \"$p\" 2>/dev/null; done\n"
    << "finish \"$rc\"\n";
  return o.str();
}

Result<std::unique_ptr<LocalRunner>> LocalRunner::open(LocalRunnerSettings s) {
  if (s.dir.empty() || s.dir.front() != '/') return Error::invalid("local_run_dir", "must be an absolute path");
  if (s.node.empty()) return Error::invalid("local_node", "is required");
  if (s.gpus < 0) return Error::invalid("local_gpus", "must be 0 or more");
  std::error_code ec;
  fs::create_directories(s.dir, ec);
  if (ec || !fs::is_directory(s.dir))
    return Error::invalid("local_run_dir", "cannot create " + s.dir + ": " + ec.message());
  if (s.cpus <= 0) s.cpus = std::max<int64_t>(1, std::thread::hardware_concurrency());
  if (s.memory_mb <= 0) s.memory_mb = sysconf(_SC_PHYS_PAGES) / 1024 * sysconf(_SC_PAGE_SIZE) / 1024;
  std::unique_ptr<LocalRunner> r(new LocalRunner(std::move(s)));
  // Ids are never reused: the last one handed out is kept beside the folders.
  if (auto last = read_text(r->s_.dir + "/last_id")) r->next_id_ = std::max<int64_t>(1, std::atoll(last->c_str()) + 1);
  for (fs::directory_iterator it(r->s_.dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.empty() && name.size() < 16 && name.find_first_not_of("0123456789") == std::string::npos)
      r->next_id_ = std::max<int64_t>(r->next_id_, std::stoll(name) + 1);
  }
  return r;
}

std::string LocalRunner::run_dir(int64_t id) const { return s_.dir + "/" + std::to_string(id); }

Result<int64_t> LocalRunner::submit(const SlurmSubmit& job) {
  if (job.nodes.size() != 1 || job.nodes.front() != s_.node)
    return Error::make(Code::kInvalid, "the local runner runs jobs on its one node " + s_.node + " only");
  std::vector<int64_t> gpus;
  if (auto it = job.gpu_indices.find(s_.node); it != job.gpu_indices.end()) gpus = it->second;
  for (int64_t g : gpus)
    if (g < 0 || g >= s_.gpus)
      return Error::make(Code::kInvalid, "GPU " + std::to_string(g) + " is not one of node " + s_.node + "'s " +
                                             std::to_string(s_.gpus));
  const int64_t id = next_id_++;
  if (auto st = write_text(s_.dir + "/last_id", std::to_string(id) + "\n"); !st) return st.error();
  const std::string dir = run_dir(id);
  std::error_code ec;
  if (!fs::create_directory(dir, ec) || ec)
    return Error::make(Code::kUnavailable, "cannot create " + dir + ": " + (ec ? ec.message() : "it exists"));
  std::string output = job.output;
  for (size_t p; (p = output.find("%j")) != std::string::npos;) output.replace(p, 2, std::to_string(id));
  const json meta = {{"comment", job.comment},
                     {"name", job.name},
                     {"gpus", gpus},
                     {"time_limit_s", job.time_limit_s.value_or(0)},
                     {"submit_time", wall_now()},
                     {"output", output}};
  std::string script = batch_script(job);
  if (!job.workdir.empty()) script.insert(script.find('\n') + 1, "cd " + shell_quote(job.workdir) + " || exit 1\n");
  for (const auto& [file, text] : std::vector<std::pair<std::string, std::string>>{
           {"meta.json", meta.dump() + "\n"},
           {"script.sh", script},
           {"run.sh", local_run_wrapper(dir, s_.node, gpus, id, output, job.time_limit_s.value_or(0))}})
    if (auto st = write_text(dir + "/" + file, text, 0700); !st) return st.error();
  if (auto st = spawn_detached(dir + "/run.sh"); !st) return st.error();
  return id;
}

Status LocalRunner::cancel(int64_t id) {
  const std::string dir = run_dir(id);
  if (!fs::is_directory(dir)) return Error::make(Code::kNotFound, "no local run " + std::to_string(id));
  if (fs::exists(dir + "/exit")) return ok_status();
  auto pid_text = read_text(dir + "/pid");
  // No pid yet: the wrapper reads `ending` before it starts the script and once more just after.
  // (A wrapper past both checks when this lands runs on: the server cancels again every tick
  // until the run is gone, and by then the pid file is there.)
  if (!pid_text) return write_text(dir + "/ending", "cancelled\n");
  const int64_t pid = std::atoll(pid_text->c_str());
  if (wrapper_alive(pid, dir + "/run.sh") && ::kill(static_cast<pid_t>(pid), SIGTERM) != 0)
    return Error::make(Code::kUnavailable, "cannot stop local run " + std::to_string(id) + ": " + std::strerror(errno));
  return ok_status();
}

Result<std::vector<SlurmJob>> LocalRunner::jobs() {
  std::vector<SlurmJob> out;
  const TimeMs now = wall_now();
  std::error_code ec;
  std::vector<fs::path> old;
  for (fs::directory_iterator it(s_.dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name.size() >= 16 || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string dir = it->path().string();
    auto meta_text = read_text(dir + "/meta.json");
    if (!meta_text) continue;  // being created
    const json meta = json::parse(*meta_text, nullptr, false);
    if (!meta.is_object()) continue;
    SlurmJob j;
    j.id = static_cast<int64_t>(std::stoll(name));
    j.name = meta.value("name", "");
    j.comment = meta.value("comment", "");
    j.nodes = {s_.node};
    j.submit_time = meta.value("submit_time", TimeMs{0});
    const json gpus = meta.value("gpus", json::array());
    for (const auto& g : gpus)
      if (g.is_number_integer()) j.gpu_indices.push_back(g.get<int64_t>());
    j.gpus_by_node[s_.node] = j.gpu_indices;
    if (auto pid_text = read_text(dir + "/pid")) {
      std::istringstream in(*pid_text);
      int64_t pid = 0, start = 0;
      in >> pid >> start;
      if (start > 0) j.start = start;
      if (auto exit_text = read_text(dir + "/exit")) {
        std::istringstream ex(*exit_text);
        int64_t rc = 0, ended = 0;
        ex >> rc >> ended;
        j.end = ended > 0 ? ended : now;
        j.exit_code = static_cast<int>(rc);
        const std::string ending = read_text(dir + "/ending").value_or("");
        j.state = ending.rfind("cancelled", 0) == 0 ? "CANCELLED"
                  : ending.rfind("timeout", 0) == 0 ? "TIMEOUT"
                  : rc == 0                         ? "COMPLETED"
                                                    : "FAILED";
        if (*j.end + kKeepEndedMs < now) old.push_back(dir);
      } else if (wrapper_alive(pid, dir + "/run.sh")) {
        j.state = "RUNNING";
      } else {
        j.state = "NODE_FAIL";  // the wrapper is gone without a word: the machine restarted under it
        j.reason = "the run's wrapper process is gone (the machine restarted?)";
        j.end = now;
      }
    } else if (auto exit_text = read_text(dir + "/exit")) {  // cancelled before it started
      j.state = "CANCELLED";
      j.end = j.start = now;
    } else if (*j.submit_time + kStartGraceMs > now) {
      j.state = "PENDING";
    } else {
      j.state = "NODE_FAIL";
      j.reason = "the run's wrapper never started";
      j.end = now;
    }
    out.push_back(std::move(j));
  }
  if (ec) return Error::make(Code::kUnavailable, "cannot read " + s_.dir + ": " + ec.message());
  for (const auto& d : old) fs::remove_all(d, ec);
  std::sort(out.begin(), out.end(), [](const SlurmJob& a, const SlurmJob& b) { return a.id < b.id; });
  return out;
}

Result<std::vector<SlurmNode>> LocalRunner::nodes() {
  SlurmNode n;
  n.name = s_.node;
  n.state = "idle";
  n.gpus = s_.gpus;
  n.cpus = s_.cpus;
  n.memory_mb = s_.memory_mb;
  return std::vector<SlurmNode>{n};
}

}  // namespace gpurent
