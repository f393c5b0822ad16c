// GET /api/v1/jobs/{ref}/logs: what a job's runs wrote to standard output and error. Logs are the
// files the Slurm executor has each run write into the server's --slurm-output-dir,
// "<job id>-<Slurm job id>.log" (server/services/executor_slurm.cc): a requeued job has one per
// run, the highest Slurm job id the newest. The folder is read whenever it is set, whatever the
// executor; without it there are no logs (the simulated executor runs no processes). Only files
// named exactly so are read, and only regular files (never links, never the ".status" files a
// container wrapper may leave beside them); a path is built from the job's stored id and a number
// found by listing the folder, never from request text. Reading is bounded: one answer holds at
// most `limit` bytes (1 MiB), read from `offset`, or the last `tail` lines within those bytes read
// backwards in blocks. `data` never ends inside a UTF-8 sequence while the file can still grow,
// and bytes that are not UTF-8 are replaced by U+FFFD, so the answer is valid JSON text. A log
// past the server's cap (--job-log-max-mib) keeps its last bytes after a hole (exec/log_cap.h):
// reads skip the hole (`discarded` says how many bytes it holds), starting at the first whole line
// after it.
// Readers: as GET /jobs/{ref} (operators and the job's tenant; another tenant's job is 404).
// Schema: docs/api.md "Jobs".
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_limits.h"
#include "exec/log_cap.h"
#include "model/job.h"
#include "model/job_state.h"
#include "server/api/resources.h"
#include "server/http/http_util.h"

namespace gpurent {

void register_job_logs_route(App& app, Router& srv);  // called by register_job_routes (jobs.cc)
// The last max_bytes of the newest run's log of a job (valid UTF-8); kNotFound when it left none.
// Used by POST /api/v1/acceptance-runs {job} (acceptance_runs.cc).
Result<std::string> newest_job_log_tail(const std::string& dir, const std::string& job_id, int64_t max_bytes);

namespace {

constexpr int64_t kDefaultLimit = 64 * 1024;
constexpr int64_t kMaxLimit = 1024 * 1024;
constexpr int64_t kMaxTail = 10'000;
constexpr int64_t kMaxNumber = 999'999'999'999'999'999;  // 18 digits: offsets and Slurm job ids
constexpr int64_t kBlock = 64 * 1024;                    // tail reads backwards this much at a time

// A whole number in [lo, hi] written as at most 18 decimal digits (no sign, no blanks).
std::optional<int64_t> whole_number(std::string_view v, int64_t lo, int64_t hi) {
  if (v.empty() || v.size() > 18 || v.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  int64_t n = 0;
  for (char c : v) n = n * 10 + (c - '0');
  if (n < lo || n > hi) return std::nullopt;
  return n;
}

struct LogParams {
  std::optional<int64_t> run;  // a Slurm job id; none: the newest run
  int64_t offset = 0;
  int64_t limit = kDefaultLimit;
  std::optional<int64_t> tail;  // lines
};

Result<LogParams> log_params(const httplib::Request& req) {
  static const char* const kKnown[] = {"run", "offset", "limit", "tail"};
  FieldErrors errs;
  for (const auto& [k, v] : req.params)
    if (std::find(std::begin(kKnown), std::end(kKnown), k) == std::end(kKnown))
      errs.add(k, Message("api.params.unknown").arg("allowed", "run, offset, limit, tail"));
  auto read = [&](const char* name, int64_t lo, int64_t hi, Message why) -> std::optional<int64_t> {
    if (!req.has_param(name)) return std::nullopt;
    if (req.get_param_value_count(name) > 1) {
      errs.add(name, Message("api.job_logs.repeated"));
      return std::nullopt;
    }
    auto n = whole_number(req.get_param_value(name), lo, hi);
    if (!n) errs.add(name, std::move(why));
    return n;
  };
  LogParams p;
  p.run = read("run", 1, kMaxNumber, Message("api.job_logs.run"));
  p.offset =
      read("offset", 0, kMaxNumber, Message("api.job_logs.offset").arg("max", std::to_string(kMaxNumber))).value_or(0);
  p.limit = read("limit", 1, kMaxLimit, Message("http.limit.integer").arg("max", std::to_string(kMaxLimit)))
                .value_or(kDefaultLimit);
  p.tail = read("tail", 1, kMaxTail, Message("api.job_logs.tail").arg("max", std::to_string(kMaxTail)));
  if (!errs.empty()) return errs.to_error();
  return p;
}

Error unreadable(const std::string& what, const std::string& why) {
  spdlog::warn("{}", json({{"event", "job_logs_unreadable"}, {"path", what}, {"error", why}})
                         .dump(-1, ' ', false, json::error_handler_t::replace));
  return Error::make(Code::kUnavailable, Message("api.job_logs.unreadable"));
}

// The Slurm job ids of the job's runs that left a log in `dir`, ascending: regular files (not
// links) named exactly "<job id>-<digits>.log". A missing folder holds none.
Result<std::vector<int64_t>> runs_with_logs(const std::string& dir, const std::string& job_id) {
  namespace fs = std::filesystem;
  std::vector<int64_t> runs;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) {
    if (ec == std::errc::no_such_file_or_directory) return runs;
    return unreadable(dir, ec.message());
  }
  const std::string prefix = job_id + "-", suffix = ".log";
  for (const fs::directory_iterator end; it != end;) {
    const std::string name = it->path().filename().string();
    if (name.size() > prefix.size() + suffix.size() && name.starts_with(prefix) && name.ends_with(suffix)) {
      const std::string_view digits =
          std::string_view(name).substr(prefix.size(), name.size() - prefix.size() - suffix.size());
      // Slurm writes ids without leading zeros; the path is rebuilt from the number, so "007" could
      // not be found again.
      auto n = digits.front() == '0' ? std::nullopt : whole_number(digits, 1, kMaxNumber);
      std::error_code sec;
      if (n && it->symlink_status(sec).type() == fs::file_type::regular) runs.push_back(*n);
    }
    it.increment(ec);
    if (ec) return unreadable(dir, ec.message());
  }
  std::sort(runs.begin(), runs.end());
  runs.erase(std::unique(runs.begin(), runs.end()), runs.end());
  return runs;
}

// An open file descriptor, closed on destruction.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

// Up to n bytes at `offset` (fewer at the end of the file).
Result<std::string> read_at(int fd, int64_t offset, int64_t n, const std::string& path) {
  std::string buf(static_cast<size_t>(n), '\0');
  size_t got = 0;
  while (got < buf.size()) {
    const ssize_t r = ::pread(fd, buf.data() + got, buf.size() - got, static_cast<off_t>(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return unreadable(path, std::strerror(errno));
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  buf.resize(got);
  return buf;
}

// Where data taken from buf[0, want) ends so that no UTF-8 sequence is split: before a sequence
// that `want` cuts. buf may hold up to 3 bytes past `want` (the file's next bytes): a sequence the
// limit cuts is left for the next read (or, when it is all the read holds, taken whole so a read
// always progresses); one the end of the file cuts is held back while the file may still grow,
// and otherwise kept (its bytes then become U+FFFD).
size_t utf8_end(std::string_view buf, size_t want, bool may_grow) {
  size_t p = want;
  for (int k = 0; k < 3 && p > 0; ++k) {
    const auto c = static_cast<unsigned char>(buf[--p]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back for its lead
    const size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
    if (p + len <= want) return want;
    if (p + len <= buf.size()) return p > 0 ? p : p + len;
    return may_grow ? p : want;
  }
  return want;
}

struct Slice {
  int64_t offset = 0;  // where `bytes` start in the file
  std::string bytes;
  int64_t next = 0;  // where the next read starts
};

// Up to `limit` bytes from `offset`. Past the end: nothing, and the next read starts at the end.
// `cut`: offset is where the log cap's hole ends, likely inside a line: the answer starts after
// the first line break it holds (zeros a file system reports as data before it skipped too), or,
// when it holds none, at the first whole character. (A hole that ends where a line starts costs
// that line: the byte before it is gone, so nothing can tell.)
Result<Slice> read_forward(int fd, const std::string& path, int64_t size, int64_t offset, int64_t limit, bool may_grow,
                           bool cut) {
  if (offset >= size) return Slice{offset, "", size};
  const int64_t want = std::min(limit, size - offset);
  auto buf = read_at(fd, offset, want + std::min<int64_t>(3, size - offset - want), path);
  if (!buf) return buf.error();
  size_t end = utf8_end(*buf, std::min(static_cast<size_t>(want), buf->size()), may_grow);
  buf->resize(end);
  size_t skip = 0;
  if (cut) {
    skip = std::min(buf->find_first_not_of('\0'), buf->size());
    if (const size_t nl = buf->find('\n', skip); nl != std::string::npos)
      skip = nl + 1;
    else
      for (int k = 0; k < 3 && skip < buf->size() && (static_cast<unsigned char>((*buf)[skip]) & 0xC0) == 0x80; ++k)
        ++skip;
  }
  return Slice{offset + static_cast<int64_t>(skip), buf->substr(skip), offset + static_cast<int64_t>(end)};
}

// Where a log's kept bytes start: not asked of a log too small ever to be capped, since
// lseek(SEEK_DATA) may cost a file system a sync. (Not judged by the space the file holds:
// preallocation can make a capped file hold as much as its size.)
int64_t kept_from(int fd, const struct stat& st) {
  if (st.st_size <= kNeverCappedBytes) return 0;
  return first_kept_byte(fd, st.st_size);
}

// The last `lines` lines within the file's last `limit` bytes, read backwards a block at a time.
// A newline ending the file ends its last line. When the window holds fewer lines, the answer
// starts at the first line that starts in it (the window's first character when none does).
// The window never reaches back past `kept` (the log cap's hole ends there).
Result<Slice> read_tail(int fd, const std::string& path, int64_t size, int64_t lines, int64_t limit, bool may_grow,
                        int64_t kept) {
  const int64_t lo = std::max<int64_t>(kept, size - limit);
  std::vector<std::string> blocks;  // newest first
  int64_t hi = size, start = -1, earliest_newline = -1, seen = 0;
  while (hi > lo && start < 0) {
    const int64_t from = std::max(lo, hi - kBlock);
    auto b = read_at(fd, from, hi - from, path);
    if (!b) return b.error();
    if (static_cast<int64_t>(b->size()) != hi - from)  // cut short under us
      return Error::make(Code::kUnavailable, Message("api.job_logs.changed"));
    for (int64_t i = hi - 1; i >= from; --i) {
      if ((*b)[i - from] != '\n' || i == size - 1) continue;
      if (++seen == lines) {
        start = i + 1;
        break;
      }
      earliest_newline = i;
    }
    blocks.push_back(std::move(*b));
    hi = from;
  }
  std::string window;
  for (auto b = blocks.rbegin(); b != blocks.rend(); ++b) window += *b;
  if (start < 0) start = hi == 0 ? 0 : earliest_newline >= 0 ? earliest_newline + 1 : hi;
  // A window cut inside a character starts at the next one.
  for (int k = 0; k < 3 && start < size && (static_cast<unsigned char>(window[start - hi]) & 0xC0) == 0x80; ++k)
    ++start;
  std::string bytes = window.substr(static_cast<size_t>(start - hi));
  bytes.resize(utf8_end(bytes, bytes.size(), may_grow));
  const int64_t next = start + static_cast<int64_t>(bytes.size());
  return Slice{start, std::move(bytes), next};
}

// The job's id as a file name part: ids are "<prefix>_<hex>"; anything else is refused rather
// than put into a path.
bool safe_id(const std::string& id) {
  return !id.empty() && std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// Whether the job ended (succeeded, failed, cancelled) before `cut` after it had run.
bool ended_before(App& app, const Record& job, TimeMs cut) {
  auto status = stored_job_status(job.body);
  if (!status || !is_terminal(status->state) || status->updated_at >= cut) return false;
  auto events = app.store.job_events(job.id);
  return events &&
         std::any_of(events->begin(), events->end(), [](const JobEvent& e) { return e.to_state == "running"; });
}

void get_job_logs(App& app, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto job = find_visible(app.store, app.kinds.at("jobs"), p, req.matches[1]);
  if (!job) return send_problem(res, job.error(), req.path);
  auto params = log_params(req);
  if (!params) return send_problem(res, params.error(), req.path);
  const std::string& dir = app.opts.slurm_output_dir;
  if (dir.empty())
    return send_problem(
        res,
        Error::make(Code::kNotFound, app.opts.executor == "sim" ? Message("api.job_logs.sim_executor")
                                                                : Message("api.job_logs.output_discarded")),
        req.path);
  if (!safe_id(job->id)) return send_problem(res, unreadable(job->id, "not an id"), req.path);
  auto runs = runs_with_logs(dir, job->id);
  if (!runs) return send_problem(res, runs.error(), req.path);
  const std::optional<JobState> state = parse_job_state(job->state);
  const bool started = state && *state != JobState::kPending && *state != JobState::kAdmitted;
  if (runs->empty()) {
    // Deleted by the retention (services/job_output_retention.h): the job ran, and ended before
    // the retention's cut.
    const int64_t days = app.opts.job_log_retention_days;
    if (days > 0 && ended_before(app, *job, app.clock.now() - days * kMsPerDay))
      return send_problem(
          res,
          Error::make(Code::kNotFound,
                      Message("api.job_logs.expired").arg("job", job->name).arg("days", std::to_string(days))),
          req.path);
    return send_problem(
        res,
        Error::make(Code::kNotFound,
                    Message(started ? "api.job_logs.none" : "api.job_logs.not_started").arg("job", job->name)),
        req.path);
  }
  const int64_t run = params->run.value_or(runs->back());
  if (!std::binary_search(runs->begin(), runs->end(), run)) {
    std::string list;
    for (int64_t r : *runs) list += (list.empty() ? "" : ", ") + std::to_string(r);
    return send_problem(
        res,
        error_with_field(
            Code::kNotFound,
            Message("api.job_logs.no_such_run").arg("job", job->name).arg("run", std::to_string(run)).arg("runs", list),
            "run", Message("api.job_logs.run_unknown")),
        req.path);
  }
  const bool newest = run == runs->back();
  const bool terminal = state && is_terminal(*state);
  const bool may_grow = newest && !terminal;

  const std::string path = dir + "/" + job->id + "-" + std::to_string(run) + ".log";
  // O_NOFOLLOW: a link put there since the listing is refused; O_NONBLOCK: nor does a FIFO block.
  Fd f(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (f.fd < 0 && errno == ENOENT)  // removed since the listing
    return send_problem(res, Error::make(Code::kNotFound, Message("api.job_logs.none").arg("job", job->name)),
                        req.path);
  if (f.fd < 0) return send_problem(res, unreadable(path, std::strerror(errno)), req.path);
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) return send_problem(res, unreadable(path, std::strerror(errno)), req.path);
  if (!S_ISREG(st.st_mode))
    return send_problem(res, Error::make(Code::kNotFound, Message("api.job_logs.none").arg("job", job->name)),
                        req.path);
  const int64_t size = st.st_size;
  // Where the kept bytes start: asked again after the read, since the cap may have moved it
  // while this read (what it read before the new start would be zeros); read again until the
  // read starts past it, a few times at most.
  int64_t kept = kept_from(f.fd, st);
  Result<Slice> slice = Error::make(Code::kUnavailable, Message("api.job_logs.changed"));
  for (int attempt = 0; attempt < 4; ++attempt) {
    const int64_t from = std::max(params->offset, kept);
    auto read = params->tail ? read_tail(f.fd, path, size, *params->tail, params->limit, may_grow, kept)
                             : read_forward(f.fd, path, size, from, params->limit, may_grow, from > params->offset);
    if (!read) return send_problem(res, read.error(), req.path);
    struct stat now {};
    const int64_t now_kept = ::fstat(f.fd, &now) == 0 ? std::min(kept_from(f.fd, now), size) : kept;
    const bool untouched = now_kept <= kept || now_kept <= read->offset;
    kept = std::max(kept, now_kept);
    if (untouched) {
      slice = std::move(read);
      break;
    }
  }
  if (!slice) return send_problem(res, slice.error(), req.path);

  send_json(res, 200,
            {{"job_id", job->id},
             {"job", job->name},
             {"state", job->state},
             {"run", run},
             {"runs", *runs},
             {"offset", slice->offset},
             {"next_offset", slice->next},
             {"size", size},
             {"discarded", kept},
             {"data", valid_utf8(slice->bytes)},
             {"complete", terminal && newest && slice->next == size}});
}

}  // namespace

Result<std::string> newest_job_log_tail(const std::string& dir, const std::string& job_id, int64_t max_bytes) {
  const Error none = Error::make(Code::kNotFound, Message("api.job_logs.none").arg("job", job_id));
  if (dir.empty() || !safe_id(job_id)) return none;
  auto runs = runs_with_logs(dir, job_id);
  if (!runs) return runs.error();
  if (runs->empty()) return none;
  const std::string path = dir + "/" + job_id + "-" + std::to_string(runs->back()) + ".log";
  Fd f(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (f.fd < 0) return errno == ENOENT ? none : unreadable(path, std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) return unreadable(path, std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return none;
  const int64_t size = st.st_size, n = std::min<int64_t>(size - kept_from(f.fd, st), max_bytes);
  auto bytes = read_at(f.fd, size - n, n, path);
  if (!bytes) return bytes.error();
  // Zeros at the start: the cap punched further while this read.
  return valid_utf8(std::string_view(*bytes).substr(std::min(bytes->find_first_not_of('\0'), bytes->size())));
}

void register_job_logs_route(App& app, Router& srv) {
  route(app, srv, "GET", "/api/v1/jobs/([^/]+)/logs", "/api/v1/jobs/{id}/logs", get_job_logs);
}

}  // namespace gpurent
