#include "store/pg_tools.h"

#include <fcntl.h>
#include <libpq-fe.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>

extern char** environ;

namespace gpurent {
namespace {

constexpr size_t kMaxStderr = 64 * 1024;

bool executable(const std::string& path) { return !path.empty() && access(path.c_str(), X_OK) == 0; }

std::string quote_value(const std::string& v) {
  std::string out = "'";
  for (char c : v) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

// A pipe whose ends close when it goes out of scope (unless handed on).
struct Pipe {
  int read = -1, write = -1;
  Status open() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return Error::make(Code::kInternal, "pipe: " + std::string(strerror(errno)));
    read = fds[0];
    write = fds[1];
    return ok_status();
  }
  static void close_fd(int& fd) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
  ~Pipe() {
    close_fd(read);
    close_fd(write);
  }
};

// The child's environment: ours, with `extra` replacing variables of the same name.
std::vector<std::string> child_env(const std::vector<std::string>& extra) {
  std::map<std::string, std::string> vars;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string kv = *e;
    vars[kv.substr(0, kv.find('='))] = kv;
  }
  for (const auto& kv : extra) vars[kv.substr(0, kv.find('='))] = kv;
  std::vector<std::string> out;
  for (auto& [name, kv] : vars) out.push_back(std::move(kv));
  return out;
}

// Starts argv with descriptors 0, 1 and 2 taken from `in`, `out` and `err` (-1: /dev/null), with
// default signal handling (a caller may ignore SIGPIPE or block signals).
Result<pid_t> spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env, int in, int out,
                    int err) {
  if (argv.empty()) return Error::make(Code::kInternal, "no program given");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const int fds[3] = {in, out, err};
  for (int target = 0; target < 3; ++target) {
    if (fds[target] >= 0) {
      posix_spawn_file_actions_adddup2(&actions, fds[target], target);
    } else {
      posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0);
    }
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::vector<std::string> vars = child_env(env);
  std::vector<char*> envp;
  for (const auto& v : vars) envp.push_back(const_cast<char*>(v.c_str()));
  envp.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return Error::make(Code::kUnavailable, "starting " + argv[0] + ": " + strerror(rc));
  return pid;
}

Result<int> wait_for(pid_t pid, const std::string& name) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return Error::make(Code::kInternal, "waiting for " + name + ": " + strerror(errno));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

// Reads every descriptor of `from` into its string until all close, so no pipe fills up and
// blocks a child; a string is kept to its last kMaxStderr bytes when `tail` says so.
void drain(std::vector<int> from, std::vector<std::string*> into, std::vector<bool> tail) {
  char buf[16384];
  for (;;) {
    std::vector<pollfd> p;
    std::vector<size_t> which;
    for (size_t i = 0; i < from.size(); ++i)
      if (from[i] >= 0) {
        p.push_back({from[i], POLLIN, 0});
        which.push_back(i);
      }
    if (p.empty()) return;
    if (poll(p.data(), p.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    for (size_t k = 0; k < p.size(); ++k) {
      if ((p[k].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const size_t i = which[k];
      const ssize_t n = read(from[i], buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        Pipe::close_fd(from[i]);
        continue;
      }
      into[i]->append(buf, static_cast<size_t>(n));
      if (tail[i] && into[i]->size() > 2 * kMaxStderr) into[i]->erase(0, into[i]->size() - kMaxStderr);
    }
  }
}

void trim_tail(std::string& s) {
  if (s.size() > kMaxStderr) s.erase(0, s.size() - kMaxStderr);
}

}  // namespace

Result<std::string> find_pg_tool(const std::string& name) {
  if (const char* dir = std::getenv("GPURENT_PG_BINDIR"); dir != nullptr && *dir != '\0') {
    const std::string path = std::string(dir) + "/" + name;
    if (executable(path)) return path;
    return Error::make(Code::kUnavailable, name + " not found in $GPURENT_PG_BINDIR (" + dir + ")");
  }
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    std::string dirs = path;
    for (size_t start = 0; start <= dirs.size();) {
      size_t end = dirs.find(':', start);
      if (end == std::string::npos) end = dirs.size();
      const std::string dir = dirs.substr(start, end - start);
      if (!dir.empty() && executable(dir + "/" + name)) return dir + "/" + name;
      start = end + 1;
    }
  }
  std::string best;
  int best_version = -1;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
    const std::string path = (e.path() / "bin" / name).string();
    const int version = std::atoi(e.path().filename().c_str());
    if (executable(path) && version > best_version) {
      best = path;
      best_version = version;
    }
  }
  if (!best.empty()) return best;
  return Error::make(Code::kUnavailable, name +
                                             " (PostgreSQL's client programs) not found on $PATH nor in "
                                             "/usr/lib/postgresql/*/bin: install postgresql-client-15, or set "
                                             "GPURENT_PG_BINDIR to the folder that has it");
}

Result<PgToolConnection> pg_tool_connection(const std::string& url) {
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(url.c_str(), &err);
  if (opts == nullptr) {
    std::string why = err != nullptr ? err : "cannot be parsed";
    if (err != nullptr) PQfreemem(err);
    while (!why.empty() && why.back() == '\n') why.pop_back();
    return Error::invalid("url", "is not a PostgreSQL connection string: " + why);
  }
  PgToolConnection c;
  for (PQconninfoOption* o = opts; o->keyword != nullptr; ++o) {
    if (o->val == nullptr || *o->val == '\0') continue;
    if (std::strcmp(o->keyword, "password") == 0) {
      c.password = o->val;
      continue;
    }
    c.conninfo += (c.conninfo.empty() ? "" : " ") + std::string(o->keyword) + "=" + quote_value(o->val);
  }
  PQconninfoFree(opts);
  return c;
}

Result<ToolRun> run_tool(const std::vector<std::string>& argv, const std::vector<std::string>& env, bool capture_out) {
  Pipe out, err;
  if (auto s = out.open(); !s) return s.error();
  if (auto s = err.open(); !s) return s.error();
  auto pid = spawn(argv, env, -1, out.write, err.write);
  if (!pid) return pid.error();
  Pipe::close_fd(out.write);  // the child holds the write ends now
  Pipe::close_fd(err.write);
  ToolRun run;
  std::string discarded;
  drain({out.read, err.read}, {capture_out ? &run.out : &discarded, &run.err}, {!capture_out, true});
  out.read = err.read = -1;  // closed by drain
  trim_tail(run.err);
  auto code = wait_for(*pid, argv[0]);
  if (!code) return code.error();
  run.exit_code = *code;
  return run;
}

Result<std::pair<ToolRun, ToolRun>> run_pipeline(const std::vector<std::string>& producer,
                                                 const std::vector<std::string>& consumer,
                                                 const std::vector<std::string>& env) {
  Pipe link, out, err_a, err_b;
  for (Pipe* p : {&link, &out, &err_a, &err_b})
    if (auto s = p->open(); !s) return s.error();
  auto a = spawn(producer, env, -1, link.write, err_a.write);
  if (!a) return a.error();
  auto b = spawn(consumer, env, link.read, out.write, err_b.write);
  if (!b) {
    Pipe::close_fd(link.write);  // the producer sees a closed pipe and ends
    Pipe::close_fd(link.read);
    (void)wait_for(*a, producer[0]);
    return b.error();
  }
  for (int* fd : {&link.read, &link.write, &out.write, &err_a.write, &err_b.write}) Pipe::close_fd(*fd);
  std::pair<ToolRun, ToolRun> runs;
  drain({out.read, err_a.read, err_b.read}, {&runs.second.out, &runs.first.err, &runs.second.err}, {true, true, true});
  out.read = err_a.read = err_b.read = -1;  // closed by drain
  trim_tail(runs.first.err);
  trim_tail(runs.second.err);
  auto ca = wait_for(*a, producer[0]);
  auto cb = wait_for(*b, consumer[0]);
  if (!ca) return ca.error();
  if (!cb) return cb.error();
  runs.first.exit_code = *ca;
  runs.second.exit_code = *cb;
  return runs;
}

Error tool_failure(const std::string& name, const ToolRun& run) {
  std::string err = run.err;
  while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
  return Error::make(Code::kInternal, name + " failed (exit status " + std::to_string(run.exit_code) + ")" +
                                          (err.empty() ? std::string() : ": " + err));
}

}  // namespace gpurent
