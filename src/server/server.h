// `gpurent serve`: the HTTP API server. Owns the store, the GPU catalog and the control loop
// (the single writer); HTTP threads authenticate, validate, then hand write commands to the loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gpurent {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                    // 0 = pick a free port (printed on start)
  // An SQLite file (created if missing) or a PostgreSQL URL (postgresql://…; the database must
  // exist, its schema is created).
  std::string db_path = "var/gpurent.db";
  // Where the server keeps its own files (admin token, demo users' tokens, local runs, artifacts)
  // when not given one by one; see file_prefix().
  std::string state_dir;
  std::string catalog_path;           // empty = default_catalog_path()
  std::string admin_token_file;       // empty = "<file_prefix()>.admin-token"; created (mode 600) on first start
  std::string data_dir;               // ../shared/data-like folder for the demo's price lists; empty = auto
  std::string static_dir;             // dashboard files; empty = none
  bool demo = false;                  // seed the demo world into an empty database
  // With --demo on an empty database: replay this many past days (jobs, failures, metering, cost
  // firewall) through the live services before listening, so the dashboard opens on a populated
  // week (server/demo/demo_history.h). 0 = start the demo world now, with no history (the default, so
  // tests start at once; scripts/demo passes 7).
  int demo_days = 0;
  // RFC 3339: the server's clock stands still at this instant (the demo replay ends there, and
  // everything afterwards happens at it), and ids come from a counter, not the CSPRNG, so a rerun
  // creates the same ids (core/ids.h). Empty: the system clock. For reproducible demo runs
  // (scripts/invoice-snapshot compares invoices before and after a change), not for production.
  std::string demo_clock;
  size_t max_body_bytes = 1 << 20;    // larger request bodies get 413 (Content-Length or chunked)
  // Worker threads that run the handlers; 0 = twice the cores, at least 4 (handlers wait on
  // SQLite and the control loop, so a few more than cores; many more only adds context switches).
  int threads = 0;
  // The HTTP front (server/http/http_server.h, docs/security.md): TLS, deadlines, caps, limits.
  std::string tls_cert;               // PEM certificate chain; with tls_key every connection is TLS
  std::string tls_key;
  bool insecure_http = false;         // allow plain HTTP on an address other than loopback
  std::vector<std::string> cors_origins;  // origins allowed cross-origin; empty = same origin only
  int64_t header_timeout_s = 10;      // a request's headers must arrive within this
  int64_t body_timeout_s = 30;        // and its body within this
  int64_t idle_timeout_s = 30;        // a kept-alive connection is closed after this long idle
  size_t max_connections = 10000;
  size_t max_connections_per_address = 512;
  bool rate_limits = true;
  // Per token and per source address: requests a second, reads / writes / usage ingest; the
  // bucket holds twice as many (the burst).
  int64_t rate_read = 1000, rate_write = 200, rate_ingest = 100;
  int64_t rate_address_factor = 5;    // a source address gets this many times a token's rates
  int64_t rate_tenant_factor = 5;     // a tenant's users and tokens together: this many times a token's
  int64_t rate_metric_points = 10'000;  // job metric points a second per tenant (bursts of twice as many)
  // What one tenant may hold (every scheduler pass reads its projects and waiting jobs): unfinished
  // jobs (pending, admitted or running) and projects; and, so that a tenant cannot grow the
  // database without end, its users, its projects' secrets (all together) and its volumes.
  int64_t tenant_max_jobs = 10'000, tenant_max_projects = 1'000;
  int64_t tenant_max_users = 1'000, tenant_max_secrets = 1'000, tenant_max_volumes = 1'000;
  bool sync_full = true;              // fsync every commit
  std::string log_level = "info";     // trace|debug|info|warn|error
  // Scheduler (docs/scheduler.md): the control loop admits and places pending jobs every tick;
  // the simulated executor runs admitted jobs for their expected duration.
  bool scheduler = true;
  // On PostgreSQL, several servers may share the database: one leads (runs the scheduler, the
  // cost firewall, the usage roll-up and scrapes, image builds, the demo meter) under a lease of
  // this many milliseconds (services/leader_lease.h); the others serve reads and take writes, and
  // one takes over when the lease runs out. Unused on SQLite (one server).
  int64_t leader_lease_ms = 10000;
  int64_t sched_interval_ms = 1000;
  std::string sched_policy = "fgd";
  int64_t spot_notice_s = 30;
  int64_t cold_start_ms = 2000;       // simulated executor: admitted -> running after this long
  std::string sched_config_path;      // YAML policy knobs (sched/sched_config.h); flags above are the defaults
  // Usage metering (docs/resources/usage.md): raw samples older than the retention window are
  // rolled up into per-minute rows every rollup interval; 0 hours rolls up every finished minute.
  int64_t usage_retention_hours = 168;
  int64_t usage_rollup_interval_s = 300;
  std::vector<std::string> dcgm_targets;  // "URL@NODE": dcgm-exporter endpoints scraped into usage
  int64_t dcgm_interval_s = 15;
  // Cost firewall (docs/billing.md#cost-firewall): rate every tenant's month to date this often,
  // raise alerts, deliver them to webhooks, hold over-budget projects. 0 = off.
  int64_t firewall_interval_s = 60;
  // Month close (docs/billing.md#issued-invoices): the cost firewall's first pass this many hours
  // after a month ends issues every tenant's invoices for it (late usage reports land first).
  int64_t month_close_delay_h = 6;
  // Payment webhook (docs/billing.md#balances): the shared secret inbound payments are signed
  // with, read from --payment-webhook-secret-file; empty: POST /api/v1/payments/webhook is off.
  std::string payment_webhook_secret;
  // Execution (docs/slurm.md, docs/containers.md): "sim" (the simulated executor), "slurm" (jobs
  // run on a Slurm cluster whose nodes become the supplier's nodes) or "local" (jobs run in
  // containers on this machine, one node of the supplier; local_* below, slurm_output_dir).
  std::string executor = "sim";
  std::string slurm_conf;          // slurm.conf of the cluster (SLURM_CONF); empty: the tools' default
  std::string slurm_partition;     // empty: the cluster's default partition
  std::string slurm_gres_type;     // "h100" -> --gres=gpu:h100:N; empty: --gres=gpu:N
  std::string slurm_supplier;      // supplier (id or name) the Slurm nodes belong to
  std::string slurm_gpu_model;     // catalog id of the Slurm nodes' GPUs (nodes created from sinfo)
  std::string slurm_output_dir;    // where jobs' output files go (--job-output-dir); empty: discarded
  int64_t job_log_max_mib = 64;    // each run's log keeps its last this many MiB (exec/log_cap.h); 0: all
  // A job's output files go this many days after it ended (services/job_output_retention.h); 0: kept.
  int64_t job_log_retention_days = 0;
  std::string slurm_driver;        // NVIDIA driver and CUDA versions of the Slurm nodes (Slurm does
  std::string slurm_cuda;          // not know them; the node agent will read them from NVML)
  std::string local_supplier, local_gpu_model, local_driver, local_cuda;  // as slurm_* for --executor local
  std::string local_node;          // this machine's node name; empty: its host name
  int64_t local_gpus = -1;         // -1: count the GPU device files (container_gpu_device)
  std::string local_run_dir;       // the local runs' folders; empty: "<file_prefix()>.runs"
  // Containers (docs/containers.md): with the Slurm executor, every worker runs in a Podman
  // container with its image, exactly its GPUs, limits, the tenant's network and volumes.
  bool containers = false;
  std::string container_default_image;                      // for jobs naming none; empty: they fail
  std::string container_gpu_device = "/dev/nvidia%d";       // host path of GPU %d, or "cdi"
  std::string container_user = "1000:1000";                 // uid:gid inside, never root
  std::string container_podman_args = "--runtime runc --cgroup-manager cgroupfs";
  int64_t container_pids_limit = 4096;
  std::string volume_root;                                  // tenants' volumes on the nodes (shared)
  // Node volumes (docs/resources/volumes.md#node-volumes): the folder on each node's own disk that
  // holds them ("%n" is the node's name: one machine's fake nodes each get their own), the command
  // that copies one from another node to this one ({from_node}, {from_dir}, {dir}), and the copy
  // rate a first estimate assumes, in Mbit/s (a measured copy's rate replaces it).
  std::string node_volume_root;
  std::string volume_copy_command = "rsync -a --delete -e 'ssh -o BatchMode=yes' {from_node}:{from_dir}/ {dir}/";
  int64_t volume_copy_mbps = 1000;
  // Instances' access (docs/resources/instances.md#access): the node ports their sshd and
  // notebook servers are published on (each instance holds its own for its life), the address
  // they are published on, and the host tenants are told to connect to (empty: the node's name).
  int64_t instance_port_min = 30000, instance_port_max = 30999;
  std::string instance_bind = "0.0.0.0";
  std::string instance_host;
  // Artifacts (docs/resources/artifacts.md): the content-addressed store of the projects' files
  // (shared with the nodes at the same path); empty: "<file_prefix()>.artifacts". Limits: one
  // artifact, and all of a tenant's (uploads included), in GiB.
  std::string artifact_dir;
  int64_t artifact_max_gib = 64;
  int64_t artifact_tenant_gib = 256;
  // Images (docs/resources/images.md): build queued recipes here with mmdebstrap from this
  // Debian mirror (one at a time, on a thread of their own). Off: recipes stay queued.
  bool image_builds = false;
  std::string debian_mirror = "http://deb.debian.org/debian";
  // Acceptance runs (docs/acceptance.md): whether stages from the simulated GPU source
  // (gpurent-gpu-sim, nccl-sim) make measurements that credits count. Off in production: a
  // simulated figure is recorded in its run but never becomes a measurement. The demo and tests
  // turn it on.
  bool acceptance_count_simulated = false;

  // The path the server's own files are named from ("<prefix>.admin-token", ".demo-tokens.json",
  // ".runs", ".artifacts"): "<state_dir>/gpurent" when state_dir is set; else the SQLite file
  // itself (its files beside it, as before); else, for a PostgreSQL database, "var/gpurent".
  std::string file_prefix() const;
};

// Runs until SIGINT or SIGTERM. Prints one JSON line {"event":"listening","url":...,"admin_token_file":...}
// to stdout when ready. Returns a process exit code.
int run_server(const ServerOptions& opts);

}  // namespace gpurent
