#include "server_fixture.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "core/yaml_json.h"
#include "io/files.h"
#include "server/services/balances.h"
#include "server/services/invoices.h"
#include "store/store.h"

namespace gpurent::testing {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// --- Resp --------------------------------------------------------------------------------------

std::string Resp::describe() const {
  if (status < 0) return "no response: " + error;
  return std::to_string(status) + " " + content_type + " " + text.substr(0, 2000);
}

std::vector<std::string> Resp::error_fields() const {
  std::vector<std::string> out;
  if (body.is_object() && body.contains("errors") && body["errors"].is_array())
    for (const auto& e : body["errors"]) out.push_back(e.value("field", ""));
  return out;
}

std::string Resp::reason_for(const std::string& field) const {
  if (body.is_object() && body.contains("errors") && body["errors"].is_array())
    for (const auto& e : body["errors"])
      if (e.value("field", "") == field) return e.value("reason", "");
  return "";
}

Resp expect_2xx(Resp r, const std::string& what) {
  if (r.status < 200 || r.status > 299) throw std::runtime_error(what + " failed: " + r.describe());
  return r;
}

// --- ServerProcess -----------------------------------------------------------------------------

static std::string make_temp_dir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/gpurent-api-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) throw std::runtime_error("mkdtemp failed: " + std::string(std::strerror(errno)));
  return std::string(buf.data());
}

static std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ServerProcess::ServerProcess(std::vector<std::string> extra_args) : extra_args_(std::move(extra_args)) {
  // Writing to a server that was just killed must fail the request, not the test binary.
  ::signal(SIGPIPE, SIG_IGN);
  dir_ = make_temp_dir();
  try {
    start();
  } catch (...) {  // the destructor will not run: clean up here
    std::error_code ec;
    fs::remove_all(dir_, ec);
    throw;
  }
}

ServerProcess::~ServerProcess() {
  if (running()) stop();
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::string ServerProcess::log() const { return read_file(dir_ + "/server.log"); }

void ServerProcess::start() {
  if (running()) throw std::runtime_error("server already running");
  // $GPURENT_TEST_BIN runs the suite against another build of the binary (e.g. an installed one).
  const char* bin = std::getenv("GPURENT_TEST_BIN");
  std::vector<std::string> args = {bin && *bin ? bin : GPURENT_BIN,  "serve",      "--port",           "0",
                                   "--host",     "127.0.0.1",  "--db",             db_path(),
                                   "--admin-token-file", dir_ + "/admin-token", "--log-level", "warn"};
  // A test may listen elsewhere (containers reach the server through their gateway): its --host wins.
  if (std::find(extra_args_.begin(), extra_args_.end(), "--host") != extra_args_.end())
    args.erase(args.begin() + 4, args.begin() + 6);
  // A test's own --db (a PostgreSQL URL) wins too; the server's other files stay in the folder.
  if (std::find(extra_args_.begin(), extra_args_.end(), "--db") != extra_args_.end()) {
    auto db = std::find(args.begin(), args.end(), "--db");
    *(db + 1) = dir_;
    *db = "--state-dir";
  }
  args.insert(args.end(), extra_args_.begin(), extra_args_.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  int log_fd = ::open((dir_ + "/server.log").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log_fd < 0) throw std::runtime_error("cannot open the server log");
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {  // child: only async-signal-safe calls until exec
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive a crashed test binary
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(log_fd);
  pid_ = pid;
  stdout_fd_ = out[0];

  // The first stdout line announces the URL once the server is ready to serve.
  std::string line;
  // A demo that replays past days (--demo-days) commits thousands of steps before it listens.
  const bool replay = std::find(extra_args_.begin(), extra_args_.end(), "--demo-days") != extra_args_.end();
  const int wait_s = replay ? 300 : 30;  // generous: a loaded machine starts servers late
  auto deadline = Clock::now() + std::chrono::seconds(wait_s);
  bool got_line = false, eof = false;
  while (!got_line && !eof) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) break;
    pollfd p{stdout_fd_, POLLIN, 0};
    int n = ::poll(&p, 1, static_cast<int>(left));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    char c;
    ssize_t r = ::read(stdout_fd_, &c, 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0)
      eof = true;  // the server closed stdout: it exited
    else if (c == '\n')
      got_line = true;
    else
      line.push_back(c);
  }
  std::string why;
  if (eof) {
    why = "the server exited before it was listening (stdout: '" + line + "')";
  } else if (!got_line) {
    why = "no 'listening' line within " + std::to_string(wait_s) + " s";
  } else {
    try {
      listening_ = json::parse(line);
      if (listening_.value("event", "") != "listening") why = "unexpected first line: " + line;
      url_ = listening_.value("url", "");
      if (url_.empty()) why = "no url in: " + line;
    } catch (const json::exception& e) {
      why = "first stdout line is not JSON: " + line;
    }
  }
  if (why.empty()) {
    admin_token_ = read_file(dir_ + "/admin-token");
    while (!admin_token_.empty() && (admin_token_.back() == '\n' || admin_token_.back() == ' '))
      admin_token_.pop_back();
    if (admin_token_.empty()) why = "admin token file is empty";
  }
  if (!why.empty()) {
    kill9();
    throw std::runtime_error("server did not start: " + why + "\n--- server log ---\n" + log());
  }
}

static int wait_exit(pid_t pid, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  int status = 0;
  while (true) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR) return -1;
    if (Clock::now() > deadline) return -2;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void ServerProcess::stop() {
  if (!running()) return;
  ::kill(pid_, SIGTERM);
  // The server's drain takes up to 10 s itself: 30 s before calling it hung.
  int st = wait_exit(pid_, std::chrono::seconds(30));
  if (st == -2) {  // hung on shutdown: record it as a failure and clean up
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &st, 0);
    exit_status_ = -2;
  } else {
    exit_status_ = (st >= 0 && WIFEXITED(st)) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  }
  pid_ = -1;
  ::close(stdout_fd_);
  stdout_fd_ = -1;
}

void ServerProcess::kill9() {
  if (!running()) return;
  ::kill(pid_, SIGKILL);
  int st = 0;
  ::waitpid(pid_, &st, 0);
  exit_status_ = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
  pid_ = -1;
  ::close(stdout_fd_);
  stdout_fd_ = -1;
}

void ServerProcess::send_signal(int sig) {
  if (running()) ::kill(pid_, sig);
}

bool ServerProcess::wait_exited(std::chrono::milliseconds timeout) {
  if (!running()) return true;
  int st = wait_exit(pid_, timeout);
  if (st == -2) return false;
  exit_status_ = (st >= 0 && WIFEXITED(st)) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  pid_ = -1;
  ::close(stdout_fd_);
  stdout_fd_ = -1;
  return true;
}

void ServerProcess::restart() {
  stop();
  start();
}

httplib::Client ServerProcess::client() const {
  httplib::Client c(url_);
  c.set_connection_timeout(5, 0);
  c.set_read_timeout(15, 0);
  c.set_write_timeout(15, 0);
  return c;
}

static std::string media_type(const std::string& ct) {
  std::string t = ct.substr(0, ct.find(';'));
  while (!t.empty() && t.back() == ' ') t.pop_back();
  return t;
}

Resp ServerProcess::raw(const std::string& method, const std::string& path, const std::string& token,
                        const std::string& body, const std::string& content_type) const {
  httplib::Client c = client();
  httplib::Request r;
  r.method = method;
  r.path = path;
  if (!token.empty()) r.headers.emplace("Authorization", "Bearer " + token);
  if (!content_type.empty()) r.headers.emplace("Content-Type", content_type);
  r.body = body;
  auto res = c.send(r);
  Resp out;
  if (!res) {
    out.error = httplib::to_string(res.error());
    return out;
  }
  out.status = res->status;
  out.headers = res->headers;
  out.text = res->body;
  out.content_type = media_type(res->get_header_value("Content-Type"));
  if (out.content_type.find("json") != std::string::npos && !out.text.empty()) {
    out.body = json::parse(out.text, nullptr, /*allow_exceptions=*/false);
  }
  return out;
}

Resp ServerProcess::req(const std::string& method, const std::string& path, const std::string& token,
                        const std::optional<json>& body) const {
  if (!body) return raw(method, path, token, "", "");
  return raw(method, path, token, body->dump(), "application/json");
}

Resp ServerProcess::admin(const std::string& method, const std::string& path, const std::optional<json>& body) const {
  return req(method, path, admin_token_, body);
}

// --- documents ---------------------------------------------------------------------------------

json example(const std::string& file) {
  std::string path = std::string(GPURENT_SOURCE_DIR) + "/examples/" + file;
  auto j = yaml_to_json(read_file(path));
  if (!j) throw std::runtime_error("cannot read " + path + ": " + j.error().message);
  return *j;
}

json supplier_doc(const std::string& name) {
  json s = example("supplier.yaml");
  s["name"] = name;
  s["sites"] = json::array({{{"name", "site-a"}, {"region", "cn-east"}, {"city", "Shanghai"}, {"tier", 3}}});
  return s;
}

json node_doc(const std::string& supplier, const std::string& name) {
  json n = example("node.yaml");
  n["name"] = name;
  n["supplier"] = supplier;
  n["site"] = "site-a";
  // GPU UUIDs identify physical cards: give each node its own.
  for (auto& g : n["gpus"]) {
    std::string u = g["uuid"].get<std::string>();
    std::string tag = std::to_string(std::hash<std::string>{}(supplier + "/" + name) % 100000000);
    tag.insert(0, 8 - tag.size(), '0');
    g["uuid"] = u.substr(0, u.size() - 8) + tag;
  }
  return n;
}

json offer_doc(const std::string& supplier, const std::string& name) {
  json o = example("offer.yaml");
  o["name"] = name;
  o["supplier"] = supplier;
  o["node_selector"] = {{"site", "site-a"}};
  return o;
}

json tenant_doc(const std::string& name, const std::string& currency) {
  return {{"name", name}, {"display_name", "Tenant " + name}, {"currency", currency},
          {"contact_email", "ops@" + name + ".example.com"}, {"labels", {{"tier", "gold"}}}};
}

json project_doc(const std::string& tenant, const std::string& name) {
  json p = example("project.yaml");
  p["name"] = name;
  p["tenant"] = tenant;
  return p;
}

json user_doc(const std::string& name, const std::string& role, const std::string& tenant,
              const std::string& supplier) {
  json u = {{"name", name}, {"email", name + "@example.com"}, {"role", role}};
  if (!tenant.empty()) u["tenant"] = tenant;
  if (!supplier.empty()) u["supplier"] = supplier;
  return u;
}

json job_doc(const std::string& project, const std::string& name) {
  json j = example("job.yaml");
  j["name"] = name;
  j["project"] = project;
  j["workers"] = 1;
  j["gpus_per_worker"] = 1;
  j["resources"] = {{"cpu_cores", 8}, {"memory_gib", 64}};
  // The example's cap (3.20) is below offer_doc's prices (CNY 17.50): capped jobs would never start.
  j["billing"].erase("max_price_per_gpu_hour");
  return j;
}

std::string make_user_token(const ServerProcess& s, const std::string& user, const std::string& role,
                            const std::string& tenant, const std::string& supplier) {
  expect_2xx(s.admin("POST", "/api/v1/users", user_doc(user, role, tenant, supplier)), "create user " + user);
  Resp t = expect_2xx(s.admin("POST", "/api/v1/tokens", json{{"user", user}, {"name", "test"}}), "token for " + user);
  return t.body.at("token").get<std::string>();
}

std::vector<std::string> list_ids(const ServerProcess& s, const std::string& path, const std::string& token) {
  std::vector<std::string> ids;
  std::string after;
  const char sep = path.find('?') == std::string::npos ? '?' : '&';
  for (int page = 0; page < 1000; ++page) {
    std::string p = path + sep + "limit=1000" + (after.empty() ? "" : "&after=" + after);
    Resp r = expect_2xx(s.req("GET", p, token), "GET " + p);
    for (const auto& it : r.body.at("items")) ids.push_back(it.at("id").get<std::string>());
    if (r.body.at("next_after").is_null()) return ids;
    after = r.body.at("next_after").get<std::string>();
  }
  throw std::runtime_error("GET " + path + ": paging does not end");
}

json wait_for(const ServerProcess& s, const std::string& path, const std::function<bool(const json&)>& pred,
              int seconds) {
  json last;
  for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
       std::chrono::steady_clock::now() < until;) {
    Resp r = s.admin("GET", path);
    last = r.body;
    if (r.status == 200 && pred(last)) return last;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ADD_FAILURE() << "timed out waiting on " << path << "; last: " << last.dump();
  return last;
}

void edit_database(const ServerProcess& s, const std::string& sql, int rows) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(s.db_path().c_str(), &db), SQLITE_OK);
  sqlite3_busy_timeout(db, 5000);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "") << "\n" << sql;
  EXPECT_EQ(sqlite3_changes(db), rows) << sql;
  sqlite3_free(err);
  sqlite3_close(db);
}

int64_t micros(const std::string& amount) {
  const bool neg = !amount.empty() && amount[0] == '-';
  const std::string a = neg ? amount.substr(1) : amount;
  const size_t dot = a.find('.');
  const int64_t whole = std::stoll(a.substr(0, dot));
  const int64_t frac = dot == std::string::npos ? 0 : std::stoll((a.substr(dot + 1) + "000000").substr(0, 6));
  return (neg ? -1 : 1) * (whole * 1'000'000 + frac);
}
int64_t micros(const json& j) { return micros(j.get<std::string>()); }

std::string local_slurm_skip_reason() {
  if (geteuid() != 0) return "needs root to run slurmd and munged";
  const char* image = std::getenv("SLURM_LOCAL_IMAGE");
  if (image != nullptr && *image != '\0') {
    const std::string check = std::string("podman image exists '") + image + "' 2>/dev/null";
    if (std::system(check.c_str()) != 0)
      return std::string("no image ") + image + ": scripts/slurm-image could not build it (see the slurm24_image test)";
    return "";
  }
  if (std::system("command -v slurmctld >/dev/null 2>&1") != 0)
    return "slurm-wlm is not installed (scripts/install-deps.sh)";
  return "";
}

void use_local_slurm_tools(const std::string& dir) {
  if (!std::filesystem::exists(dir + "/container")) return;
  const char* path = std::getenv("PATH");
  ::setenv("PATH", (dir + "/bin:" + (path ? path : "/usr/bin:/bin")).c_str(), 1);
}

json acme_dc_contract(const json& commitments) {
  json c = {{"name", "acme-dc"},  {"tenant", "acme"},  {"supplier", "dc"},
            {"offers", {"h100"}}, {"currency", "CNY"}, {"starts_at", "2020-01-01T00:00:00Z"}};
  if (!commitments.empty()) c["commitments"] = commitments;
  return c;
}

std::string acme_and_beta(const ServerProcess& s) {
  // In CNY, as offer_doc's offers: the scheduler uses offers in a tenant's own currency only.
  json acme_doc = tenant_doc("acme"), beta_doc = tenant_doc("beta");
  acme_doc["currency"] = beta_doc["currency"] = "CNY";
  const std::string acme = expect_2xx(s.admin("POST", "/api/v1/tenants", acme_doc), "tenant").body["id"];
  expect_2xx(s.admin("POST", "/api/v1/tenants", beta_doc), "tenant");
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "project");
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("beta", "nlp")), "project");
  return acme;
}

json run_accept(const std::string& dir, const std::string& node, const json& node_body, const std::string& extra,
                const json& nccl_hosts) {
  json sim = {{"gpus",
               {{{"index", 0},
                 {"uuid", node_body["gpus"][5]["uuid"]},
                 {"name", "simulated H100"},
                 {"fp16_tflops", 712.5},
                 {"bf16_tflops", 705},
                 {"hbm_gbps", 2900},
                 {"h2d_gbps", 52.3}},
                {{"index", 1}, {"uuid", node_body["gpus"][6]["uuid"]}, {"fp16_tflops", 650}}}},
              {"nccl_busbw_gbps", 355.5}};
  if (!nccl_hosts.is_null()) sim["nccl_hosts"] = nccl_hosts;
  std::ofstream(dir + "/sim.json") << sim.dump();
  const std::string cmd = std::string(GPURENT_ACCEPT_BIN) + " --node " + node + " --gpu-sim " + dir +
                          "/sim.json --storage-dir " + dir + "/disk --storage-size-mb 32 --network-seconds 1 --out " +
                          dir + "/report.json " + extra + " > " + dir + "/accept.log 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(dir + "/report.json");
  json r = json::parse(in, nullptr, false);
  EXPECT_FALSE(r.is_discarded());
  return r;
}

void expect_month_reads_equal_invoices(const std::string& db, const std::vector<TimeMs>& instants) {
  auto store = open_sqlite_store(SqliteOptions{db, false, 5000});
  ASSERT_TRUE(store) << store.error().message;
  auto catalog = load_catalog_file(default_catalog_path());
  ASSERT_TRUE(catalog) << catalog.error().message;
  auto tenants = (*store)->list({"tenants", {}, "", 100});
  ASSERT_TRUE(tenants) << tenants.error().message;
  ASSERT_FALSE(tenants->items.empty());
  int compared = 0, with_lines = 0;
  for (const Record& t : tenants->items)
    for (TimeMs now : instants) {
      const TimeMs month = month_start(now), later = now + 3'600'000, prev = add_months(month, -1);
      const TimeMs day = now - now % 86'400'000;
      MonthInvoiceSource source(**store, *catalog, t.id, later);
      struct Ask {
        TimeMs from, to, at;
        bool per_day;
      };
      for (const Ask& a : {Ask{month, add_months(month, 1), now, true}, Ask{month, add_months(month, 1), now, false},
                           Ask{prev, month, month, true}, Ask{prev, month, now, false}, Ask{month, later, later, false},
                           Ask{day, day + 86'400'000, now, false}}) {
        auto shared = source.invoice(a.from, a.to, a.at, a.per_day);
        auto alone = build_invoice(**store, *catalog, t.id, a.from, a.to, a.at, a.per_day);
        ASSERT_TRUE(shared) << shared.error().message;
        ASSERT_TRUE(alone) << alone.error().message;
        const std::string what = t.name + " " + format_rfc3339(a.from) + ".." + format_rfc3339(a.to) + " at " +
                                 format_rfc3339(a.at) + (a.per_day ? " per day" : "");
        EXPECT_EQ(to_json(*shared), to_json(*alone)) << what;
        // build_invoice reads only the runs that can count in the period: the same invoice as
        // from every run the tenant ever had.
        auto every = build_invoice_from_every_run(**store, *catalog, t.id, a.from, a.to, a.at, a.per_day);
        ASSERT_TRUE(every) << every.error().message;
        EXPECT_EQ(to_json(*alone), to_json(*every)) << what << " (from every run)";
        ++compared;
        for (const auto& sec : alone->sections) with_lines += !sec.rated.lines.empty();
      }
      EXPECT_EQ(source.months_read(), 2) << t.name << ": the month and the previous one, each read once";
      // The dashboards' day invoices (DayInvoiceSource: the month to date read once, narrowed to
      // each day; it leaves `unpriced` empty): the month's first day and today.
      DayInvoiceSource days(**store, *catalog, t.id, now);
      for (TimeMs d : {month, day}) {
        auto shared_day = days.day(d);
        auto alone_day = build_invoice(**store, *catalog, t.id, d, d + 86'400'000, now);
        ASSERT_TRUE(shared_day) << shared_day.error().message;
        ASSERT_TRUE(alone_day) << alone_day.error().message;
        alone_day->unpriced.clear();
        EXPECT_EQ(to_json(*shared_day), to_json(*alone_day)) << t.name << " day " << format_rfc3339(d);
        ++compared;
      }
      auto bal = tenant_balances(**store, *catalog, t, now, &source);
      ASSERT_TRUE(bal) << bal.error().message;
      EXPECT_EQ(source.months_read(), 2) << t.name << ": the balance read no month again";
      auto own = tenant_balances(**store, *catalog, t, now);
      ASSERT_TRUE(own) << own.error().message;
      EXPECT_EQ(to_json(*bal), to_json(*own)) << t.name;
    }
  EXPECT_EQ(compared, static_cast<int>(8 * instants.size() * tenants->items.size()));
  EXPECT_GT(with_lines, 0) << "the replay billed something";
}

}  // namespace gpurent::testing
