// Instance: a tenant's interactive machine (docs/resources/instances.md) — N GPUs of one model, or
// none (CPU-only), an image, and the tenant's volume as its data disk, started and stopped at will
// and billed only while it runs (its volume while it exists). Each start runs one job of the
// instance's project (kind debug, named "<instance>-<n>", labelled gpurent.io/instance) through
// the scheduler and the executor like any other job, so quotas, placement, metering and billing
// are the jobs'; a stop cancels that job, whose container goes, while the volume keeps the data.
// Written by the API (api/instances.cc). Value types and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/idle_stop.h"
#include "model/job.h"
#include "model/resource.h"

namespace gpurent {

inline constexpr int64_t kMaxInstanceGpus = 16;
inline constexpr const char* kInstanceLabel = "gpurent.io/instance";  // only an instance's start sets it
inline constexpr size_t kMaxInstanceSshKeys = 16;
inline constexpr size_t kMaxSharedVolumes = 8;
// Where the instance's servers listen inside its container (published on the node's own ports).
inline constexpr int64_t kInstanceSshPort = 2222;
inline constexpr int64_t kInstanceNotebookPort = 8888;
// The login name of the instance's container user (podman --passwd-entry).
inline constexpr const char* kInstanceLogin = "gpurent";

struct Instance {
  std::string name;     // slug, 1..57 (its jobs are "<name>-<n>"), unique within the tenant
  std::string project;  // reference as given: project id or name
  int64_t gpus = 0;     // 0..kMaxInstanceGpus; 0: CPU-only (无卡模式)
  std::optional<std::string> gpu_model;  // required iff gpus > 0: a catalog id or alias
  // Its data disk: one of the tenant's volumes, mounted read-write (default /data), no other
  // instance's data disk or shared volume at the same time (the API checks it).
  std::optional<VolumeMount> volume;
  // At create only (volume.size_gb, not stored): the data disk's size, made with the instance when
  // the tenant has no volume of that name, else checked against the one it has.
  std::optional<int64_t> volume_size_gb;
  // Volumes it shares with other instances and jobs (a project's volume, say), mounted at `mount`
  // (default /shared/<name>), read-only when asked; at most kMaxSharedVolumes, none another
  // instance's data disk.
  std::vector<VolumeMount> shared_volumes;
  // Its own idle auto-stop rule; absent: its tenant's default (Tenant::instance_idle_stop).
  std::optional<IdleStop> idle_stop;
  // Each start stops by itself this long after it began running (its job's time_limit_seconds):
  // a timer against forgotten instances. 1..kMaxJobDurationSeconds / 60 minutes.
  std::optional<int64_t> stop_after_minutes;
  // Or at this time (whichever comes first): a start after it is refused.
  std::optional<TimeMs> stop_at;
  // Passed to each start's job as they are, checked as a job checks them: resources, image,
  // command, env (docs/resources/jobs.md).
  json job_fields = json::object();
  // Access (docs/resources/instances.md#access): OpenSSH public keys that may log in (an sshd in the
  // container), and a Jupyter notebook server on or off.
  std::vector<std::string> ssh_keys;
  bool notebook = false;
  // Set by the server.
  std::string tenant_id, project_id;
  bool want_running = true;           // started (true) or stopped (false) by its users
  std::vector<std::string> job_ids;   // one job per start, the latest last
  std::optional<Message> stop_reason;  // why it last stopped (a user, the job's end)
  // Stopping (services/instance_stop.h): the job whose run the executor still sees alive after its
  // cancel (its container being stopped), since when; "" once the run has gone.
  std::string stopping_job;
  TimeMs stopping_since = 0;
  TimeMs stopping_gone_at = 0;  // when the executor first saw that run gone (0: not yet)
  // Released (DELETE, or by its offer's rule): kept, read-only, as `released` for
  // kReleasedKeptDays, holding no name, ports or volumes; then removed.
  std::optional<TimeMs> released_at;
  // The node ports published to its sshd and notebook (0: none), fixed for the instance's life
  // from the server's range (--instance-ports), and the notebook's token (64 hex digits; shown only
  // to those who may start and stop the instance).
  int64_t ssh_port = 0, notebook_port = 0;
  std::string notebook_token;

  bool operator==(const Instance&) const = default;
};

// POST body (name, project, gpus, gpu_model, volume, ssh_keys, notebook, stop timers, resources,
// image, command, env); the job
// fields are only shaped here: the server checks them as the first start's job.
Result<Instance> parse_instance(const json& body);
Result<Instance> decode_instance(const json& body);  // the stored body, strictly by type
json to_json(const Instance& i);                     // the stored body; the API adds state, times
// name (none once released: another instance may take it), tenant_id, project_id, gpu_model;
// state "stopping" or "released" (found without reading them all).
IndexCols index_of(const Instance& i);

// The job the instance's `n`-th start submits at `now` (POST /api/v1/jobs body): its time limit is
// the sooner of stop_after_minutes and stop_at. An error on stop_at when it is not after `now`, or
// more than the longest time limit away.
Result<json> instance_job(const Instance& i, int64_t n, TimeMs now);
// Where a start of a stopped instance goes (POST /instances/{ref}/start {"on": …}; docs/resources/
// instances.md#restart): `auto` returns to its last GPU host when that host has its GPUs free and
// is refused (409, with the preflight's advice) when not; `same_host` waits in the queue for that
// host; `any_host` goes wherever the scheduler finds room; `cpu_only` starts without GPUs (its
// resources, else kCpuOnlyStart's) to reach the data.
enum class StartOn { kAuto, kSameHost, kAnyHost, kCpuOnly };
inline constexpr EnumEntry<StartOn> kStartOnNames[] = {
    {StartOn::kAuto, "auto"}, {StartOn::kSameHost, "same_host"}, {StartOn::kAnyHost, "any_host"}, {StartOn::kCpuOnly, "cpu_only"}};
inline constexpr int64_t kCpuOnlyStartCores = 2;
inline constexpr int64_t kCpuOnlyStartMemoryGib = 8;
// The start request's body ({} or {"on": …}); an empty body is {}.
Result<StartOn> parse_start_request(const json& body);
// The job `instance_job` built, adjusted for one start: CPU-only (no GPUs, no GPU constraints, its
// resources' cores and memory or the defaults above) for `cpu_only`, and pinned to `host` (a node
// id; "" none): its last GPU host, or for a start without GPUs the node its node volume is on.
json start_job_on(json job, StartOn on, const std::string& host);

// Release of stopped instances (docs/resources/instances.md#release): an instance whose last run
// ended `days` before (its offer's stopped_instance_release_days) is released; warnings go out 3
// and 1 days before, never before it stopped.
inline constexpr int64_t kReleaseWarningDays[] = {3, 1};
inline constexpr int64_t kReleasedKeptDays = 7;
// Instance records one tenant may hold, released ones kept included: each create with ports reads
// every instance, so instances made and released in a loop must not grow that without bound.
inline constexpr int64_t kMaxInstancesPerTenant = 1000;
// How long a stopping instance stays stopping after its run is seen gone: the container runtime
// lets go of the published ports (conmon) a moment after the run itself has ended.
inline constexpr int64_t kStopSettleMs = 2000;
// Released at `now` for `why`: stopped (it must have been stopped first), holding nothing.
void mark_released(Instance& i, const Message& why, TimeMs now);
TimeMs release_time(TimeMs stopped_at, int64_t days);
// The warnings (days before the release, of kReleaseWarningDays) due at `now`.
std::vector<int64_t> release_warnings_due(TimeMs now, TimeMs stopped_at, TimeMs release_at);

// A job error's field as the instance's client named it ("gpus_per_worker" -> "gpus",
// "constraints.gpu_models[0]" -> "gpu_model", "volumes[0].mount" -> "volume.mount", the shared
// volumes after it "volumes[k]…" -> "shared_volumes[k-1]…"; without a data disk they start at 0).
std::string instance_field(const std::string& job_field, bool has_volume = true);

// POST /instances/{ref}/attach body: {name, mount, shared, read_only}: the data disk (mount
// default /data; read_only refused) or, with shared: true, one more shared volume (mount default
// /shared/<name>).
struct VolumeAttach {
  VolumeMount mount;
  bool shared = false;
};
Result<VolumeAttach> parse_volume_attach(const json& body);
// POST /instances/{ref}/detach body: {name}.
Result<std::string> parse_volume_detach(const json& body);

// Nothing when `key` is one line of an OpenSSH public key ("ssh-ed25519 AAAA… comment": a known
// type, its base64 blob naming the same type, an optional printable comment); else why not.
std::optional<Message> ssh_key_problem(const std::string& key);

}  // namespace gpurent
