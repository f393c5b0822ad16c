// `gpurent jobs logs NAME [-f] [--tail N] [--run ID]`: what a job's runs wrote, through
// GET /jobs/{ref}/logs (docs/api.md "Jobs"). Without -f it prints the run's log as it is now (page
// after page of at most 1 MiB, or the last N lines) and exits. With -f it then asks again every
// second from the answer's next_offset, printing what is new, moves on to a newer run when the
// job is requeued, and exits 0 once the server says the log is complete (the job is over and its
// newest run read to its end); Ctrl-C stops it. A job that has not started yet is waited for under
// -f. The text is printed as the job wrote it, control characters but line breaks, tabs and
// carriage returns neutralised; -o json / -o yaml print each answer document as the API sent it.
// When the answer starts past the offset asked for (the server's log cap discarded the bytes
// before it), a note on standard error says where it starts and how many bytes were discarded.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "cli/commands.h"
#include "cli/output.h"

namespace gpurent {

void add_job_logs_verb(CLI::App& jobs, CliContext& ctx);  // called by add_job_verbs (job_commands.cc)

namespace {

constexpr const char* kReadLimit = "1048576";  // the most one answer holds
constexpr auto kPollInterval = std::chrono::seconds(1);

struct LogOpts {
  std::string id;
  bool follow = false;
  int tail = 0;     // 0: from the start of the log
  int64_t run = 0;  // 0: the newest run
};

int64_t number(const json& doc, const char* key) {
  const json& v = at_path(doc, key);
  return v.is_number_integer() ? v.get<int64_t>() : 0;
}

// The first run of `runs` after `run`, when the job was requeued since.
std::optional<int64_t> newer_run(const json& doc, int64_t run) {
  const json& runs = at_path(doc, "runs");
  if (!runs.is_array()) return std::nullopt;
  for (const json& r : runs)
    if (r.is_number_integer() && r.get<int64_t>() > run) return r.get<int64_t>();
  return std::nullopt;
}

// The job's text made safe for a terminal, as all server text the CLI prints: line breaks, tabs and
// carriage returns (progress bars) pass; other control characters (escape sequences' ESC, C1
// controls) become '?'. The server has already replaced bytes that are not UTF-8.
std::string terminal_safe(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if ((c < 0x20 && c != '\n' && c != '\t' && c != '\r') || c == 0x7F) {
      out += '?';
    } else if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(s[i + 1]) <= 0x9F) {
      out += '?';  // U+0080..U+009F
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

bool not_started(const ApiError& e) {
  return e.status == 404 && cell_text(at_path(e.problem, "detail_message/code")) == "api.job_logs.not_started";
}

int print_logs(CliContext& ctx, const LogOpts& o) {
  int rc = kExitOk;
  ApiClient* c = ctx.client(&rc);
  if (!c) return rc;
  const std::string path = "/jobs" + seg(o.id) + "/logs";
  std::optional<int64_t> run;
  if (o.run > 0) run = o.run;
  int64_t offset = 0;
  bool tail = o.tail > 0, first_doc = true, said_waiting = false;
  for (;;) {
    Query q = {{"limit", kReadLimit}};
    if (tail)
      q.emplace_back("tail", std::to_string(o.tail));
    else
      q.emplace_back("offset", std::to_string(offset));
    if (run) q.emplace_back("run", std::to_string(*run));
    auto r = c->get(path, q);
    if (!r) {
      if (!o.follow || !not_started(r.error())) return ctx.fail(r.error());
      if (!said_waiting) ctx.err() << "waiting for job " << printable(o.id) << " to start (no logs yet)\n";
      said_waiting = true;
      std::this_thread::sleep_for(kPollInterval);
      continue;
    }
    const json& doc = *r;
    if (const int64_t from = number(doc, "offset"); !tail && from > offset)
      ctx.err() << "(job " << printable(o.id) << ", run " << number(doc, "run") << ": from byte " << from
                << ", where what the server's log cap kept begins; " << number(doc, "discarded")
                << " bytes before it were discarded)\n";
    if (ctx.format() == OutputFormat::kTable) {
      const json& data = at_path(doc, "data");
      if (data.is_string()) ctx.out() << terminal_safe(data.get_ref<const std::string&>()) << std::flush;
    } else {
      if (ctx.format() == OutputFormat::kYaml && !first_doc) ctx.out() << "---\n";
      ctx.emit(doc, [](std::ostream&) {});
      ctx.out() << std::flush;
    }
    first_doc = false;
    if (at_path(doc, "complete") == true) return kExitOk;

    const int64_t this_run = number(doc, "run"), next = number(doc, "next_offset"), size = number(doc, "size");
    const bool progressed = tail || next > offset;
    run = this_run;  // stay on this run: a newer one's file is another file
    tail = false;
    offset = next;
    if (next < size && progressed) continue;  // more is there now
    if (!o.follow) return kExitOk;
    if (auto newer = next >= size ? newer_run(doc, this_run) : std::nullopt) {
      ctx.err() << "(job " << printable(o.id) << ": run " << *newer << ", after a requeue)\n";
      run = newer;
      offset = 0;
      continue;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

}  // namespace

void add_job_logs_verb(CLI::App& jobs, CliContext& ctx) {
  auto o = std::make_shared<LogOpts>();
  auto* logs = jobs.add_subcommand(
      "logs", "print what a job's runs wrote (standard output and error); -f follows it until the job ends");
  logs->add_option("id", o->id, "job id or name")->required();
  logs->add_flag("-f,--follow", o->follow,
                 "keep printing new output (asking every second) until the job has ended; Ctrl-C stops");
  logs->add_option("--tail", o->tail, "start with the last N lines (1-10000)")->check(CLI::Range(1, 10000));
  logs->add_option("--run", o->run, "read this run of a requeued job, by its Slurm job id (default: the newest run)")
      ->check(CLI::Range(int64_t{1}, int64_t{999'999'999'999'999'999}));
  logs->callback([&ctx, o] { ctx.action = [&ctx, o] { return print_logs(ctx, *o); }; });
}

}  // namespace gpurent
