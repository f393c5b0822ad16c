#include "server/server.h"

#include <fcntl.h>
#include <signal.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <random>
#include <thread>

#include "catalog/gpu_catalog.h"
#include "core/ids.h"
#include "demo/demo_world.h"
#include "io/files.h"
#include "sched/sched_config.h"
#include "server/api/app.h"
#include "server/api/market_books.h"
#include "server/api/resources.h"
#include "server/demo/demo_history.h"
#include "server/demo/seed.h"
#include "server/http/http_server.h"
#include "server/http/http_util.h"
#include "server/services/allocation_ledger.h"
#include "server/services/bootstrap.h"
#include "server/services/cost_firewall.h"
#include "server/services/dcgm_scraper.h"
#include "server/services/image_builder.h"
#include "server/services/job_metrics.h"
#include "server/services/job_output_retention.h"
#include "server/services/leader_lease.h"
#include "server/services/scheduler_service.h"
#include "server/services/spot_timeline.h"

namespace gpurent {

void register_all_routes(App& app, Router& srv) {
  register_system_routes(app, srv);
  register_catalog_routes(app, srv);
  register_supplier_routes(app, srv);
  register_node_routes(app, srv);
  register_offer_routes(app, srv);
  register_tenant_routes(app, srv);
  register_project_routes(app, srv);
  register_user_routes(app, srv);
  register_token_routes(app, srv);
  register_job_routes(app, srv);
  register_fault_routes(app, srv);
  register_reservation_routes(app, srv);
  register_usage_routes(app, srv);
  register_contract_routes(app, srv);
  register_invoice_routes(app, srv);
  register_issued_invoice_routes(app, srv);
  register_balance_routes(app, srv);
  register_alert_routes(app, srv);  // alerts, webhooks
  register_measurement_routes(app, srv);
  register_acceptance_run_routes(app, srv);
  register_poc_run_routes(app, srv);
  register_market_routes(app, srv);
  register_advisor_routes(app, srv);
  register_job_metric_routes(app, srv);
  register_secret_routes(app, srv);
  register_artifact_routes(app, srv);
  register_image_routes(app, srv);
  register_volume_routes(app, srv);
  register_instance_routes(app, srv);
  register_dashboard_usage_routes(app, srv);
  register_dashboard_cost_routes(app, srv);
}

static void setup_logging(const std::string& level) {
  auto logger = spdlog::stderr_logger_mt("gpurent");
  // Each message is one JSON object; the pattern only prefixes nothing so lines stay JSON.
  logger->set_pattern("%v");
  logger->set_level(spdlog::level::from_str(level));
  spdlog::set_default_logger(logger);
}

static void log_event(const json& fields) { spdlog::info("{}", fields.dump()); }

static bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

// Plain HTTP carries bearer tokens in clear: only on loopback, unless the operator says otherwise
// (a TLS-terminating proxy in front, a private network).
static Status check_listen_policy(const ServerOptions& opts) {
  if (opts.tls_cert.empty() && !is_loopback(opts.host) && !opts.insecure_http)
    return Error::invalid("--host", "plain HTTP on " + opts.host +
                                        " would send tokens in clear: give --tls-cert and --tls-key, listen on "
                                        "127.0.0.1, or pass --insecure-http (behind a TLS proxy)");
  return ok_status();
}

static HttpServerOptions http_options(const ServerOptions& o) {
  HttpServerOptions h;
  h.host = o.host;
  h.port = o.port;
  h.worker_threads = o.threads > 0 ? o.threads : std::max(4, 2 * static_cast<int>(std::thread::hardware_concurrency()));
  h.io_threads = 1;
  h.limits.max_body_bytes = o.max_body_bytes;
  h.limits.header_timeout_ms = o.header_timeout_s * 1000;
  h.limits.body_timeout_ms = o.body_timeout_s * 1000;
  h.limits.idle_timeout_ms = o.idle_timeout_s * 1000;
  h.limits.max_connections = o.max_connections;
  h.limits.max_connections_per_address = o.max_connections_per_address;
  h.rate_limits = o.rate_limits;
  const int64_t per_token[3] = {o.rate_read, o.rate_write, o.rate_ingest};
  for (size_t i = 0; i < 3; ++i) {
    h.rate.per_token[i] = {per_token[i], 2 * per_token[i]};
    h.rate.per_address[i] = {per_token[i] * o.rate_address_factor, 2 * per_token[i] * o.rate_address_factor};
    // Checked by the routes (routing.cc), which do not know --no-rate-limits: off means unlimited.
    h.rate.per_tenant[i] = o.rate_limits
                               ? RateRule{per_token[i] * o.rate_tenant_factor, 2 * per_token[i] * o.rate_tenant_factor}
                               : RateRule{};
  }
  // Bursts of twice the rate, and at least one full batch (kMaxMetricPoints), so that every batch
  // can pass and pays for each of its points.
  h.rate.metric_points_per_tenant =
      o.rate_limits ? RateRule{o.rate_metric_points,
                               std::max<int64_t>(2 * o.rate_metric_points, static_cast<int64_t>(kMaxMetricPoints))}
                    : RateRule{};
  h.tls_cert_file = o.tls_cert;
  h.tls_key_file = o.tls_key;
  h.cors_origins = o.cors_origins;
  return h;
}

// Prints an error (and the fields it names) to stderr; returns `code`, the process's exit status.
static int fail(const std::string& what, const Error& e, int code) {
  std::cerr << "error: " << what << e.message << "\n";
  for (const auto& f : e.fields) std::cerr << "  " << f.field << ": " << f.reason << "\n";
  return code;
}

// --demo-clock pins the clock (and makes ids reproducible); --dcgm-target values must parse.
static Status apply_start_flags(const ServerOptions& opts, FastForwardClock& clock, TimeMs& pinned) {
  if (!opts.demo_clock.empty()) {
    auto t = parse_rfc3339(opts.demo_clock, "--demo-clock");
    if (!t) return t.error();
    pinned = *t;
    clock.set(pinned);
    use_reproducible_ids(static_cast<uint64_t>(pinned));  // a rerun creates the same ids
  }
  for (const auto& t : opts.dcgm_targets)
    if (auto parsed = parse_dcgm_target(t); !parsed) return Error::make(Code::kInvalid, "--" + parsed.error().message);
  return ok_status();
}

static Result<SchedConfig> scheduler_config(const ServerOptions& opts) {
  SchedConfig c;
  c.score_policy = opts.sched_policy;
  c.spot_notice_ms = opts.spot_notice_s * 1000;
  if (opts.sched_config_path.empty()) return c;
  return load_sched_config_file(opts.sched_config_path, c);
}

// Seeds the demo world into an empty database (what was created, for the "listening" line). The
// demo's past week is planned (`week`) only for a database seeded now, and only with the
// simulated executor and the scheduler on (a Slurm cluster has its own history); the world is
// then created at the week's start.
static Result<json> seed_demo(App& app, FastForwardClock& clock, TimeMs pinned, const std::string& admin_user_id,
                              std::optional<DemoWeek>& week) {
  const ServerOptions& opts = app.opts;
  if (opts.demo_days > 0 && opts.scheduler && opts.executor == "sim") {
    auto suppliers = app.store.count("suppliers", {});
    if (suppliers && *suppliers == 0) {
      week = demo_week(pinned != 0 ? pinned : clock.now(), opts.demo_days);
      clock.set(week->start);
    }
  }
  return seed_demo_if_empty(app, admin_user_id, opts.data_dir, week ? week->end : pinned != 0 ? pinned : clock.now());
}

// Replays the demo's past week into the freshly seeded world; what it did, for the "listening" line.
static Result<json> replay_demo_week(App& app, FastForwardClock& clock, const DemoWeek& plan, TimeMs pinned, int64_t days,
                                     SchedulerService& scheduler, CostFirewall& firewall, DemoMeter& meter,
                                     const std::string& admin_user_id) {
  std::cerr << "gpurent: replaying the demo's past " << days << " days (jobs, failures, metering)...\n";
  auto ff = fast_forward_demo_week(
      app, clock, plan, scheduler, firewall, meter, admin_user_id, pinned != 0 ? pinned : SystemClock().now(),
      [](int done, int total) { std::cerr << "gpurent: demo replay: " << done << " of " << total << " UTC days\n"; });
  if (pinned != 0) clock.set(pinned);  // the replay released it
  if (!ff) return ff.error();
  return json{{"from", format_rfc3339(plan.start)},
              {"jobs_submitted", ff->jobs_submitted},
              {"steps", ff->steps},
              {"outages", ff->outages},
              {"firewall_passes", ff->firewall_passes},
              {"seconds", static_cast<int64_t>(ff->seconds * 1000) / 1000.0}};
}

// The "listening" line on stdout (tests and scripts read it) and, for the demo, a human banner.
static void announce(const ServerOptions& opts, const std::string& url, const AdminCredentials& admin, int64_t schema_version,
                     const json& demo_info) {
  json ready = {{"event", "listening"},
                {"url", url},
                {"admin_token_file", admin.token_file},
                {"db", describe_db(opts.db_path)},
                {"schema_version", schema_version}};
  if (!demo_info.is_null()) ready["demo"] = demo_info;
  std::cout << ready.dump() << std::endl;
  log_event(ready);
  if (!opts.demo) return;
  std::cout << "\ngpurent is listening on " << url << "  (API; Ctrl-C stops)\n";
  // The secret is shown once, when it is minted; afterwards it is only in its 0600 file.
  if (admin.minted)
    std::cout << "  admin token:  " << admin.token << "\n"
              << "                (kept in " << admin.token_file << ", shown only now)\n";
  else
    std::cout << "  admin token:  in " << admin.token_file << "\n";
  std::cout << "  demo users' tokens: " << opts.file_prefix() << ".demo-tokens.json\n"
            << "  try:  ./build/gpurent -s " << url << " --token-file " << admin.token_file << " nodes list\n"
            << std::endl;
}

std::string ServerOptions::file_prefix() const {
  if (!state_dir.empty()) return (std::filesystem::path(state_dir) / "gpurent").string();
  return is_postgres_url(db_path) ? "var/gpurent" : db_path;
}

// The database with migrations applied (an SQLite file's folder created), and the folder of the
// server's own files.
static Result<std::unique_ptr<Store>> open_database(const ServerOptions& opts) {
  // A libpq key=value string would otherwise be taken for an SQLite file's name.
  if (!is_postgres_url(opts.db_path) &&
      (opts.db_path.find("dbname=") != std::string::npos || opts.db_path.find("host=") != std::string::npos))
    return Error::invalid("--db", "names a PostgreSQL database as a key=value string: give it as a postgresql:// URL "
                                  "(postgresql:///DBNAME?host=HOST&port=PORT&user=USER)");
  for (const std::string& file : {is_postgres_url(opts.db_path) ? std::string() : opts.db_path, opts.file_prefix()}) {
    std::filesystem::path p(file);
    if (!p.has_parent_path()) continue;
    std::error_code ec;
    std::filesystem::create_directories(p.parent_path(), ec);
  }
  auto store = is_postgres_url(opts.db_path)
                   ? open_postgres_store(PostgresOptions{.url = opts.db_path, .readers = 8})
                   : open_sqlite_store(SqliteOptions{opts.db_path, opts.sync_full, 5000});
  if (!store)
    return Error::make(store.error().code,
                       "cannot open database " + describe_db(opts.db_path) + ": " + store.error().message);
  return store;
}

// This process's name in the leader lease: host, pid and a random part (a restarted server is
// another holder).
static std::string lease_holder() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "unknown");
  std::random_device rd;
  char tail[16];
  std::snprintf(tail, sizeof tail, "%08x", rd());
  return std::string(host) + ":" + std::to_string(::getpid()) + ":" + tail;
}

// Runs the services until SIGINT/SIGTERM (blocked in `set` by the caller) stops the HTTP front,
// then stops them in order; the exit status. The work one server does for all (the scheduler, the
// demo meter, usage scrapes and roll-up, the cost firewall, image builds, the retention of jobs'
// output files) starts at once without a lease (SQLite) or when this server leads at start; else
// when it takes the lease over. A leader that finds the lease taken exits at once with status 3
// (its writes are refused from then on anyway): a supervisor restarts it, and it comes back as a
// follower.
static int serve(const ServerOptions& opts, App& app, HttpServer& http, SchedulerService& scheduler,
                 CostFirewall& firewall, DemoMeter* demo_meter, LeaderLease* lease, const sigset_t& set) {
  for (const auto& t : opts.dcgm_targets)  // a follower would meet a bad target only when elected
    if (auto r = parse_dcgm_target(t); !r) return fail("", r.error(), 2);
  UsageBackground usage(app);  // DCGM scrapes and the usage rollup
  ImageBuilder builder(app, opts.debian_mirror);
  JobOutputRetention output_retention(app);  // --job-log-retention-days
  std::mutex work_mu;
  bool work_started = false;
  auto start_work = [&]() -> Status {
    std::lock_guard lock(work_mu);
    if (work_started) return ok_status();
    work_started = true;
    if (opts.scheduler) scheduler.start();
    if (demo_meter) demo_meter->start();
    if (auto s = usage.start(opts.dcgm_targets); !s) return s;
    if (opts.firewall_interval_s > 0) firewall.start();
    if (opts.image_builds) builder.start();
    output_retention.start();
    return ok_status();
  };
  if (!lease || lease->view().leader) {
    if (auto s = start_work(); !s) {
      scheduler.stop();
      return fail("", s.error(), 2);
    }
  }
  // A follower delivers the alerts its own quota changes raise (their holds are set in the write);
  // the passes are the leader's, and start here too if it takes the lead (start_work; a leader's
  // firewall already runs them, and this start leaves them on).
  if (lease && opts.firewall_interval_s > 0) firewall.start(/*passes=*/false);
  if (lease)
    lease->start(
        [&] {
          if (auto s = start_work(); !s) {
            spdlog::critical("{}", json({{"event", "leader_start_failed"}, {"error", s.error().message}}).dump());
            std::_Exit(2);
          }
        },
        [](const std::string& why) {
          spdlog::critical("{}", json({{"event", "leader_deposed"}, {"why", why}, {"exit", 3}}).dump());
          spdlog::default_logger()->flush();
          std::_Exit(3);
        });
  // Signals go to one waiting thread, started only now that nothing returns before http.run():
  // the first SIGINT/SIGTERM stops the server cleanly (the control loop drains, the WAL
  // checkpoints); a second one, while that stop hangs, ends the process at once.
  std::thread signals([&http, set] {
    int sig = 0;
    sigwait(&set, &sig);
    http.stop();
    sigwait(&set, &sig);
    std::_Exit(128 + sig);
  });
  signals.detach();
  http.run();
  if (lease) lease->stop();  // no election after this
  if (demo_meter) demo_meter->stop();
  builder.stop();
  output_retention.stop();
  firewall.stop();
  usage.stop();
  scheduler.stop();
  app.loop.stop();
  log_event({{"event", "stopped"}});
  return 0;
}

// One server per SQLite database: each keeps its scheduler and books in memory, so a second one
// (a restart overlapping the old process, a second port by mistake) would place the same GPUs and
// submit the same jobs. An exclusive lock on <db>.lock, held for the process's life (released by
// the kernel however it ends; close-on-exec, so no child keeps it), refuses it. PostgreSQL
// deployments share their database through the leader lease instead.
static Status lock_sqlite_database(const std::string& db) {
  if (db.empty() || db == ":memory:") return ok_status();
  const std::string path = db + ".lock";
  std::filesystem::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Error::make(Code::kUnavailable, "cannot open " + path + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK)
      return Error::make(Code::kConflict, "another gpurent server is serving database " + db + " (" + path +
                                              " is locked): one server per SQLite database");
    return Error::make(Code::kUnavailable, "cannot lock " + path + ": " + std::strerror(err));
  }
  return ok_status();  // the descriptor stays open: the lock lasts as long as the process
}

int run_server(const ServerOptions& opts) {
  // Block SIGINT/SIGTERM before any thread starts, so every thread inherits the mask and only the
  // waiting thread below receives them (a clean stop: the control loop drains, the WAL checkpoints).
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  setup_logging(opts.log_level);
  FastForwardClock clock;  // the system clock, except while the demo replays its past week
  TimeMs pinned = 0;       // --demo-clock: the clock stands still here
  if (auto s = apply_start_flags(opts, clock, pinned); !s) return fail("", s.error(), 2);

  if (std::error_code ec; !opts.data_dir.empty() && !std::filesystem::is_directory(opts.data_dir, ec))
    return fail("", Error::invalid("--data-dir", opts.data_dir + " is not a folder (an empty folder gives the built-in price lists)"), 2);
  // The flags' values first, before the store is opened (or created, or seeded) or a token written.
  if (auto s = check_executor_options(opts); !s) return fail("", s.error(), 2);
  if (auto s = check_listen_options(http_options(opts)); !s) return fail("", s.error(), 2);
  if (!is_postgres_url(opts.db_path))
    if (auto s = lock_sqlite_database(opts.db_path); !s) return fail("", s.error(), 1);
  auto store = open_database(opts);
  if (!store) return fail("", store.error(), store.error().code == Code::kInvalid ? 2 : 1);
  const std::string catalog_path = opts.catalog_path.empty() ? default_catalog_path() : opts.catalog_path;
  auto catalog = load_catalog_file(catalog_path);
  if (!catalog) return fail("cannot load GPU catalog " + catalog_path + ": ", catalog.error(), 1);

  auto sched_config = scheduler_config(opts);
  if (!sched_config) return fail("", sched_config.error(), 2);

  ControlLoop loop(**store);
  Metrics metrics;
  std::map<std::string, KindSpec> kinds;
  MarketBooks market_books;
  App app{{**store, *catalog, loop, clock, metrics, opts}, kinds};
  app.market_books = &market_books;

  if (auto s = check_listen_policy(opts); !s) {
    std::cerr << "error: " << s.error().message << "\n";
    return 2;
  }
  Router srv;
  HttpServer http(srv, http_options(opts));
  app.http_stats = &http.stats();
  app.rate_limiter = &http.rate_limiter();
  register_all_routes(app, srv);
  if (!opts.static_dir.empty() && !srv.set_static_dir(opts.static_dir)) {
    std::cerr << "error: static folder " << opts.static_dir << " does not exist\n";
    return 1;
  }

  // Several servers may share a PostgreSQL database: one leads (leader_lease.h). On SQLite the one
  // server does everything.
  std::unique_ptr<Store> lease_store;  // the lease is renewed on a connection of its own
  std::unique_ptr<LeaderLease> lease;
  if (is_postgres_url(opts.db_path)) {
    auto ls = open_postgres_store(PostgresOptions{.url = opts.db_path, .readers = 1});
    if (!ls) return fail("cannot open database " + describe_db(opts.db_path) + ": ", ls.error(), 1);
    lease_store = std::move(ls).value();
    lease = std::make_unique<LeaderLease>(loop, *lease_store, clock, lease_holder(), opts.leader_lease_ms);
    if (auto led = lease->try_acquire(); !led) return fail("cannot read the leader lease: ", led.error(), 1);
  }
  const bool leader = !lease || lease->view().leader;
  app.leader = lease.get();

  std::string token_file = opts.admin_token_file.empty() ? opts.file_prefix() + ".admin-token" : opts.admin_token_file;
  auto admin = ensure_admin(**store, loop, clock, token_file);
  if (!admin) {
    std::cerr << "error: bootstrap failed: " << admin.error().message << "\n";
    return 1;
  }
  // Runs stored before each run noted its tenant's nodes: noted once (allocation_ledger.h). Until
  // it succeeds (a failure is logged, another server may be doing it) the old walk answers.
  if (auto noted = loop.run([&](StoreTx& tx) { return backfill_node_tenancies(tx, clock.now()); }); !noted)
    spdlog::warn("{}", json({{"event", "node_tenancies_backfill_failed"}, {"error", noted.error().message}}).dump());
  // Spot prices stored before each offer's timeline was kept: noted once (spot_timeline.h).
  if (auto noted = loop.run([&](StoreTx& tx) { return backfill_spot_timelines(tx, clock.now()); }); !noted)
    spdlog::warn("{}", json({{"event", "spot_timelines_backfill_failed"}, {"error", noted.error().message}}).dump());

  json demo_info = nullptr;
  std::optional<DemoWeek> demo_week_plan;
  if (opts.demo && !leader) {
    demo_info = {{"seeded", false}, {"reason", "this server follows the leader, which seeds the demo"}};
  } else if (opts.demo) {
    auto seeded = seed_demo(app, clock, pinned, admin->user_id, demo_week_plan);
    if (!seeded) return fail("demo seeding failed: ", seeded.error(), 1);
    demo_info = std::move(*seeded);
  }

  auto executor = make_executor(opts, *catalog);
  if (!executor) {
    std::cerr << "error: " << executor.error().message << "\n";
    return 2;
  }
  SchedulerService scheduler(app, *sched_config, std::move(*executor));
  CostFirewall firewall(app, opts.firewall_interval_s * 1000);
  // Market orders whose delivery window is over expire on the first pass after the hour it ended
  // (windows end on whole hours, so a pass reads the open orders once an hour at most).
  firewall.ride("market_expiry_failed", [&app, due = TimeMs{0}](TimeMs now) mutable -> Status {
    if (now < due) return ok_status();
    int failed = 0;
    auto expired = expire_market_orders(app, now, &failed);
    if (!expired) return expired.error();  // nothing read: tried again on the next pass
    // A book that failed (a busy database, say) is tried again in 5 minutes; else next hour.
    due = failed > 0 ? now + 5 * kMsPerMinute : (now / kMsPerHour + 1) * kMsPerHour;
    return ok_status();
  });
  std::unique_ptr<DemoMeter> demo_meter;
  if (opts.demo && opts.executor == "sim")
    demo_meter = std::make_unique<DemoMeter>(app, demo_week_plan ? *demo_week_plan : DemoWeek{},
                                             demo_week_plan ? demo_week_plan->start : clock.now());
  if (demo_week_plan) {
    auto week = replay_demo_week(app, clock, *demo_week_plan, pinned, opts.demo_days, scheduler, firewall, *demo_meter,
                                 admin->user_id);
    if (!week) return fail("demo week: ", week.error(), 1);
    demo_info["week"] = std::move(*week);
  }
  if (opts.demo && demo_info.is_object() && demo_info.value("seeded", false)) {
    auto invoices = seed_demo_invoices(app, admin->user_id);
    if (!invoices) return fail("demo invoices: ", invoices.error(), 1);
    demo_info["invoices"] = std::move(*invoices);
  }

  auto bound = http.bind();
  if (!bound) {
    std::cerr << "error: " << bound.error().message << "\n";
    for (const auto& f : bound.error().fields) std::cerr << "  " << f.field << ": " << f.reason << "\n";
    return bound.error().code == Code::kInvalid ? 2 : 1;
  }
  const int port = *bound;

  const std::string url = std::string(http.tls() ? "https" : "http") + "://" + opts.host + ":" + std::to_string(port);
  announce(opts, url, *admin, (*store)->schema_version(), demo_info);

  return serve(opts, app, http, scheduler, firewall, demo_meter.get(), lease.get(), set);
}

}  // namespace gpurent
