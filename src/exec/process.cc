#include "exec/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace gpurent {

Result<ProcessResult> run_process(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                                  const std::string& stdin_text, int timeout_ms) {
  if (argv.empty()) return Error::make(Code::kInternal, "run_process: empty argv");
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
    return Error::make(Code::kUnavailable, std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) return Error::make(Code::kUnavailable, std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    const std::string msg = argv[0] + ": " + std::strerror(errno) + "\n";
    (void)!write(2, msg.data(), msg.size());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  close(err[1]);
  // Write stdin (small texts: a batch script) then close it.
  size_t off = 0;
  while (off < stdin_text.size()) {
    ssize_t n = write(in[1], stdin_text.data() + off, stdin_text.size() - off);
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  close(in[1]);
  ProcessResult r;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  bool timed_out = false;
  char buf[8192];
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    if (poll(fds, 2, static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    for (auto& f : fds) {
      if (f.fd < 0 || !(f.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(f.fd, buf, sizeof buf);
      if (n > 0) {
        (f.fd == out[0] ? r.out : r.err).append(buf, static_cast<size_t>(n));
      } else {
        close(f.fd);
        f.fd = -1;
        --open_fds;
      }
    }
  }
  if (timed_out) kill(pid, SIGKILL);
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out)
    return Error::make(Code::kUnavailable, argv[0] + " did not finish within " + std::to_string(timeout_ms) + " ms");
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (r.exit_code == 127 && r.out.empty())
    return Error::make(Code::kUnavailable, "cannot run " + argv[0] + ": " + r.err);
  return r;
}

}  // namespace gpurent
