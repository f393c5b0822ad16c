// `gpurent serve`: flags onto ServerOptions, then the server runs in this process (CliIo::serve).
#include <memory>

#include "cli/commands.h"
#include "io/files.h"
#include "sched/score_policy.h"
#include "server/server.h"

namespace gpurent {

namespace {

// "30000-30999": the first and last port, 1024..65535, the first not above the last.
Result<std::pair<int64_t, int64_t>> parse_port_range(const std::string& v) {
  const auto bad = [] { return Error::invalid("--instance-ports", Message("cli.serve.port_range")); };
  const size_t dash = v.find('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 >= v.size() || v.size() > 11) return bad();
  if (v.find_first_not_of("0123456789-") != std::string::npos || v.find('-', dash + 1) != std::string::npos) return bad();
  const int64_t lo = std::stoll(v.substr(0, dash)), hi = std::stoll(v.substr(dash + 1));
  if (lo < 1024 || hi > 65535 || lo > hi) return bad();
  return std::make_pair(lo, hi);
}

}  // namespace

void add_serve_command(CLI::App& app, CliContext& ctx) {
  struct Opts {
    ServerOptions server;
    bool no_sync_full = false;
    bool no_scheduler = false;
    bool no_rate_limits = false;
    std::string payment_secret_file;
    std::string instance_ports = "30000-30999";
  };
  auto o = std::make_shared<Opts>();
  ServerOptions& s = o->server;
  auto* cmd = app.add_subcommand("serve", "run the API server (and the dashboard) in this process");
  cmd->add_option("--host", s.host, "address to listen on")->capture_default_str();
  cmd->add_option("--port", s.port, "port to listen on; 0 picks a free one (printed at start)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("--db", s.db_path,
                  "SQLite database file (created if missing), or a PostgreSQL URL postgresql://user@host/dbname "
                  "(the database must exist; its schema is created)")
      ->capture_default_str();
  cmd->add_option("--state-dir", s.state_dir,
                  "folder for the server's own files (admin token, demo users' tokens, local runs, artifacts), named "
                  "gpurent.*; default: beside an SQLite --db file, var/ for a PostgreSQL one");
  cmd->add_option("--catalog", s.catalog_path, "GPU catalog file (default: the one shipped with gpurent)");
  cmd->add_option("--admin-token-file", s.admin_token_file,
                  "where the operator admin token is written on first start, mode 600 (default: gpurent.admin-token "
                  "in --state-dir when given, else <db>.admin-token for SQLite, var/gpurent.admin-token for PostgreSQL)");
  cmd->add_option("--data-dir", s.data_dir, "folder with the demo's price lists (default: found automatically)");
  cmd->add_option("--static-dir", s.static_dir, "serve the dashboard's built files from this folder");
  auto* demo =
      cmd->add_flag("--demo", s.demo, "seed the demo world (suppliers, nodes, offers, tenants) into an empty database");
  cmd->add_option("--demo-days", s.demo_days,
                  "with --demo on an empty database: fast-forward this many past days of jobs, failures and "
                  "metering before listening (0: none)")
      ->check(CLI::Range(0, 31))
      ->capture_default_str()
      ->needs(demo);
  cmd->add_option("--demo-clock", s.demo_clock,
                  "stop the server's clock at this RFC 3339 instant (the demo replay ends there) and make ids reproducible: "
                  "repeatable runs, not production");
  cmd->add_option("--max-body-bytes", s.max_body_bytes, "larger request bodies are refused with 413")
      ->check(CLI::Range(size_t{1024}, size_t{1} << 30))
      ->capture_default_str();
  cmd->add_option("--threads", s.threads, "worker threads that run the API's handlers (0: twice the cores, at least 4)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  cmd->add_option("--tls-cert", s.tls_cert, "PEM certificate chain: serve HTTPS (with --tls-key)");
  cmd->add_option("--tls-key", s.tls_key, "PEM private key of --tls-cert");
  cmd->add_flag("--insecure-http", s.insecure_http,
                "allow plain HTTP on an address other than loopback (behind a TLS-terminating proxy)");
  cmd->add_option("--cors-origin", s.cors_origins,
                  "an origin allowed to call the API from a browser, e.g. https://console.example.com "
                  "(repeatable; * = any; default: same origin only)");
  cmd->add_option("--header-timeout-s", s.header_timeout_s, "a request's headers must arrive within this")
      ->check(CLI::Range(int64_t{1}, int64_t{600}))
      ->capture_default_str();
  cmd->add_option("--body-timeout-s", s.body_timeout_s, "a request's body must arrive within this")
      ->check(CLI::Range(int64_t{1}, kSecondsPerHour))
      ->capture_default_str();
  cmd->add_option("--idle-timeout-s", s.idle_timeout_s, "close kept-alive connections idle this long")
      ->check(CLI::Range(int64_t{1}, kSecondsPerHour))
      ->capture_default_str();
  cmd->add_option("--max-connections", s.max_connections, "open connections at most; more are answered 503")
      ->check(CLI::Range(size_t{16}, size_t{1000000}))
      ->capture_default_str();
  cmd->add_option("--max-connections-per-address", s.max_connections_per_address,
                  "open connections from one source address at most")
      ->check(CLI::Range(size_t{1}, size_t{1000000}))
      ->capture_default_str();
  cmd->add_flag("--no-rate-limits", o->no_rate_limits, "do not rate-limit requests (a benchmark, a trusted network)");
  cmd->add_option("--rate-read", s.rate_read, "reads a second per token (burst: twice as many)")
      ->check(CLI::Range(int64_t{1}, int64_t{10000000}))
      ->capture_default_str();
  cmd->add_option("--rate-write", s.rate_write, "writes a second per token (burst: twice as many)")
      ->check(CLI::Range(int64_t{1}, int64_t{10000000}))
      ->capture_default_str();
  cmd->add_option("--rate-ingest", s.rate_ingest, "usage and metric batches a second per token (burst: twice)")
      ->check(CLI::Range(int64_t{1}, int64_t{10000000}))
      ->capture_default_str();
  cmd->add_option("--rate-address-factor", s.rate_address_factor,
                  "a source address may send this many times a token's rates")
      ->check(CLI::Range(int64_t{1}, int64_t{10000}))
      ->capture_default_str();
  cmd->add_option("--rate-tenant-factor", s.rate_tenant_factor,
                  "a tenant's users and tokens together may send this many times a token's rates")
      ->check(CLI::Range(int64_t{1}, int64_t{10000}))
      ->capture_default_str();
  cmd->add_option("--rate-metric-points", s.rate_metric_points,
                  "job metric points a second one tenant's jobs may report, all its users together (burst: twice)")
      ->check(CLI::Range(int64_t{1}, int64_t{100'000'000}))
      ->capture_default_str();
  cmd->add_option("--tenant-max-jobs", s.tenant_max_jobs,
                  "unfinished jobs (pending, admitted or running) one tenant may have at once")
      ->check(CLI::Range(int64_t{1}, int64_t{10'000'000}))
      ->capture_default_str();
  cmd->add_option("--tenant-max-projects", s.tenant_max_projects, "projects one tenant may have")
      ->check(CLI::Range(int64_t{1}, int64_t{1'000'000}))
      ->capture_default_str();
  cmd->add_option("--tenant-max-users", s.tenant_max_users, "users one tenant may have")
      ->check(CLI::Range(int64_t{1}, int64_t{1'000'000}))
      ->capture_default_str();
  cmd->add_option("--tenant-max-secrets", s.tenant_max_secrets,
                  "secrets one tenant's projects may hold together (each up to 64 KiB)")
      ->check(CLI::Range(int64_t{1}, int64_t{1'000'000}))
      ->capture_default_str();
  cmd->add_option("--tenant-max-volumes", s.tenant_max_volumes, "volumes one tenant may have")
      ->check(CLI::Range(int64_t{1}, int64_t{1'000'000}))
      ->capture_default_str();
  cmd->add_flag("--no-sync-full", o->no_sync_full,
                "SQLite: do not fsync every commit (faster; a power loss may lose the last commits); "
                "PostgreSQL commits are always synchronous");
  cmd->add_flag("--no-scheduler", o->no_scheduler, "do not run the scheduler (jobs stay pending)");
  cmd->add_option("--leader-lease-ms", s.leader_lease_ms,
                  "PostgreSQL: several servers may share the database and one leads (scheduler, firewall, usage "
                  "roll-up); its lease lasts this long unrenewed, so a follower takes over about this long after the "
                  "leader dies (docs/deployment.md)")
      ->check(CLI::Range(int64_t{500}, int64_t{600000}))
      ->capture_default_str();
  cmd->add_option("--sched-interval-ms", s.sched_interval_ms, "milliseconds between scheduling passes")
      ->check(CLI::Range(int64_t{10}, int64_t{600000}))
      ->capture_default_str();
  cmd->add_option("--sched-policy", s.sched_policy, "placement scoring policy")
      ->check(CLI::IsMember(score_policy_names()))
      ->capture_default_str();
  cmd->add_option("--spot-notice-seconds", s.spot_notice_s, "how long a reclaimed spot allocation keeps running")
      ->check(CLI::Range(int64_t{0}, kSecondsPerDay))
      ->capture_default_str();
  cmd->add_option("--sched-config", s.sched_config_path,
                  "YAML file of scheduler policy knobs (docs/scheduler.md); overrides the two flags above");
  cmd->add_option("--cold-start-ms", s.cold_start_ms, "simulated executor: admitted jobs start running after this")
      ->check(CLI::Range(int64_t{0}, kMsPerHour))
      ->capture_default_str();
  cmd->add_option("--usage-retention-hours", s.usage_retention_hours,
                  "keep raw usage samples this long, then roll them up into per-minute rows (0: every finished minute)")
      ->check(CLI::Range(int64_t{0}, int64_t{24 * 366 * 10}))
      ->capture_default_str();
  cmd->add_option("--usage-rollup-interval-s", s.usage_rollup_interval_s, "seconds between usage rollup passes")
      ->check(CLI::Range(int64_t{1}, kSecondsPerDay))
      ->capture_default_str();
  cmd->add_option("--dcgm-target", s.dcgm_targets,
                  "scrape an NVIDIA dcgm-exporter into usage: URL@NODE, e.g. http://10.0.0.7:9400/metrics@node-7 "
                  "(repeatable; NODE is a node id or name; only NODE's GPUs are metered: the exporter's gpu label "
                  "is the GPU index and its UUID must be that card's; MIG instances count as their fractions)");
  cmd->add_option("--dcgm-interval-s", s.dcgm_interval_s, "seconds between DCGM scrapes")
      ->check(CLI::Range(int64_t{1}, kSecondsPerHour))
      ->capture_default_str();
  cmd->add_option("--firewall-interval-s", s.firewall_interval_s,
                  "seconds between cost-firewall evaluations (alerts, webhooks, budget holds); 0 = off")
      ->check(CLI::Range(int64_t{0}, kSecondsPerDay))
      ->capture_default_str();
  cmd->add_option("--month-close-delay-h", s.month_close_delay_h,
                  "hours after a month ends before the cost firewall's pass issues its invoices (0-240)")
      ->check(CLI::Range(int64_t{0}, int64_t{240}))
      ->capture_default_str();
  cmd->add_option("--executor", s.executor,
                  "what runs admitted jobs: sim (simulated), slurm (docs/slurm.md) or local (containers on this "
                  "machine, docs/containers.md)")
      ->check(CLI::IsMember({"sim", "slurm", "local"}))
      ->capture_default_str();
  // A mode's flags, given with another mode: said, not silently ignored (checked in the callback).
  std::vector<CLI::Option*> slurm_only, local_only;
  auto mode_flag = [cmd](std::vector<CLI::Option*>& mode, const char* name, auto& value, const char* help) {
    mode.push_back(cmd->add_option(name, value, help));
    return mode.back();
  };
  mode_flag(slurm_only, "--slurm-conf", s.slurm_conf,
            "slurm.conf of the cluster (exported as SLURM_CONF to the Slurm tools)");
  mode_flag(slurm_only, "--slurm-partition", s.slurm_partition,
            "partition jobs are submitted to (default: the cluster's)");
  mode_flag(slurm_only, "--slurm-gres-type", s.slurm_gres_type, "GPU gres type, e.g. h100 for --gres=gpu:h100:N");
  mode_flag(slurm_only, "--slurm-supplier", s.slurm_supplier, "supplier (id or name) whose nodes the Slurm nodes are");
  mode_flag(slurm_only, "--slurm-gpu-model", s.slurm_gpu_model,
            "GPU catalog id of the Slurm nodes (for nodes created from sinfo)");
  cmd->add_option("--job-output-dir,--slurm-output-dir", s.slurm_output_dir,
                  "folder for the jobs' output files (default: discarded; required by --executor local)");
  cmd->add_option("--job-log-max-mib", s.job_log_max_mib,
                  "each run's log in --job-output-dir keeps its last this many MiB, the space of what came before "
                  "given back as it grows (0: keep all)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 20));
  cmd->add_option("--job-log-retention-days", s.job_log_retention_days,
                  "a job's files in --job-output-dir (its runs' logs, status and ready files) are deleted this many "
                  "days after it ended (succeeded, failed or cancelled) once nothing has written them for as long, "
                  "checked hourly (0: keep them)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{36500}));
  mode_flag(slurm_only, "--slurm-driver", s.slurm_driver, "NVIDIA driver version of the Slurm nodes, e.g. 550.90.07");
  mode_flag(slurm_only, "--slurm-cuda", s.slurm_cuda, "CUDA version of the Slurm nodes, e.g. 12.4");
  mode_flag(local_only, "--local-supplier", s.local_supplier,
            "supplier (id or name) this machine is a node of (--executor local)");
  mode_flag(local_only, "--local-node", s.local_node, "this machine's node name (default: its host name)");
  mode_flag(local_only, "--local-gpu-model", s.local_gpu_model, "GPU catalog id of this machine's GPUs");
  mode_flag(local_only, "--local-gpus", s.local_gpus,
            "GPUs on this machine (default: the GPU device files there are, --container-gpu-device from 0 up)")
      ->check(CLI::Range(int64_t{0}, int64_t{4096}));
  mode_flag(local_only, "--local-driver", s.local_driver, "NVIDIA driver version of this machine, e.g. 550.90.07");
  mode_flag(local_only, "--local-cuda", s.local_cuda, "CUDA version of this machine, e.g. 12.4");
  mode_flag(local_only, "--local-run-dir", s.local_run_dir, "folder of the local runs' state (default: <db>.runs)");
  cmd->add_flag("--containers", s.containers,
               "run every worker in a Podman container: the job's image, exactly its GPUs, limits, the tenant's "
               "network and volumes (docs/containers.md; needs --executor slurm or local)");
  cmd->add_option("--container-default-image", s.container_default_image,
                  "image for jobs that name none (default: such jobs fail)");
  cmd->add_option("--container-gpu-device", s.container_gpu_device,
                  "host path of GPU N with %d for N (mounted at /dev/nvidiaN), or cdi for nvidia.com/gpu=N")
      ->capture_default_str();
  cmd->add_option("--container-user", s.container_user, "uid:gid the containers run as (never root)")
      ->capture_default_str();
  cmd->add_option("--container-podman-args", s.container_podman_args,
                  "podman's global flags on the nodes (runc and cgroupfs suit cgroup v1 hosts)")
      ->capture_default_str();
  cmd->add_option("--container-pids-limit", s.container_pids_limit, "most processes in one container")
      ->check(CLI::Range(int64_t{16}, int64_t{1} << 22))
      ->capture_default_str();
  cmd->add_option("--volume-root", s.volume_root,
                  "folder on the nodes (shared storage) holding tenants' volumes as <root>/<tenant id>/<name>");
  cmd->add_option("--node-volume-root", s.node_volume_root,
                  "folder on each node's own disk holding node volumes as <root>/<tenant id>/<name> (%n: the "
                  "node's name); a node volume moves with the instance it is the data disk of");
  cmd->add_option("--volume-copy-command", s.volume_copy_command,
                  "run on the node an instance moves to, copying its node volume there from {from_node}'s "
                  "{from_dir} into {dir}")
      ->capture_default_str();
  cmd->add_option("--volume-copy-mbps", s.volume_copy_mbps,
                  "the copy rate (Mbit/s) a node volume's first copy estimate assumes; later ones use the last measured")
      ->check(CLI::Range(int64_t{1}, int64_t{1'000'000}))
      ->capture_default_str();
  cmd->add_option("--instance-ports", o->instance_ports,
                  "node ports instances' SSH and notebook servers are published on, LOW-HIGH (each instance "
                  "holds its own for its life)")
      ->capture_default_str();
  cmd->add_option("--instance-bind", s.instance_bind, "the node address (IPv4) instances' ports are published on")
      ->capture_default_str();
  cmd->add_option("--instance-host", s.instance_host,
                  "the host name tenants connect to for instances' SSH and notebook (default: the node's name)");
  cmd->add_option("--artifact-dir", s.artifact_dir,
                  "the artifact store (model weights, datasets by SHA-256); with --executor slurm the nodes "
                  "must see it at the same path (default: <db>.artifacts)");
  cmd->add_option("--artifact-max-gib", s.artifact_max_gib, "the largest artifact or image archive, in GiB")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  cmd->add_option("--artifact-tenant-gib", s.artifact_tenant_gib,
                  "all of one tenant's artifacts and own images (uploads included), in GiB")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  cmd->add_flag("--image-builds", s.image_builds,
               "build queued image recipes here with mmdebstrap (needs the Debian mirror; one at a time)");
  cmd->add_option("--debian-mirror", s.debian_mirror, "the Debian archive image recipes install from")
      ->capture_default_str();
  cmd->add_flag("--acceptance-count-simulated", s.acceptance_count_simulated,
               "let acceptance stages from the simulated GPU source (gpurent-gpu-sim, nccl-sim) make measurements "
               "that SLA credits count (for demos and tests; off, they are recorded in their run only)");
  cmd->add_option("--payment-webhook-secret-file", o->payment_secret_file,
                  "turn on POST /api/v1/payments/webhook: payments signed with the secret in this file "
                  "(docs/billing.md#balances) record top-ups of prepaid tenants");
  cmd->add_option("--log-level", s.log_level, "trace, debug, info, warn or error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}))
      ->capture_default_str();
  cmd->callback([&ctx, o, slurm_only, local_only] {
    ctx.action = [&ctx, o, slurm_only, local_only] {
      for (const auto& [flags, mode] : {std::pair{&slurm_only, "slurm"}, std::pair{&local_only, "local"}})
        for (const CLI::Option* opt : *flags)
          if (opt->count() > 0 && o->server.executor != mode)
            return ctx.fail(
                Error::invalid(opt->get_name(), std::string("is read only with --executor ") + mode +
                                                    " (this server runs --executor " + o->server.executor + ")"),
                kExitUsage);
      o->server.sync_full = !o->no_sync_full;
      o->server.scheduler = !o->no_scheduler;
      o->server.rate_limits = !o->no_rate_limits;
      if (auto ports = parse_port_range(o->instance_ports); ports) {
        o->server.instance_port_min = ports->first;
        o->server.instance_port_max = ports->second;
      } else {
        return ctx.fail(ports.error(), kExitUsage);
      }
      if (!o->payment_secret_file.empty()) {
        auto secret = read_text_file(o->payment_secret_file, 4096, "payment webhook secret");
        if (!secret) return ctx.fail(secret.error(), kExitUsage);
        std::string v = *secret;
        while (!v.empty() && (v.back() == '\n' || v.back() == '\r' || v.back() == ' ')) v.pop_back();
        if (v.size() < 16)
          return ctx.fail(Error::invalid("--payment-webhook-secret-file", Message("cli.serve.payment_secret_short")), kExitUsage);
        o->server.payment_webhook_secret = v;
      }
      return ctx.serve(o->server);
    };
  });
}

}  // namespace gpurent
