// ServerProcess: runs the real `gpurent serve` binary (GPURENT_BIN) as a child process on a free
// port with a fresh database in its own temporary folder, so the API integration tests exercise
// exactly what users run: flag parsing, bootstrap, HTTP, the control loop and SQLite on disk.
// Each test owns its ServerProcess; the folder (database, admin token, server log) is removed by
// the destructor. Also small helpers to send requests and to build valid resource documents.
// Not thread-safe as an object (start/stop/restart from the test's thread); client() hands out
// independent httplib clients, one per thread.
#pragma once

#include <sys/types.h>

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <chrono>
#include <functional>
#include <mutex>
#include <thread>
#include <optional>
#include <string>
#include <vector>

namespace gpurent::testing {

using json = nlohmann::json;

// One HTTP exchange. status is -1 when no response came back (error says why).
struct Resp {
  int status = -1;
  json body;                 // parsed when the content type is JSON (also problem+json), else null
  std::string content_type;  // without parameters ("application/problem+json")
  std::string text;          // the raw body
  httplib::Headers headers;
  std::string error;         // transport error, when status is -1

  // "<status> <content-type> <body>" for assertion messages.
  std::string describe() const;
  // The `field` values of a problem's errors[] (empty when there are none).
  std::vector<std::string> error_fields() const;
  // The reason given for `field` in errors[]; empty when the field is not named.
  std::string reason_for(const std::string& field) const;
};

class ServerProcess {
 public:
  // Starts at once; extra_args are appended to the serve command line (e.g. {"--demo"}). With
  // its own "--db" (a PostgreSQL URL) the folder is the server's --state-dir instead.
  explicit ServerProcess(std::vector<std::string> extra_args = {});
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // Starts the binary (GPURENT_BIN, or $GPURENT_TEST_BIN when set) and waits (10 s at most) for
  // its {"event":"listening"} line; throws std::runtime_error with the server's log when it does
  // not come.
  void start();
  void stop();     // SIGTERM, then waitpid; the exit status is kept in last_exit_status()
  void kill9();    // SIGKILL, then waitpid
  void restart();  // stop() (if running) and start() on the same database and token file
  void send_signal(int sig);  // e.g. SIGSTOP / SIGCONT
  // Waits for the server to exit by itself; false when it still runs after `timeout`.
  bool wait_exited(std::chrono::milliseconds timeout);
  // The extra serve flags for the next start() (e.g. to restart without the scheduler).
  void set_extra_args(std::vector<std::string> extra_args) { extra_args_ = std::move(extra_args); }
  bool running() const { return pid_ > 0; }
  int last_exit_status() const { return exit_status_; }

  std::string url() const { return url_; }
  std::string admin_token() const { return admin_token_; }
  const json& listening_event() const { return listening_; }  // the server's first stdout line
  std::string dir() const { return dir_; }
  std::string db_path() const { return dir_ + "/gpurent.db"; }
  std::string log() const;  // the server's stderr so far

  httplib::Client client() const;

  // Sends a request with "Authorization: Bearer <token>" (none when token is empty) and, when
  // body is given, its JSON text with Content-Type application/json.
  Resp req(const std::string& method, const std::string& path, const std::string& token,
           const std::optional<json>& body = std::nullopt) const;
  // Sends raw bytes with the given content type (malformed bodies, YAML, oversize bodies).
  Resp raw(const std::string& method, const std::string& path, const std::string& token, const std::string& body,
           const std::string& content_type) const;
  // Same as req() with the admin token.
  Resp admin(const std::string& method, const std::string& path, const std::optional<json>& body = std::nullopt) const;

 private:
  std::vector<std::string> extra_args_;
  std::string dir_;
  pid_t pid_ = -1;
  int stdout_fd_ = -1;  // kept open while the server runs, so its later stdout writes never hit EPIPE
  int exit_status_ = 0;
  std::string url_;
  std::string admin_token_;
  json listening_;
};

// Converts a Resp to a Resp with the same body; throws std::runtime_error when the status is not
// 2xx. For setup steps in tests, where a failure should stop the test with the server's answer.
Resp expect_2xx(Resp r, const std::string& what);

// Valid documents, based on examples/*.yaml where one exists (so the examples are tested too),
// with the names replaced. References are names.
json supplier_doc(const std::string& name);                    // one site: "site-a"
json node_doc(const std::string& supplier, const std::string& name);  // 8 x h100-sxm5-80gb at site-a
json offer_doc(const std::string& supplier, const std::string& name);
json tenant_doc(const std::string& name, const std::string& currency = "USD");                       // USD
json project_doc(const std::string& tenant, const std::string& name);
json user_doc(const std::string& name, const std::string& role, const std::string& tenant = "",
              const std::string& supplier = "");
json job_doc(const std::string& project, const std::string& name);  // 1 worker x 1 h100, no price cap
// Tenants acme and beta with one project each: vision (acme) and nlp (beta); acme's id.
std::string acme_and_beta(const ServerProcess& s);  // CNY tenants, as offer_doc
// Contract acme-dc: tenant acme with supplier dc on offer h100 (offer_doc's), in CNY, from 2020,
// with these commitments (none when empty).
json acme_dc_contract(const json& commitments = json::array());

// Polls GET path with the admin token until pred holds (`seconds` of wall time at most: generous,
// since a loaded CI machine runs the server's loops late, and free when the test passes); returns
// the last body (and records a test failure when it times out).
json wait_for(const ServerProcess& s, const std::string& path, const std::function<bool(const json&)>& pred,
              int seconds = 30);

// Runs the real gpurent-accept in `dir` for node `node` with a simulated-GPU file naming two of the
// node's cards (gpus[5] and gpus[6] of `node_body`, by UUID), then storage and network stages as
// `extra` asks (--stages …): its report, parsed.
json run_accept(const std::string& dir, const std::string& node, const json& node_body, const std::string& extra = "",
                const json& nccl_hosts = json());

// Reads an examples/*.yaml file as JSON.
json example(const std::string& file);

// Creates a user with `role` (in tenant or supplier as the role needs) and a token for it; returns
// the token secret.
std::string make_user_token(const ServerProcess& s, const std::string& user, const std::string& role,
                            const std::string& tenant = "", const std::string& supplier = "");

// The ids of every object listed at `path` (following next_after), as seen by `token`.
std::vector<std::string> list_ids(const ServerProcess& s, const std::string& path, const std::string& token);

// A money amount as the API writes it ("-12.345678", "3.20") in micro-units, exactly.
int64_t micros(const std::string& amount);
int64_t micros(const json& j);

// Runs one SQL statement changing `rows` rows of the server's database from outside (as an
// operator's hand edit would), to damage a stored record and mend it again.
void edit_database(const ServerProcess& s, const std::string& sql, int rows = 1);

// A local Slurm cluster (scripts/slurm-local) for the slurm_ tests: why one cannot run here (""
// when it can). With SLURM_LOCAL_IMAGE set (ctest's slurm24_ tests) it runs that image's Slurm
// version in a container, so the image must exist (scripts/slurm-image builds it).
std::string local_slurm_skip_reason();
// After `scripts/slurm-local start DIR`: a cluster in a container is reached through its tool
// wrappers in DIR/bin, put first on PATH for this process and every server it starts.
void use_local_slurm_tools(const std::string& dir);

// A tiny HTTP server in the test process that records the bodies POSTed to it.
class HookSink {
 public:
  HookSink() {
    srv_.Post(".*", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> g(mu_);
      bodies_.push_back(req.body);
      headers_.push_back(req.get_header_value("X-Gpurent-Signature"));
      res.set_content("{}", "application/json");
    });
    port_ = srv_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { srv_.listen_after_bind(); });
  }
  ~HookSink() {
    srv_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hooks/gpurent"; }
  std::vector<std::string> bodies() {
    std::lock_guard<std::mutex> g(mu_);
    return bodies_;
  }
  std::vector<std::string> signatures() {
    std::lock_guard<std::mutex> g(mu_);
    return headers_;
  }

 private:
  httplib::Server srv_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> bodies_, headers_;
};

// On the SQLite store at `db` (a stopped server's), for each tenant and each instant (ms since the
// epoch): the invoices the cost firewall's pass and the balance ask MonthInvoiceSource for (the
// month to date with lines per day and without, the previous month with and without, the month an
// hour ahead, and a day, which it builds apart unless the day is a month's first) equal
// build_invoice's to the line; the month and the previous one are read once each, the balance
// reads none again (on a store with no month before the previous one left unclosed), and it
// equals the balance computed with a source of its own. The dashboards' day invoices
// (DayInvoiceSource) of the month's first day and of the instant's day equal build_invoice's too,
// and build_invoice, which reads only the runs that can count in the period, equals
// build_invoice_from_every_run.
void expect_month_reads_equal_invoices(const std::string& db, const std::vector<int64_t>& instants);

}  // namespace gpurent::testing
