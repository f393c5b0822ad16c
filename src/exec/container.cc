#include "exec/container.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "core/fields.h"
#include "core/json_limits.h"
#include "core/shell_quote.h"

namespace gpurent {

namespace {

std::string words(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& w : v) out += (out.empty() ? "" : " ") + shell_quote(w);
  return out;
}

// Letters, digits, '.', '_', '-' only: safe in a container, network or folder name.
bool plain_name(const std::string& s) {
  static const std::regex re("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");
  return std::regex_match(s, re);
}

// The status file's path with %j as the run's id (the local runner's, else Slurm's job id), as a shell word.
std::string status_path_word(const std::string& path) {
  std::string out;
  size_t i = 0;
  while (i < path.size()) {
    const size_t j = path.find("%j", i);
    out += shell_quote(path.substr(i, j == std::string::npos ? std::string::npos : j - i));
    if (j == std::string::npos) break;
    out += "\"${GPURENT_RUN_ID:-${SLURM_JOB_ID:-0}}\"";
    i = j + 2;
  }
  return out;
}

std::string run_flags(const ContainerSettings& s, const ContainerRun& r) {
  std::ostringstream f;
  f << "--name \"$name\" --pull never --network \"$net\" --user " << shell_quote(s.user)
    << " --cap-drop all --security-opt no-new-privileges --pids-limit " << s.pids_limit
    << " --ulimit nofile=" << s.nofile << ":" << s.nofile << " --ulimit nproc=\"$nproc:$nproc\"";
  // nproc is the node's pid_max (gpurent_worker's $nproc), no bound of its own: the kernel counts
  // RLIMIT_NPROC per uid over the whole host, and every tenant's containers run as the same uid
  // (--user), so any smaller value would let one tenant's processes use up every other tenant's.
  // --pids-limit, the container's own cgroup count, is the bound. (Podman's default would not
  // do: above what the node lets the container set, runc cannot start it.)
  if (r.cpus) f << " --cpus " << *r.cpus;
  if (r.memory_gib) f << " --memory " << *r.memory_gib << "g --memory-swap " << *r.memory_gib << "g";
  const int64_t shm = r.shm_gib ? *r.shm_gib : r.memory_gib ? std::max<int64_t>(1, *r.memory_gib / 2) : 1;
  f << " --shm-size " << shm << "g";
  f << " -e CUDA_VISIBLE_DEVICES=\"$visible\" -e NVIDIA_VISIBLE_DEVICES=\"${gpus:-void}\""
       " -e GPURENT_GPU_INDICES=\"$gpus\" -e GPURENT_NODE=\"$node\"";
  for (const auto& [k, v] : r.env) f << " -e " << shell_quote(k + "=" + v);
  if (!r.workdir.empty()) f << " -w " << shell_quote(r.workdir);
  for (const std::string& t : r.tmpfs)
    f << " --tmpfs " << shell_quote(t + ":rw,nosuid,nodev,noexec,size=64m,mode=1777");
  for (const ContainerPort& p : r.ports)
    f << " -p " << shell_quote(p.host_ip + ":" + std::to_string(p.host_port) + ":" + std::to_string(p.container_port) + "/tcp");
  // Podman fills in $UID and $GID itself.
  if (!r.login.empty())
    f << " --passwd-entry " << shell_quote(r.login + ":*:$UID:$GID:" + r.login + ":" + (r.home.empty() ? "/" : r.home) + ":/bin/sh");
  if (!r.home.empty()) f << " -e " << shell_quote("HOME=" + r.home);
  return f.str();
}

}  // namespace

Status check_container_run(const ContainerSettings& s, const ContainerRun& r) {
  FieldErrors errs;
  if (!plain_name(r.job_id)) errs.add("id", Message("exec.container.bad_name"));
  if (!plain_name(r.tenant_id)) errs.add("tenant_id", Message("exec.container.bad_name"));
  if (r.image.empty()) errs.add("image", Message("exec.container.no_image"));
  for (const ContainerVolume& v : r.volumes)  // a node volume brings its own folder
    if (v.host_dir.empty() && s.volume_root.empty()) {
      errs.add("volumes", Message("exec.container.no_volume_root"));
      break;
    }
  for (size_t i = 0; i < r.volumes.size(); ++i)
    if (!plain_name(r.volumes[i].name))
      errs.add("volumes[" + std::to_string(i) + "].name", Message("exec.container.bad_name"));
  for (size_t i = 0; i < r.artifacts.size(); ++i) {
    const ContainerArtifact& a = r.artifacts[i];
    const std::string at = "artifacts[" + std::to_string(i) + "]";
    if (!plain_name(a.name)) errs.add(at + ".name", Message("exec.container.bad_name"));
    // ':' and ',' separate the parts of a mount option.
    if (a.host_file.empty() || a.host_file[0] != '/' || a.host_file.find_first_of(":,") != std::string::npos)
      errs.add(at, Message("exec.container.artifact_path").arg("path", a.host_file));
    if (a.sha256.size() != 64 || a.sha256.find_first_not_of("0123456789abcdef") != std::string::npos)
      errs.add(at + ".sha256", Message("artifact.sha256.hex"));
  }
  static const std::regex ipv4("(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])(\\.(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])){3}");
  for (size_t i = 0; i < r.tmpfs.size(); ++i) {
    const std::string& t = r.tmpfs[i];
    const bool ok =
        t.size() > 1 && t.size() <= 255 && t[0] == '/' && t.find("..") == std::string::npos &&
        t.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/-") == std::string::npos;
    if (!ok) errs.add("tmpfs[" + std::to_string(i) + "]", Message("exec.container.tmpfs_path"));
  }
  for (size_t i = 0; i < r.ports.size(); ++i) {
    const ContainerPort& p = r.ports[i];
    if (!std::regex_match(p.host_ip, ipv4) || p.host_port < 1 || p.host_port > 65535 || p.container_port < 1 ||
        p.container_port > 65535)
      errs.add("ports[" + std::to_string(i) + "]", Message("exec.container.bad_port"));
  }
  if (!r.login.empty() && !plain_name(r.login)) errs.add("login", Message("exec.container.bad_name"));
  if (!r.home.empty() && (r.home[0] != '/' || r.home.find_first_of(":\n") != std::string::npos))
    errs.add("home", Message("exec.container.artifact_path").arg("path", r.home));
  if (!r.image_file.empty()) {
    if (r.image_file[0] != '/') errs.add("image", Message("exec.container.artifact_path").arg("path", r.image_file));
    if (r.image_format != "docker-archive" && r.image_format != "oci-archive" && r.image_format != "rootfs-tar")
      errs.add("image", Message("exec.container.bad_name"));
    if (r.image_sha256.size() != 64 || r.image_sha256.find_first_not_of("0123456789abcdef") != std::string::npos)
      errs.add("image", Message("artifact.sha256.hex"));
  }
  if (!errs.empty()) return errs.to_error();
  return ok_status();
}

Status check_container_settings(const ContainerSettings& s) {
  FieldErrors errs;
  if (s.gpu_device != "cdi") {
    const size_t at = s.gpu_device.find("%d");
    if (s.gpu_device.empty() || s.gpu_device[0] != '/' || at == std::string::npos ||
        s.gpu_device.find('%', at + 2) != std::string::npos || s.gpu_device.find('%') != at)
      errs.add("--container-gpu-device", Message("exec.container.gpu_device_pattern"));
  }
  static const std::regex user("[0-9]{1,9}:[0-9]{1,9}");
  if (!std::regex_match(s.user, user) || s.user.rfind("0:", 0) == 0)
    errs.add("--container-user", Message("exec.container.user"));
  if (!s.volume_root.empty() && s.volume_root[0] != '/')
    errs.add("--volume-root", Message("exec.container.volume_root"));
  if (s.pids_limit < 16) errs.add("--container-pids-limit", Message("exec.container.pids_limit"));
  if (!errs.empty()) return errs.to_error();
  return ok_status();
}

namespace {

// The worker function's parts, in order (container_script() below joins them).

// Its variables and the status() helper that tells gpurent why a run failed.
std::string script_head(const ContainerSettings& s, const ContainerRun& r) {
  std::ostringstream o;
  o << "# One container per node for job " << r.job_id << " (docs/containers.md).\n"
    << "gpurent_worker() {\n"
    << "  local P=(" << words(std::vector<std::string>{s.podman}) << (s.podman_args.empty() ? "" : " ")
    << words(s.podman_args) << ")\n"
    << "  local node; node=$(printf '%s' \"${GPURENT_RUN_NODE:-${SLURMD_NODENAME:-$(hostname -s)}}\" | tr -cd "
       "'A-Za-z0-9._-')\n"
    << "  local status_file=" << (r.status_file.empty() ? "''" : status_path_word(r.status_file)) << "\n"
    << "  local name=" << shell_quote("gpurent-" + r.job_id + "-") << "\"$node\"\n"
    << "  local net=" << shell_quote("gpurent-" + r.tenant_id) << "\n"
    << "  local image=" << shell_quote(r.image) << "\n"
    << "  local nproc; nproc=$(cat /proc/sys/kernel/pid_max 2>/dev/null) || nproc=4194304\n"
    << "  status() {  # why the run failed, for gpurent (the exit code cannot say)\n"
    << "    [ -n \"$status_file\" ] && printf '{\"reason\":\"%s\",\"detail\":\"%s\",\"node\":\"%s\"%s}\\n' "
       "\"$1\" \"$(printf '%s' \"$2\" | tr -d '\\000-\\037\"\\\\')\" \"$node\" \"${3:-}\" > \"$status_file\"\n"
    << "    return 0\n"
    << "  }\n";
  return o.str();
}

// The GPUs of this node's run (absolute indices: the local runner's GPURENT_RUN_GPUS, else what
// Slurm gave the step) as devices, and the driver's own.
std::string script_gpus(const ContainerSettings& s) {
  const bool cdi = s.gpu_device == "cdi";
  std::ostringstream o;
  o << "  local gpus=${GPURENT_RUN_GPUS:-${SLURM_STEP_GPUS:-${SLURM_JOB_GPUS:-}}} visible='' i=0 g d\n"
    << "  local -a args=()\n"
    << "  for g in ${gpus//,/ }; do\n"
    << "    [[ \"$g\" =~ ^[0-9]+$ ]] || continue\n";
  if (cdi)
    o << "    args+=(--device \"nvidia.com/gpu=$g\")\n";
  else
    o << "    args+=(--device \"$(printf " << shell_quote(s.gpu_device) << " \"$g\"):/dev/nvidia$g\")\n";
  o << "    visible+=\"${visible:+,}$i\"; i=$((i + 1))\n"
    << "  done\n";
  if (!s.extra_devices.empty() && !cdi)
    o << "  for d in " << words(s.extra_devices) << "; do [ -e \"$d\" ] && args+=(--device \"$d\"); done\n";
  return o.str();
}

// CPUs and memory of the GPUs' NUMA node, when they share one and the node says which CPUs.
std::string script_numa(const ContainerRun& r) {
  if (r.gpu_numa.empty()) return "";
  std::ostringstream o;
  o << "  local -a numa_of=()\n  case \"$node\" in\n";
  for (const auto& [name, numa] : r.gpu_numa) {
    if (!plain_name(name)) continue;
    o << "    " << shell_quote(name) << ") numa_of=(";
    for (size_t k = 0; k < numa.size(); ++k) o << (k ? " " : "") << numa[k];
    o << ") ;;\n";
  }
  o << "  esac\n"
    << "  local numa='' n\n"
    << "  for g in ${gpus//,/ }; do\n"
    << "    n=${numa_of[$g]:-}\n"
    << "    [ -z \"$n\" ] && { numa=mixed; break; }\n"
    << "    [ -z \"$numa\" ] && numa=$n\n"
    << "    [ \"$numa\" != \"$n\" ] && { numa=mixed; break; }\n"
    << "  done\n"
    << "  if [[ \"$numa\" =~ ^[0-9]+$ ]] && [ -r \"/sys/devices/system/node/node$numa/cpulist\" ]; then\n"
    << "    args+=(--cpuset-cpus \"$(cat /sys/devices/system/node/node$numa/cpulist)\" --cpuset-mems \"$numa\")\n"
    << "  fi\n";
  return o.str();
}

std::string volume_dir(const ContainerSettings& s, const ContainerRun& r, const ContainerVolume& v) {
  return v.host_dir.empty() ? s.volume_root + "/" + r.tenant_id + "/" + v.name : v.host_dir;
}

// The tenant's volumes, created empty and owned by the container user on first use; a node volume
// that lives on another node is copied here first, timed, and the copy reported.
std::string script_volumes(const ContainerSettings& s, const ContainerRun& r) {
  std::ostringstream o;
  for (const auto& v : r.volumes) {
    const std::string dir = volume_dir(s, r, v);
    o << "  if [ ! -d " << shell_quote(dir) << " ]; then mkdir -p " << shell_quote(dir) << " && chown " << shell_quote(s.user) << " " << shell_quote(dir)
      << " || { status runtime_error 'cannot create volume " << v.name << "'; return 125; }";
    if (!v.report_file.empty() && v.copy_command.empty()) {
      // A node volume's first folder: it lives here now. One already here is measured beside the
      // start (in the background: a large tree must not delay it), as the end of a run may not be
      // (a batch system that kills the script before it is through).
      const std::string part = shell_quote(v.report_file + ".used.part"), done = shell_quote(v.report_file + ".used");
      o << "; printf 'used %s 0 %s\\n' \"$node\" \"$(date +%s%3N)\" > " << part << " && mv -f " << part << " " << done
        << "; else ( vb=$(timeout 300 du -sb " << shell_quote(dir) << " 2>/dev/null | cut -f1); [ -n \"$vb\" ] && printf 'used %s %s %s\\n' \"$node\" \"$vb\" \"$(date +%s%3N)\" > "
        << part << " && mv -f " << part << " " << done << " ) </dev/null >/dev/null 2>&1 &\n  fi\n";
    } else {
      o << "; fi\n";
    }
    if (!v.copy_command.empty()) {
      o << "  echo " << shell_quote("gpurent: copying volume " + v.name + " from node " + v.copy_from + " to node ") << "\"$node\" >&2\n"
        << "  local c0 c1 cout vb\n"
        << "  c0=$(date +%s%3N)\n"
        << "  if ! cout=$(sh -c " << shell_quote(v.copy_command) << " 2>&1 </dev/null); then\n"
        << "    status volume_copy_failed " << shell_quote(v.name + " from " + v.copy_from + ": ") << "\"$(printf '%s' \"$cout\" | tail -c 300)\"\n"
        << "    echo " << shell_quote("gpurent: volume " + v.name + " could not be copied from node " + v.copy_from + ": ") << "\"$cout\" >&2\n"
        << "    return 125\n"
        << "  fi\n"
        << "  c1=$(date +%s%3N); vb=$(du -sb " << shell_quote(dir) << " 2>/dev/null | cut -f1)\n";
      if (!v.report_file.empty())
        o << "  printf 'copied %s %s %s %s %s\\n' " << shell_quote(v.copy_from) << " \"$node\" \"${vb:-0}\" \"$((c1 - c0))\" \"$c1\" > "
          << shell_quote(v.report_file + ".copied.part") << " && mv -f " << shell_quote(v.report_file + ".copied.part") << " " << shell_quote(v.report_file + ".copied") << "\n";
      o << "  echo \"gpurent: copied volume " << v.name << ": ${vb:-0} bytes in $((c1 - c0)) ms\" >&2\n";
    }
    o << "  args+=(-v " << shell_quote(dir + ":" + v.mount + (v.read_only ? ":ro" : "")) << ")\n";
  }
  return o.str();
}

// After the container: what each reported node volume holds now (bounded: a huge tree is left unmeasured).
std::string script_volume_usage(const ContainerSettings& s, const ContainerRun& r) {
  std::ostringstream o;
  for (const auto& v : r.volumes) {
    if (v.report_file.empty()) continue;
    const std::string part = shell_quote(v.report_file + ".used.part");
    o << "  vb=$(timeout 60 du -sb " << shell_quote(volume_dir(s, r, v)) << " 2>/dev/null | cut -f1)\n"
      << "  [ -n \"$vb\" ] && printf 'used %s %s %s\\n' \"$node\" \"$vb\" \"$(date +%s%3N)\" > " << part << " && mv -f " << part
      << " " << shell_quote(v.report_file + ".used") << "\n";
  }
  return o.str().empty() ? "" : "  local vb\n" + o.str();
}

// The tenant's network (one per tenant, isolated from the others; two jobs may race to create
// it) and the image: on the node, or loaded there from the image store after its SHA-256 is
// checked (a gpurent image).
std::string script_checks(const ContainerSettings& s, const ContainerRun& r) {
  std::ostringstream o;
  o << "  \"${P[@]}\" network exists \"$net\" || \"${P[@]}\" network create --opt isolate=true \"$net\" >/dev/null 2>&1 "
       "|| \"${P[@]}\" network exists \"$net\" || { status runtime_error \"cannot create network $net\"; return 125; }\n"
    << "  if ! \"${P[@]}\" image exists \"$image\"; then\n";
  if (r.image_file.empty()) {
    o << "    status image_missing \"$image\"\n"
      << "    echo \"gpurent: image $image is not on node $node\" >&2\n"
      << "    return 125\n";
  } else {
    const std::string f = shell_quote(r.image_file);
    o << "    local sum loaded\n"
      << "    if ! sum=$(sha256sum < " << f << " 2>/dev/null); then\n"
      << "      status image_unreadable \"$image\"\n"
      << "      echo \"gpurent: image $image is neither on node $node nor readable in the image store\" >&2\n"
      << "      return 125\n"
      << "    fi\n"
      << "    sum=$(printf '%s' \"${sum%% *}\" | tr -cd 0-9a-f)\n"
      << "    if [ \"$sum\" != " << shell_quote(r.image_sha256) << " ]; then\n"
      << "      status image_corrupt \"$image\" \",\\\"expected\\\":\\\"" << r.image_sha256
      << "\\\",\\\"actual\\\":\\\"$sum\\\"\"\n"
      << "      echo \"gpurent: image $image in the image store has SHA-256 $sum, not " << r.image_sha256 << "\" >&2\n"
      << "      return 125\n"
      << "    fi\n";
    // An archive goes in under exactly the job's reference: `podman load` would also apply the
    // tags the archive carries, letting a tenant's archive take another image's name on the node.
    if (r.image_format == "rootfs-tar")
      o << "    if ! loaded=$(\"${P[@]}\" import -q " << f << " \"$image\" 2>&1); then\n";
    else
      o << "    if ! loaded=$(" << shell_quote(s.skopeo) << " copy --quiet " << shell_quote(r.image_format + ":" + r.image_file)
        << " \"containers-storage:$image\" 2>&1); then\n";
    o << "      status image_corrupt \"$image: $(printf '%s' \"$loaded\" | tail -c 300)\"\n"
      << "      echo \"gpurent: image $image could not be loaded on node $node: $loaded\" >&2\n"
      << "      return 125\n"
      << "    fi\n";
  }
  o << "  fi\n"
    // Whatever name the job used (a tag, an id, another spelling), an image whose every tag is
    // another tenant's (localhost/gpurent/<tenant id>/) runs only for that tenant. One tag that is
    // public, the job's tenant's, or outside gpurent's tenant scopes (put there by the node's
    // operator) makes it usable: the same bytes are then reachable anyway, and a tenant who loads
    // the bytes of a node's base image must not lock other tenants out of it.
    << "  local t usable=0 tagged=0\n"
    << "  case \"$image\" in\n"
    << "    localhost/gpurent/public/*|localhost/gpurent/" << r.tenant_id << "/*) ;;\n"
    << "    localhost/gpurent/*/*) tagged=1 ;;\n"  // another tenant's reference: refused whatever else tags it
    << "    *) for t in $(\"${P[@]}\" image inspect --format '{{range .RepoTags}}{{.}} {{end}}' \"$image\" 2>/dev/null); do\n"
    << "         tagged=1\n"
    << "         case \"$t\" in\n"
    << "           localhost/gpurent/public/*|localhost/gpurent/" << r.tenant_id << "/*) usable=1 ;;\n"
    << "           localhost/gpurent/*/*) ;;\n"
    << "           *) usable=1 ;;\n"
    << "         esac\n"
    << "       done ;;\n"
    << "  esac\n"
    << "  if [ \"$tagged\" = 1 ] && [ \"$usable\" = 0 ]; then\n"
    << "    status image_not_yours \"$image\"\n"
    << "    echo \"gpurent: image $image on node $node is another tenant's\" >&2\n"
    << "    return 125\n"
    << "  fi\n"
    << "  \"${P[@]}\" rm -f \"$name\" >/dev/null 2>&1\n";
  return o.str();
}

// Artifacts: each content file must be there and hash to the job's digest (checked here, on the
// node, before anything starts: a file changed in the store after its upload stops the run), then
// it is mounted read-only.
std::string script_artifacts(const ContainerRun& r) {
  std::ostringstream o;
  if (!r.artifacts.empty()) o << "  local got\n";
  for (const ContainerArtifact& a : r.artifacts) {
    o << "  if ! got=$(sha256sum < " << shell_quote(a.host_file) << " 2>/dev/null); then\n"
      << "    status artifact_missing " << shell_quote(a.name) << "\n"
      << "    echo " << shell_quote("gpurent: artifact " + a.name + " is not readable at " + a.host_file + " on node ") << "\"$node\" >&2\n"
      << "    return 125\n"
      << "  fi\n"
      << "  got=$(printf '%s' \"${got%% *}\" | tr -cd 0-9a-f)\n"
      << "  if [ \"$got\" != " << shell_quote(a.sha256) << " ]; then\n"
      << "    status artifact_mismatch " << shell_quote(a.name) << " \",\\\"expected\\\":\\\"" << a.sha256
      << "\\\",\\\"actual\\\":\\\"$got\\\"\"\n"
      << "    echo " << shell_quote("gpurent: artifact " + a.name + " has SHA-256 ") << "\"$got\"" << shell_quote(", not " + a.sha256 + ": the container was not started")
      << " >&2\n"
      << "    return 125\n"
      << "  fi\n"
      << "  args+=(-v " << shell_quote(a.host_file + ":" + a.mount + ":ro") << ")\n";
  }
  return o.str();
}

// Secrets: each file becomes a Podman secret for this container (gpurent-<job>-<node>-<i>),
// given as a variable (type=env) or a read-only file owned by the container user (type=mount).
// The value goes from the file to Podman's secret store and into the container: never through
// the environment of Podman itself (a variable named LD_PRELOAD would run code as root), a
// command line or this script. Removed with the container (script_run).
std::string script_secrets(const ContainerSettings& s, const ContainerRun& r) {
  const std::string uid = s.user.substr(0, s.user.find(':')), gid = s.user.substr(s.user.find(':') + 1);
  std::ostringstream o;
  o << "  local -a secret_ids=()\n";
  for (size_t i = 0; i < r.secrets.size(); ++i) {
    const ContainerSecret& sec = r.secrets[i];
    o << "  local sid" << i << "=\"$name-" << i << "\"\n"
      << "  \"${P[@]}\" secret rm \"$sid" << i << "\" >/dev/null 2>&1\n"
      << "  \"${P[@]}\" secret create \"$sid" << i << "\" " << shell_quote(sec.host_file)
      << " >/dev/null || { status runtime_error 'cannot create a secret'; return 125; }\n"
      << "  secret_ids+=(\"$sid" << i << "\")\n";
    if (!sec.env.empty()) o << "  args+=(--secret \"$sid" << i << "\"" << shell_quote(",type=env,target=" + sec.env) << ")\n";
    if (!sec.file.empty())
      o << "  args+=(--secret \"$sid" << i << "\""
        << shell_quote(",type=mount,target=" + sec.file + ",uid=" + uid + ",gid=" + gid + ",mode=0400") << ")\n";
  }
  return o.str();
}

// Readiness by heartbeat: a private folder of the node, owned by the container user, mounted at
// /run/gpurent; the workload creates $GPURENT_READY_FILE in it.
std::string script_heartbeat(const ContainerSettings& s, const ContainerRun& r) {
  if (r.ready_file.empty() || !r.ready_heartbeat) return "";
  std::ostringstream o;
  o << "  local beat\n"
    << "  beat=$(mktemp -d /tmp/gpurent-ready.XXXXXX) && chown " << shell_quote(s.user) << " \"$beat\" && chmod 700 \"$beat\" "
       "|| { status runtime_error 'cannot create the readiness folder'; return 125; }\n"
    << "  args+=(-v \"$beat:/run/gpurent\" -e GPURENT_READY_FILE=/run/gpurent/ready)\n";
  return o.str();
}

// Readiness: checks in the background while the container runs; the first success writes the
// node's time (epoch ms) to the ready file, through a rename so that it is never read half-written.
std::string script_watch(const ContainerRun& r) {
  if (r.ready_file.empty() || (r.ready_command.empty() && !r.ready_heartbeat)) return "";
  const int64_t every = std::max<int64_t>(1, r.ready_interval_s);
  std::ostringstream o;
  o << "  local ready_file=" << status_path_word(r.ready_file) << "\".$node\"\n"
    << "  rm -f \"$ready_file\"\n"
    << "  ( while kill -0 \"$pid\" 2>/dev/null; do\n";
  if (r.ready_heartbeat)
    o << "      if [ -e \"$beat/ready\" ]; then\n";
  else
    o << "      if timeout -k 2 " << std::max<int64_t>(10, every) << " \"${P[@]}\" exec \"$name\" " << words(r.ready_command)
      << " </dev/null >/dev/null 2>&1; then\n";
  o << "        date +%s%3N > \"$ready_file.tmp\" && mv -f \"$ready_file.tmp\" \"$ready_file\"; exit 0\n"
    << "      fi\n"
    << "      sleep " << every << "\n"
    << "    done ) &\n"
    << "  watcher=$!\n";
  return o.str();
}

// An egress freeze: the container leaves its network while the project's freeze file exists, and
// rejoins it (with a new address) once the file is gone.
std::string script_freeze(const ContainerRun& r) {
  if (r.freeze_file.empty()) return "";
  std::ostringstream o;
  o << "  ( cut=0\n"
    << "    while kill -0 \"$pid\" 2>/dev/null; do\n"
    << "      if [ -e " << shell_quote(r.freeze_file) << " ]; then\n"
    << "        if [ \"$cut\" = 0 ] && \"${P[@]}\" network disconnect \"$net\" \"$name\" >/dev/null 2>&1; then\n"
    << "          cut=1; echo \"gpurent: the project's egress is frozen: the container's network is cut\" >&2\n"
    << "        fi\n"
    << "      elif [ \"$cut\" = 1 ] && \"${P[@]}\" network connect \"$net\" \"$name\" >/dev/null 2>&1; then\n"
    << "        cut=0; echo \"gpurent: the egress freeze was lifted: the container's network is back\" >&2\n"
    << "      fi\n"
    << "      sleep 2\n"
    << "    done ) &\n"
    << "  netwatch=$!\n";
  return o.str();
}

// Saving the container as an image when the server asks (ContainerRun::save_request): the
// commit keeps the image's own CMD, none when it had none (the run's command is the instance's
// entry, which Podman would record), leaves the volumes and tmpfs out (not in the writable layer), and is written
// through a ".part" file and a rename, so the server never reads half an archive or half a line.
std::string script_save(const ContainerRun& r) {
  if (r.save_request.empty() || r.save_dir.empty() || r.nodes > 1) return "";
  const std::string req = shell_quote(r.save_request), dir = shell_quote(r.save_dir);
  std::ostringstream o;
  o << "  ( while kill -0 \"$pid\" 2>/dev/null; do\n"
    << "      if [ -e " << req << " ]; then\n"
    << "        sid=$(head -c 80 " << req << " | tr -cd 'a-z0-9_')\n"
    << "        if ! [[ \"$sid\" =~ ^img_[a-z0-9]{1,64}$ ]]; then rm -f " << req << "\n"
    << "        elif mv -f " << req << " " << dir << "/\"$sid.save.taken\"; then\n"
    << "          out=" << dir << "/$sid.save.tar; fin=" << dir << "/$sid.save.done\n"
    << "          tag=" << shell_quote("localhost/gpurent/" + r.tenant_id + "/saving-") << "\"${sid#img_}:tmp\"\n"
    << "          echo \"gpurent: saving the container as image $sid\" >&2\n"
    << "          cmd=$(\"${P[@]}\" image inspect --format '{{json .Config.Cmd}}' \"$image\" 2>/dev/null)\n"
    << "          change=(--change 'CMD []'); [ -n \"$cmd\" ] && [ \"$cmd\" != null ] && change=(--change \"CMD "
       "$cmd\")\n"
    << "          if err=$(\"${P[@]}\" commit -q \"${change[@]}\" \"$name\" \"$tag\" 2>&1 >/dev/null) &&\n"
    << "             err=$(\"${P[@]}\" save -q --format docker-archive -o \"$out.part\" \"$tag\" 2>&1) &&\n"
    << "             sum=$(sha256sum < \"$out.part\") && size=$(stat -c %s \"$out.part\") && mv -f \"$out.part\" "
       "\"$out\"; then\n"
    << "            printf 'ok %s %s\\n' \"${sum%% *}\" \"$size\" > \"$fin.part\"\n"
    << "            echo \"gpurent: saved the container as image $sid ($size bytes)\" >&2\n"
    << "          else\n"
    << "            rm -f \"$out.part\"\n"
    << "            printf 'error %s\\n' \"$(printf '%s' \"$err\" | tr '\\000-\\037' ' ' | tail -c 300)\" > "
       "\"$fin.part\"\n"
    << "            echo \"gpurent: the container could not be saved as image $sid: $err\" >&2\n"
    << "          fi\n"
    << "          mv -f \"$fin.part\" \"$fin\"\n"
    // rmi of the tag removes the committed image (or only the tag, were the image tagged
    // otherwise too); `untag` first would strip every name and leave the image behind, unnamed.
    << "          \"${P[@]}\" rmi \"$tag\" >/dev/null 2>&1\n"
    << "        fi\n"
    << "      fi\n"
    << "      sleep 2\n"
    << "    done ) &\n"
    << "  savewatch=$!\n";
  return o.str();
}

// Waits (every 0.5 s, up to ContainerRun::port_wait_s) until nothing listens on each published
// port: a connection that opens (within 2 s) means an earlier run's forwarder still holds it. A
// cancel while it waits ends the script before the container starts.
std::string script_port_wait(const ContainerRun& r) {
  if (r.ports.empty()) return "";
  const int64_t wait_s = std::max<int64_t>(0, r.port_wait_s);
  std::ostringstream o;
  o << "  local hp tries\n"
    << "  for hp in";
  for (const ContainerPort& p : r.ports) o << " " << shell_quote(p.host_ip + "/" + std::to_string(p.host_port));
  o << "; do\n"
    << "    tries=0\n"
    << "    while [ \"$stopping\" = 0 ] && timeout 2 bash -c 'exec 3<>\"/dev/tcp/$1\"' _ \"$hp\" 2>/dev/null; do\n"
    << "      if [ \"$tries\" -ge " << wait_s * 2 << " ]; then\n"
    << "        echo \"gpurent: port ${hp#*/} is still in use after " << wait_s
    << " s; starting the container anyway\" >&2; break\n"
    << "      fi\n"
    << "      [ \"$tries\" = 0 ] && echo \"gpurent: waiting for port ${hp#*/} to be let go (an earlier run held it)\" >&2\n"
    << "      tries=$((tries + 1)); sleep 0.5\n"
    << "    done\n"
    << "  done\n"
    << "  [ \"$stopping\" = 0 ] || { " << (r.ready_file.empty() || !r.ready_heartbeat ? "" : "rm -rf \"$beat\"; ")
    << "return 143; }\n";
  return o.str();
}

// Runs the container, stops it on SIGTERM, waits, cleans up and says why it failed.
std::string script_run(const ContainerSettings& s, const ContainerRun& r) {
  std::ostringstream o;
  o << "  local stopping=0 rc pid oom watcher='' netwatch='' savewatch=''\n"
    // On SIGTERM (a cancel, a time limit) the secrets go first: Slurm kills what is left of the
    // job KillWait seconds later, and the container already holds its copy.
    // Once: a second signal while the container stops (a cancel asked again) changes nothing.
    << "  trap '[ \"$stopping\" = 1 ] || { stopping=1; for d in \"${secret_ids[@]}\"; do \"${P[@]}\" secret rm \"$d\" "
       ">/dev/null 2>&1; done; \"${P[@]}\" stop -t "
    << s.stop_timeout_s << " \"$name\" >/dev/null 2>&1; }' TERM INT\n"
    << script_port_wait(r) << "  \"${P[@]}\" run " << run_flags(s, r) << " \"${args[@]}\" \"$image\""
    << (r.command.empty() ? "" : " ") << words(r.command) << " </dev/null &\n"
    << "  pid=$!\n"
    << script_watch(r) << script_freeze(r) << script_save(r)
    << "  wait \"$pid\"; rc=$?\n"
    // A trapped signal interrupts wait. Once stopping, the stop is sent again until the container
    // has gone: one sent before `podman run` had created it found nothing to stop, and the
    // container would run on (outside the job: conmon keeps it) on GPUs given to someone else.
    << "  while kill -0 \"$pid\" 2>/dev/null; do\n"
    << "    if [ \"$stopping\" = 1 ]; then\n"
    << "      \"${P[@]}\" stop -t " << s.stop_timeout_s << " \"$name\" >/dev/null 2>&1\n"
    << "      kill -0 \"$pid\" 2>/dev/null && sleep 1\n"
    << "      kill -0 \"$pid\" 2>/dev/null || { wait \"$pid\"; rc=$?; }\n"
    << "    else\n"
    << "      wait \"$pid\"; rc=$?\n"
    << "    fi\n"
    << "  done\n"
    << "  [ -n \"$watcher\" ] && { kill \"$watcher\" 2>/dev/null; wait \"$watcher\" 2>/dev/null; }\n"
    << "  [ -n \"$netwatch\" ] && { kill \"$netwatch\" 2>/dev/null; wait \"$netwatch\" 2>/dev/null; }\n"
    << "  [ -n \"$savewatch\" ] && { kill \"$savewatch\" 2>/dev/null; wait \"$savewatch\" 2>/dev/null; }\n"
    // Stopping, the removal comes right after `podman run` has returned, without the OOM check:
    // Slurm kills the script KillWait seconds after its SIGTERM, and on a loaded node each Podman
    // call takes a second or more (an exited container was left behind, its instance already
    // reading stopped). Whether memory killed it matters only when nobody stopped it.
    << "  oom=''\n"
    << "  [ \"$stopping\" = 1 ] || oom=$(\"${P[@]}\" inspect --format '{{.State.OOMKilled}}' \"$name\" 2>/dev/null)\n"
    << "  \"${P[@]}\" rm -f \"$name\" >/dev/null 2>&1\n"
    << script_volume_usage(s, r)
    << "  for d in \"${secret_ids[@]}\"; do \"${P[@]}\" secret rm \"$d\" >/dev/null 2>&1; done\n"
    << (r.ready_file.empty() || !r.ready_heartbeat ? "" : "  rm -rf \"$beat\"\n")
    << "  if [ \"$rc\" -ge 125 ] && [ \"$rc\" -le 127 ]; then\n"
    << "    status runtime_error \"podman exit $rc\"\n";
  if (r.memory_gib)
    o << "  elif [ \"$oom\" = true ] || { [ \"$rc\" = 137 ] && [ \"$stopping\" = 0 ]; }; then\n"
      << "    status oom \"exit $rc\" \",\\\"memory_gib\\\":" << *r.memory_gib
      << ",\\\"oom_reported\\\":$([ \"$oom\" = true ] && echo true || echo false)\"\n";
  o << "  fi\n"
    << "  return \"$rc\"\n"
    << "}\n";
  return o.str();
}

}  // namespace

// A gang's worker runs on every node through srun, as bash code in arguments: in pieces of 30,000
// characters (at most 120 KB in UTF-8), since Linux holds one argument to 128 KiB and the function
// with a job's quoted env and command (64 KiB each, a quote four bytes quoted) may pass it. The
// pieces are joined without separators, then run with the shell's usual word splitting.
constexpr const char* kGangLaunch =
    "gpurent_w=\"$(declare -f gpurent_worker); gpurent_worker\"\n"
    "gpurent_parts=()\n"
    "while [ -n \"$gpurent_w\" ]; do gpurent_parts+=(\"${gpurent_w:0:30000}\"); gpurent_w=\"${gpurent_w:30000}\"; "
    "done\n"
    "srun --ntasks-per-node=1 --kill-on-bad-exit=1 bash -c 'IFS=; w=\"$*\"; unset IFS; eval \"$w\"' gpurent-worker "
    "\"${gpurent_parts[@]}\"\n";

std::string container_script(const ContainerSettings& s, const ContainerRun& r) {
  return script_head(s, r) + script_gpus(s) + script_numa(r) + script_volumes(s, r) + script_checks(s, r) +
         script_artifacts(r) + script_secrets(s, r) + script_heartbeat(s, r) + script_run(s, r) +
         (r.nodes > 1 ? kGangLaunch : "gpurent_worker\n");
}

std::optional<ContainerStatus> read_container_status(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line) || line.size() > 4096) return std::nullopt;
  // Its detail is a tool's output cut at a byte count on the node: a split character must not
  // lose the reason.
  const auto j = nlohmann::json::parse(valid_utf8(line), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("reason") || !j["reason"].is_string()) return std::nullopt;
  ContainerStatus st;
  st.reason = j["reason"].get<std::string>();
  if (j.contains("detail") && j["detail"].is_string()) st.detail = j["detail"].get<std::string>();
  if (j.contains("expected") && j["expected"].is_string()) st.expected = j["expected"].get<std::string>();
  if (j.contains("actual") && j["actual"].is_string()) st.actual = j["actual"].get<std::string>();
  if (j.contains("node") && j["node"].is_string()) st.node = j["node"].get<std::string>();
  if (j.contains("memory_gib") && j["memory_gib"].is_number_integer()) st.memory_gib = j["memory_gib"].get<int64_t>();
  if (j.contains("oom_reported") && j["oom_reported"].is_boolean()) st.oom_reported = j["oom_reported"].get<bool>();
  return st;
}

std::string ready_file_for(const std::string& ready_file, const std::string& run_id, const std::string& node) {
  std::string path = ready_file;
  for (size_t at; (at = path.find("%j")) != std::string::npos;) path.replace(at, 2, run_id);
  return path + "." + node;
}

std::optional<int64_t> read_ready_file(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line) || line.empty() || line.size() > 15 ||
      line.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  const int64_t ms = std::stoll(line);
  if (ms < 1'000'000'000'000LL) return std::nullopt;  // before 2001: not the epoch in milliseconds
  return ms;
}

std::optional<VolumeReport> read_volume_report(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line) || line.size() > 512) return std::nullopt;
  std::istringstream words(line);
  std::string kind, extra;
  VolumeReport r;
  auto number = [](const std::string& w, int64_t& out) {
    if (w.empty() || w.size() > 18 || w.find_first_not_of("0123456789") != std::string::npos) return false;
    out = std::stoll(w);
    return true;
  };
  std::string bytes, ms, at;
  if (!(words >> kind)) return std::nullopt;
  if (kind == "copied") {
    if (!(words >> r.from >> r.node >> bytes >> ms >> at) || !number(ms, r.ms)) return std::nullopt;
    r.copied = true;
  } else if (kind == "used") {
    if (!(words >> r.node >> bytes >> at)) return std::nullopt;
  } else {
    return std::nullopt;
  }
  if ((words >> extra) || !number(bytes, r.bytes) || !number(at, r.at)) return std::nullopt;
  return r;
}

std::string save_archive_for(const std::string& save_dir, const std::string& image_id) {
  return save_dir + "/" + image_id + ".save.tar";
}
std::string save_done_for(const std::string& save_dir, const std::string& image_id) {
  return save_dir + "/" + image_id + ".save.done";
}

std::optional<SaveDone> read_save_done(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line) || line.size() > 1024) return std::nullopt;
  SaveDone d;
  if (line.rfind("error ", 0) == 0 || line == "error") {
    // podman's words cut at 300 bytes on the node: a character may be split.
    d.error = line.size() > 6 ? valid_utf8(std::string_view(line).substr(6)) : "podman said nothing";
    if (d.error.empty()) d.error = "podman said nothing";
    return d;
  }
  std::istringstream words(line);
  std::string ok, sum, size, extra;
  if (!(words >> ok >> sum >> size) || (words >> extra) || ok != "ok" || sum.size() != 64 ||
      sum.find_first_not_of("0123456789abcdef") != std::string::npos || size.empty() || size.size() > 18 ||
      size.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  d.ok = true;
  d.sha256 = sum;
  d.bytes = std::stoll(size);
  return d;
}

std::string log_excerpt(const std::string& path, int lines, size_t max_bytes) {
  const std::string raw = tail_lines(path, lines, 16 * 1024);
  std::string out;
  for (size_t i = 0; i < raw.size();) {
    const auto c = static_cast<unsigned char>(raw[i]);
    if (c == '\n') {
      out += " | ";
      ++i;
    } else if (c < 0x20 || c == 0x7f) {
      out += ' ';
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else {
      // A well-formed multi-byte sequence is kept whole; anything else becomes '?'.
      const size_t n = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
      bool ok = n > 0 && i + n <= raw.size();
      for (size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(raw[i + k]) & 0xc0) == 0x80;
      if (ok && n == 3) {
        const auto c1 = static_cast<unsigned char>(raw[i + 1]);
        ok = !(c == 0xe0 && c1 < 0xa0) && !(c == 0xed && c1 >= 0xa0);  // overlong, surrogates
      }
      if (ok && n == 4) {
        const auto c1 = static_cast<unsigned char>(raw[i + 1]);
        ok = !(c == 0xf0 && c1 < 0x90) && !(c == 0xf4 && c1 >= 0x90);
      }
      out += ok ? raw.substr(i, n) : "?";
      i += ok ? n : 1;
    }
  }
  if (out.size() <= max_bytes) return out;
  size_t from = out.size() - max_bytes;
  while (from < out.size() && (static_cast<unsigned char>(out[from]) & 0xc0) == 0x80) ++from;
  return "…" + out.substr(from);
}

std::string tail_lines(const std::string& path, int lines, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in || lines <= 0) return "";
  const std::streamoff size = in.tellg();
  const std::streamoff from = size > static_cast<std::streamoff>(max_bytes) ? size - max_bytes : 0;
  in.seekg(from);
  std::string text(static_cast<size_t>(size - from), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  while (!text.empty() && text.back() == '\n') text.pop_back();
  size_t cut = text.size();
  for (int n = 0; n < lines && cut != std::string::npos; ++n) cut = cut == 0 ? std::string::npos : text.rfind('\n', cut - 1);
  return cut == std::string::npos ? text : text.substr(cut + 1);
}

}  // namespace gpurent
