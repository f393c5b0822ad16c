// Containers for jobs (docs/containers.md): every worker of a job runs in its own Podman container
// on the node it was placed on, with the job's image, command, environment and working directory;
// exactly its GPUs (device nodes, CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES); CPU, memory,
// shared-memory and process limits; a non-root user, no capabilities, no privilege escalation;
// the tenant's own network (isolated from other tenants'); the tenant's volumes.
//
// container_script() writes the bash that does it on a node: the body of the Slurm batch script
// (SlurmSubmit::script), run by srun on every node of a gang, or by the local runner
// (exec/local_runner.h). The GPUs come from the local runner (GPURENT_RUN_GPUS) or from Slurm
// (SLURM_STEP_GPUS / SLURM_JOB_GPUS: the absolute indices it chose on that node). When the run
// fails for a reason the exit code cannot carry (image missing, runtime error, out of memory) the
// script writes one JSON line to the status file, which read_container_status() reads back.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace gpurent {

// How a deployment's nodes run containers (gpurent serve --containers ...).
struct ContainerSettings {
  std::string podman = "podman";
  // Copies an image archive into Podman's storage under exactly the job's reference (the tags the
  // archive carries are not applied: a tenant's archive cannot claim another image's name).
  std::string skopeo = "skopeo";
  // Global flags before `run`; the default suits Debian 12 hosts with cgroup v1 (docs/containers.md).
  std::vector<std::string> podman_args = {"--runtime", "runc", "--cgroup-manager", "cgroupfs"};
  // Host path of GPU N ("%d" is the index), mounted at /dev/nvidiaN; "cdi" passes the NVIDIA
  // Container Toolkit's CDI device nvidia.com/gpu=N instead.
  std::string gpu_device = "/dev/nvidia%d";
  // Also passed when present on the node (the driver's control devices).
  std::vector<std::string> extra_devices = {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"};
  std::string volume_root;       // tenants' volumes: <root>/<tenant id>/<volume>; empty: volumes refused
  std::string user = "1000:1000";  // uid:gid inside the container (never root)
  int64_t pids_limit = 4096;
  int64_t nofile = 1024;  // ulimit (at or below the host's hard limit); nproc: the node's pid_max (run_flags)
  int64_t stop_timeout_s = 10;          // SIGTERM to SIGKILL when the job is cancelled
};

struct ContainerVolume {
  std::string name, mount;
  bool read_only = false;
  // A node volume (docs/resources/volumes.md#node-volumes): its folder on this node's own disk,
  // used instead of <volume root>/<tenant id>/<name>. With copy_command (rendered, run with sh -c),
  // the folder is first filled from node copy_from before the container starts; a failed copy
  // stops the run (status volume_copy_failed). With report_file, the script reports what it
  // measured: "<report_file>.copied" holds "copied <from node> <this node> <bytes> <ms> <epoch ms>"
  // after a copy, "<report_file>.used" holds "used <this node> <bytes> <epoch ms>" once the
  // container ended, or "used <this node> 0 …" when the run created the folder (read back by
  // read_volume_report).
  std::string host_dir, copy_command, copy_from, report_file;
};

// A secret for the container: the file on the node holding its value (readable by root only),
// given as the environment variable `env` or mounted read-only at `file` (through Podman's own
// secrets: the value never passes through Podman's environment or a command line).
struct ContainerSecret {
  std::string host_file, env, file;
};

// An artifact for the container: the content file on the node (the artifact store, shared with
// the server), checked against `sha256` before the container starts and mounted read-only as the
// file `mount`. A file that is missing or hashes otherwise stops the run before it starts.
struct ContainerArtifact {
  std::string name, host_file, sha256, mount;
};

// A container port published on the node: host_ip:host_port -> container_port (TCP).
struct ContainerPort {
  std::string host_ip;
  int64_t host_port = 0, container_port = 0;
};

// One job's container, the same on each of its nodes.
struct ContainerRun {
  std::string job_id;      // names the container: gpurent-<job id>-<node>
  std::string tenant_id;   // names the network (gpurent-<tenant id>) and the volume folder
  std::string image;       // a local image reference or digest (--pull never)
  // A gpurent image (model/image.h): its content in the store, copied in with skopeo
  // (docker-archive, oci-archive) or imported with podman (rootfs-tar) as `image` on a node that
  // lacks it, after its SHA-256 is checked. Empty: the node must have `image`.
  std::string image_file, image_sha256, image_format;
  std::vector<std::string> command;  // empty: the image's entrypoint
  std::map<std::string, std::string> env;
  std::string workdir;     // empty: the image's
  std::optional<int64_t> cpus, memory_gib, shm_gib;
  std::vector<ContainerVolume> volumes;
  std::vector<ContainerSecret> secrets;  // values never appear in the script or on a command line
  std::vector<ContainerArtifact> artifacts;
  std::vector<ContainerPort> ports;  // an instance's sshd and notebook (a node port is one container's)
  // Absolute paths mounted as the container's own tmpfs (mode 1777, noexec, 64 MiB): what is written there
  // lives in memory, leaves with the container and is never in a saved image (an instance's SSH
  // and notebook files: its host key without a volume, the notebook's token).
  std::vector<std::string> tmpfs;
  // Before the container starts, the script waits up to this long for each published port that
  // something still listens on (an instance's earlier run: the runtime's port forwarder lets go a
  // moment after its container is gone), one line on the job's log; past it Podman is started
  // anyway and says why it cannot listen.
  int64_t port_wait_s = 30;
  // The container user's login name and home in the container's /etc/passwd (podman
  // --passwd-entry, HOME): an instance's, for SSH logins. Empty: Podman's ("<uid>", home /).
  std::string login, home;
  // Node name -> the NUMA node of each GPU index there (gpurent's node topology). When all of a
  // container's GPUs are on one NUMA node the container's CPUs and memory are that node's
  // (--cpuset-cpus from /sys/devices/system/node/nodeN/cpulist on the node, --cpuset-mems N).
  std::map<std::string, std::vector<int64_t>> gpu_numa;
  int64_t nodes = 1;       // > 1: srun starts one container per node
  std::string status_file;  // may contain %j (the run's id there: Slurm's job id); empty: none written
  // Readiness (model/job.h JobReadiness): while the container runs, every `ready_interval_s` the
  // script runs `ready_command` in it (podman exec, bounded by a timeout) or, with
  // `ready_heartbeat`, looks for the file the workload creates at $GPURENT_READY_FILE
  // (/run/gpurent/ready, a folder of the node's mounted into the container). On the first success
  // it writes the node's clock in epoch milliseconds to `ready_file` + "." + the node's name
  // (ready_file_for()); the executor reads it back (read_ready_file()). Empty ready_file: no checks.
  std::string ready_file;  // may contain %j, like status_file
  // An egress freeze: while this file exists (the executor keeps one per frozen project) the
  // container is disconnected from its network every check (every 2 s), keeping only loopback,
  // and reconnected once it is gone; each change is one line on the job's log. Empty: no checks.
  std::string freeze_file;
  std::vector<std::string> ready_command;
  bool ready_heartbeat = false;
  int64_t ready_interval_s = 5;
  // Saving the container as an image (an instance's save, docs/resources/instances.md#saving-an-image),
  // single-node runs only: while the container runs, every 2 s the script looks for
  // `save_request`, a file holding an image id (img_…, written by the server). It moves the file
  // to `<save_dir>/<id>.save.taken`, commits the container (podman commit: its writable layer over its image; volumes and
  // secrets are not in it; the image's own CMD is kept, not the run's command) under a temporary
  // tag in the tenant's scope, writes that with podman save as a docker-archive to
  // `<save_dir>/<id>.save.tar`, drops the tag, and then writes `<save_dir>/<id>.save.done`:
  // "ok <sha256> <bytes>" or "error <podman's last words>" (save_done_for, read_save_done).
  // Empty: no saving.
  std::string save_request, save_dir;
};

// Checks what the script will rely on: names usable in paths and container names, a volume root
// when the job has volumes. Field names are the job's.
Status check_container_run(const ContainerSettings& s, const ContainerRun& r);

// Checks a deployment's settings (gpurent serve flags): a GPU device pattern with one %d, a
// non-root uid:gid, an absolute volume root.
Status check_container_settings(const ContainerSettings& s);

// The bash body of the batch script (no #! line). Every value is shell-quoted.
std::string container_script(const ContainerSettings& s, const ContainerRun& r);

// What the script wrote to the status file: {"reason": "image_missing" | "runtime_error" |
// "oom" | "artifact_missing" | "artifact_mismatch" | "image_corrupt", ...}. nullopt when there is
// no such file or it is not a status line.
struct ContainerStatus {
  // image_missing, image_unreadable, image_corrupt, image_not_yours, runtime_error, oom,
  // artifact_missing, artifact_mismatch, volume_copy_failed
  std::string reason;
  std::string detail;        // the runtime's own words, the image, the artifact's name, ...
  std::string expected, actual;  // artifact_mismatch, image_corrupt: the SHA-256 expected, the one found
  std::optional<int64_t> memory_gib;  // oom: the limit
  std::optional<bool> oom_reported;   // oom: the runtime said so (false: inferred from SIGKILL)
  std::string node;
};
std::optional<ContainerStatus> read_container_status(const std::string& path);

// Where a node's script reports readiness: `ready_file` with %j as `run_id`, then "." and the node.
std::string ready_file_for(const std::string& ready_file, const std::string& run_id, const std::string& node);
// When the node said the run was ready (epoch ms); nullopt when there is no such file or it does
// not hold one plausible time.
std::optional<int64_t> read_ready_file(const std::string& path);

// A node volume's report (ContainerVolume::report_file): "copied" (from, bytes, ms, at) or "used"
// (bytes, at), by node `node`. nullopt when the file is not one.
struct VolumeReport {
  bool copied = false;
  std::string from, node;
  int64_t bytes = 0, ms = 0, at = 0;
};
std::optional<VolumeReport> read_volume_report(const std::string& path);

// What a save left in `save_dir` for image `image_id`: the archive and the line saying how it went.
std::string save_archive_for(const std::string& save_dir, const std::string& image_id);
std::string save_done_for(const std::string& save_dir, const std::string& image_id);
struct SaveDone {
  bool ok = false;
  std::string sha256;  // ok: the archive's SHA-256 as the node computed it (lowercase hex)
  int64_t bytes = 0;   // ok: its size
  std::string error;   // not ok: why, one line
};
// nullopt when the file is not there (yet) or not a line the script writes.
std::optional<SaveDone> read_save_done(const std::string& path);

// The last `lines` lines of a text file, at most `max_bytes` read from its end ("" when unreadable).
std::string tail_lines(const std::string& path, int lines, size_t max_bytes = 64 * 1024);

// The same lines as one line of printable UTF-8 for a reason: line breaks as " | ", other control
// characters as spaces, invalid UTF-8 as '?', at most the last `max_bytes` bytes (cut at a
// character boundary, "…" in front when cut).
std::string log_excerpt(const std::string& path, int lines, size_t max_bytes);

}  // namespace gpurent
