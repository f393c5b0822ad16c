#include "sim/alibaba_replay.h"

namespace gpurent {

Result<ReplayInput> alibaba_replay_input(const std::vector<TraceNode>& nodes, const std::vector<TracePod>& pods,
                                         double speedup) {
  if (!(speedup > 0) || speedup > 1e6) return Error::invalid("speedup", "must be in (0, 1000000]");
  ReplayInput in;
  for (const auto& n : nodes) {
    // The live engine counts a node's CPUs in cores and memory in GiB: a remainder would be lost
    // (the pods' requests stay exact), and the replay would place fewer pods than `simulate alloc`.
    if (n.cpu_milli % 1000 != 0 || n.memory_mib % 1024 != 0)
      return Error::invalid("nodes", "node " + n.name + ": cpu_milli must be whole cores (x1000) and memory_mib whole GiB (x1024)");
    SchedNode s;
    s.id = n.name;
    s.gpu_model = n.gpus ? n.model : "";
    s.cpu_cores = n.cpu_milli / 1000;
    s.memory_gib = n.memory_mib / 1024;
    s.gpu_domains.assign(n.gpus, "");
    in.nodes.push_back(std::move(s));
  }
  SchedProject p;
  p.id = p.name = p.tenant = "alibaba";
  p.quota.gpus_per_model[kAnyGpuModel] = kMaxQuotaGpus;
  in.projects.push_back(p);
  for (const auto& pod : pods) {
    // Times in seconds; beyond 10^10 s (three centuries) milliseconds would overflow later sums.
    constexpr int64_t kMaxTraceSeconds = 10'000'000'000;
    if (pod.created_s < 0 || pod.deleted_s < 0)
      return Error::invalid("pods", "pod " + pod.name + ": needs creation_time and deletion_time to be replayed");
    if (pod.deleted_s < pod.created_s)
      return Error::invalid("pods", "pod " + pod.name + ": deletion_time is before creation_time");
    if (pod.deleted_s > kMaxTraceSeconds)
      return Error::invalid("pods", "pod " + pod.name + ": times above 10^10 seconds");
    ReplayJob r;
    SchedJob& j = r.job;
    j.id = pod.name;
    j.tenant = j.project = "alibaba";
    j.kind = pod.pod.is_share() ? JobKind::kInference : JobKind::kTraining;
    j.priority = PriorityClass::kNormal;  // one class: the trace's order decides, not our defaults
    j.cpu_milli = pod.pod.cpu_milli;
    j.memory_mib = pod.pod.memory_mib;
    if (pod.pod.num_gpu > 0 && pod.pod.gpu_milli > 0) {
      if (pod.pod.is_share()) j.gpu_milli = pod.pod.gpu_milli;
      else j.gpus_per_worker = pod.pod.num_gpu;
    }
    if (!pod.pod.gpu_spec.empty()) {
      const std::string& spec = pod.pod.gpu_spec;
      for (size_t a = 0, b; a <= spec.size(); a = b + 1) {
        b = spec.find('|', a);
        if (b == std::string::npos) b = spec.size();
        if (b > a) j.gpu_models.push_back(spec.substr(a, b - a));
      }
    }
    const double at = static_cast<double>(pod.created_s) * 1000.0 / speedup;
    if (!(at < 9.0e18))  // a tiny speedup stretches it past the clock
      return Error::invalid("speedup",
                            "pod " + pod.name + ": its creation time at this speedup is past the replay's clock");
    j.submitted_at = static_cast<TimeMs>(at);
    r.duration_ms = std::max<int64_t>(1, (pod.deleted_s - pod.created_s) * 1000);
    j.expected_duration_ms = j.time_limit_ms = r.duration_ms;  // exact estimates, as in philly.cc
    in.jobs.push_back(std::move(r));
  }
  return in;
}

}  // namespace gpurent
