// server/services/job_output_retention.h: deleting the output files of jobs that ended long ago.
#include "server/services/job_output_retention.h"

#include <dirent.h>
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "model/job.h"
#include "model/job_state.h"
#include "server/services/metrics.h"

namespace gpurent {

using nlohmann::json;

namespace {

// The job id of a run file's name: "<id>-<run>.log", "<id>-<run>.status", or a node's ready file
// "<id>-<run>.ready.<node>" (and its temporary copy, "….tmp"), where id is "<letters, digits, _>"
// and run a whole number written as Slurm and the local runner write it (no leading zero, at most
// 18 digits): the names services/executor_slurm.cc and exec/container.cc give them. Empty for any
// other name (an operator's "<id>-<run>.log.gz" among them).
std::string_view run_file_job(std::string_view name) {
  const size_t dash = name.rfind('-', name.find('.'));
  if (dash == 0 || dash == std::string_view::npos) return {};
  const std::string_view id = name.substr(0, dash);
  for (char c : id)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return {};
  const size_t dot = name.find('.', dash);
  if (dot == std::string_view::npos) return {};
  const std::string_view run = name.substr(dash + 1, dot - dash - 1);
  if (run.empty() || run.size() > 18 || run[0] == '0' || run.find_first_not_of("0123456789") != std::string_view::npos)
    return {};
  const std::string_view rest = name.substr(dot + 1);
  if (rest == "log" || rest == "status" || (rest.size() > 6 && rest.substr(0, 6) == "ready.")) return id;
  return {};
}

struct RunFile {
  std::string name;
  int64_t bytes = 0;
};

}  // namespace

Result<JobOutputSweep> sweep_job_outputs(StoreReader& store, const std::string& dir, TimeMs now, int64_t keep_ms,
                                         const std::function<bool()>& stopping) {
  JobOutputSweep out;
  const TimeMs before = now - keep_ms;
  DIR* d = ::opendir(dir.c_str());
  if (!d) {
    if (errno == ENOENT) return out;
    return Error::make(Code::kUnavailable, dir + ": " + std::strerror(errno));
  }
  const int fd = ::dirfd(d);
  struct Closer {
    DIR* d;
    ~Closer() { ::closedir(d); }
  } closer{d};
  // The folder's run files nothing wrote since `before`, by job. fstatat without following links:
  // only regular files count.
  std::map<std::string, std::vector<RunFile>> old;
  for (;;) {
    errno = 0;
    const dirent* e = ::readdir(d);
    if (!e) {
      if (errno != 0) return Error::make(Code::kUnavailable, dir + ": " + std::strerror(errno));
      break;
    }
    const std::string_view job = run_file_job(e->d_name);
    if (job.empty()) continue;
    struct stat st {};
    if (::fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    const TimeMs mtime = static_cast<TimeMs>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1'000'000;
    if (mtime >= before) continue;
    old[std::string(job)].push_back({e->d_name, static_cast<int64_t>(st.st_blocks) * 512});
  }
  const auto failed = [&](const std::string& what) {
    if (out.failed++ == 0) out.first_error = what;
  };
  for (const auto& [job_id, files] : old) {
    if (stopping && stopping()) break;
    auto rec = store.get("jobs", job_id);
    if (!rec && rec.error().code == Code::kNotFound) continue;  // not a job of this store's: not ours to delete
    if (!rec) {
      failed("job " + job_id + ": " + rec.error().message);
      continue;
    }
    // When it ended: its status's last change (a later write of the record, a label say, is not one).
    auto status = stored_job_status(rec->body);
    if (!status) {
      failed("job " + job_id + ": " + status.error().message);
      continue;
    }
    if (!is_terminal(status->state) || status->updated_at >= before) continue;
    bool any = false;
    for (const RunFile& f : files) {
      if (::unlinkat(fd, f.name.c_str(), 0) == 0) {
        ++out.files;
        out.bytes += f.bytes;
        any = true;
      } else if (errno != ENOENT) {
        failed(dir + "/" + f.name + ": " + std::strerror(errno));
      }
    }
    if (any) ++out.jobs;
  }
  return out;
}

void JobOutputRetention::start() {
  if (thread_.joinable() || app_.opts.slurm_output_dir.empty() || app_.opts.job_log_retention_days <= 0) return;
  {
    std::lock_guard lock(mu_);
    stopping_ = false;
  }
  thread_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!stopping_) {
      lock.unlock();
      (void)pass();
      lock.lock();
      cv_.wait_for(lock, std::chrono::milliseconds(interval_ms_), [this] { return stopping_; });
    }
  });
}

void JobOutputRetention::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Result<JobOutputSweep> JobOutputRetention::pass() {
  const std::string& dir = app_.opts.slurm_output_dir;
  const int64_t days = app_.opts.job_log_retention_days;
  auto swept = sweep_job_outputs(app_.store, dir, app_.clock.now(), days * kMsPerDay, [this] {
    std::lock_guard lock(mu_);
    return stopping_;
  });
  if (!swept) {
    spdlog::warn("{}", json({{"event", "job_output_sweep_failed"}, {"folder", dir}, {"error", swept.error().message}})
                           .dump(-1, ' ', false, json::error_handler_t::replace));
    return swept;
  }
  app_.metrics.count_job_outputs_removed(swept->files, swept->bytes);
  if (swept->files > 0 || swept->failed > 0) {
    json line = {{"event", "job_outputs_removed"}, {"folder", dir},
                 {"retention_days", days},         {"jobs", swept->jobs},
                 {"files", swept->files},          {"bytes", swept->bytes}};
    if (swept->failed > 0) {
      line["failed"] = swept->failed;
      line["first_error"] = swept->first_error;
    }
    spdlog::info("{}", line.dump(-1, ' ', false, json::error_handler_t::replace));
  }
  return swept;
}

}  // namespace gpurent
