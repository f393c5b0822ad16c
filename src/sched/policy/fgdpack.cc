// FgdPack (version 4): FGD (protocol §5) made aware of model-locked demand, with packing
// tie-breaks only where they cannot spend a scarce GPU model.
//
// Primary key: FGD's integer floor(100*sigmoid(x)) with x = dFrag/1000 - penalty. FGD's score is
// coarse on purpose here: ranking nodes by the exact dFrag loses about one point of allocation on
// the five traces, because the many ties, broken by the fixed node priority, act as first-fit
// packing. The penalty steers whole-GPU pods (g = 1000, any k) away from GPU models that
// spec-locked pods need: prepare() computes each model's pressure
//   P(m) = (sum of k*g over the workload's GPU pods whose gpu_spec names m) / (GPU milli of m),
// a pod naming several models counting in full for each, and the penalty is
//   kLambda * (P(m) - min over the cluster's models of P) * k*g / 1000.
// Without gpu_spec in the workload every P is 0 and the key is FGD's. Share pods (g < 1000) and
// CPU-only pods take no penalty.
//
// Tie-break (0..kSpan-1, higher wins; before the node priority), for three pod classes:
//   - CPU-only pods: nodes with less free GPU (their CPU is then taken where no GPU pod can use
//     it), in steps of 25 milli-GPU;
//   - multi-GPU pods: nodes left with less CPU per free GPU (keeps CPU-rich nodes for the
//     single-GPU pods that need the CPU), 10 levels of 8 cores per free GPU.
//   - share pods, only on CPU-bound workloads without model pressure (prepare(): every P(m) equal,
//     and CPU-only pods carry >= kCpuOnlyShare of the workload's CPU demand): nodes with a GPU in
//     use (tie 1), so that shares stack on nodes already opened and the untouched nodes keep
//     their CPU together with whole GPUs for the GPU pods that need both.
// Otherwise share pods and single whole-GPU pods keep FGD's order (tie 0). Version 2 also sent GPU pods to
// nodes with a GPU in use and share pods to nodes with fewer whole free GPUs; both keys favour the
// small nodes of the small models, so on model-locked or share-dominated workloads they spent
// the capacity that locked pods need (docs/benchmarks.md, fgdpack).
// score = primary * kSpan + tie. The GPUs inside the node are FGD's choice.
//
// FgdPackOptions (policies.h) give the variants that fgdauto (policy/fgdauto.cc) chooses among:
// the primary key's scale (floor(scale*sigmoid(x)); 100 is FGD's, smaller makes more ties and so
// more first-fit packing by node priority; clamped to 1..100), the CPU-only key on or off, the
// share key as above, off, or its "GPU in use" test on every workload, and a key for whole-GPU
// pods (a node with a GPU in use, or fewer fully free GPUs left) added as 10 * level to their tie.
// The defaults are version 4.
// Depends only on the pod's shape and the node's free CPU, model and free GPU (score_policy.h).
//
// Fragmentation is evaluated exactly as node_fragmentation_scaled(), but with the target's task
// types grouped by (g, k, spec) in prepare() and filed under the models they may use: per node
// state the GPUs are sorted once and swept across the distinct g, and a group's CPU thresholds are
// counted by binary search.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <tuple>

#include "sched/fragmentation.h"
#include "sched/policy/policies.h"

namespace gpurent {
namespace {

constexpr int kFreeStep = 25;                 // milli-GPU per tie level for CPU-only pods
constexpr int kSpan = kGmax / kFreeStep + 1;  // 321 tie levels
constexpr int kPackLevels = 10;               // multi-GPU pod key, 0..9
constexpr int64_t kCpuPerGpuStep = 8000;      // milli-CPU per free GPU per level (multi-GPU pods)
constexpr double kLambda = 0.03;              // sigmoid-argument penalty per GPU per unit pressure
constexpr int kMaxModels = 64;                // AllocCluster interns at most 64 models
constexpr double kCpuOnlyShare = 0.30;        // CPU-only share of CPU demand that turns the share key on

// The target workload's task types with equal (g, k, spec): F_n(t) differs between them only by
// the CPU test, so one GPU scan serves the group.
struct TaskGroup {
  int g_index = 0;                // into FgdPackPolicy::gpu_milli_ (the group's g)
  int32_t num_gpu = 0;
  std::vector<int64_t> cpu;       // CPU thresholds, ascending
  std::vector<int64_t> cum;       // cum[i] = sum of the counts of types cpu[0..i]
};

class FgdPackPolicy final : public ScorePolicy {
 public:
  explicit FgdPackPolicy(const FgdPackOptions& o) : opt_(o) { opt_.scale = std::clamp(opt_.scale, 1, 100); }
  std::string_view name() const override { return "fgdpack"; }
  void prepare(const AllocCluster& cluster, const std::vector<AllocPod>& workload) override {
    const TargetWorkload target = typical_tasks(workload, cluster);
    total_ = target.total;
    group_tasks(target);
    excess_ = model_excess_pressure(cluster, workload);
    share_in_use_ = opt_.share_key && std::all_of(excess_.begin(), excess_.end(), [](double e) { return e == 0.0; }) &&
                    cpu_bound(workload);
  }
  int max_score() const override { return opt_.scale * kSpan + kSpan - 1; }
  int score(const AllocCluster& c, int node, const AllocPod& p) const override {
    int tie = p.num_gpu == 0 && !opt_.cpu_only_key ? 0 : packing_tie(c.node(node), p, share_in_use_);
    if (opt_.share_key_always && p.is_share()) tie = in_use(c.node(node)) ? 1 : 0;
    if (opt_.whole_key != 0 && p.num_gpu > 0 && !p.is_share()) tie += kPackLevels * whole_level(c.node(node), p);
    return fgd_score(c.node(node), p).first * kSpan + tie;
  }
  std::vector<int> choose_gpus(const AllocCluster& c, int node, const AllocPod& p, SimRng&) const override {
    if (!p.is_share()) return pick_gpus_best_fit(c.node(node), p);
    return {fgd_score(c.node(node), p).second};
  }

 private:
  // Groups the target's GPU task types and files each group under the model ids it may use
  // (slot kMaxModels: nodes without a model); a group's types that may not use a model count all
  // free GPU milli there, like CPU-only types.
  void group_tasks(const TargetWorkload& w) {
    std::map<std::tuple<int32_t, int32_t, uint64_t>, std::vector<std::pair<int64_t, int64_t>>> by_key;
    int64_t cpu_only = 0;
    for (const auto& t : w.types) {
      if (t.num_gpu == 0) cpu_only += t.count;  // every idle GPU is fragment for them
      else by_key[{t.gpu_milli, t.num_gpu, t.spec_mask}].emplace_back(t.cpu_milli, t.count);
    }
    gpu_milli_.clear();
    for (const auto& [key, types] : by_key) gpu_milli_.push_back(std::get<0>(key));
    gpu_milli_.erase(std::unique(gpu_milli_.begin(), gpu_milli_.end()), gpu_milli_.end());  // map order: sorted
    groups_.assign(kMaxModels + 1, {});
    always_all_.assign(kMaxModels + 1, cpu_only);
    for (auto& [key, types] : by_key) {
      std::sort(types.begin(), types.end());
      const auto [g, k, mask] = key;
      TaskGroup gr{static_cast<int>(std::lower_bound(gpu_milli_.begin(), gpu_milli_.end(), g) - gpu_milli_.begin()), k,
                   {}, {}};
      int64_t sum = 0;
      for (const auto& [cpu, count] : types) gr.cpu.push_back(cpu), gr.cum.push_back(sum += count);
      for (int m = 0; m <= kMaxModels; ++m) {
        const bool allowed = mask == 0 || (m < kMaxModels && (mask >> m & 1));
        if (allowed) groups_[m].push_back(gr);
        else always_all_[m] += sum;
      }
    }
  }
  // total * Frag(n), equal to node_fragmentation_scaled(target, ...).
  int64_t frag(int64_t cpu_free, int model_id, const std::vector<int32_t>& gpu_free) const {
    const int slot = model_id >= 0 && model_id < kMaxModels ? model_id : kMaxModels;
    // The GPUs' free milli sorted descending with prefix sums: for each distinct g (descending),
    // the GPUs with free >= g are a growing prefix, and the others hold the total minus its sum.
    const size_t gpus = gpu_free.size();
    sorted_.assign(gpu_free.begin(), gpu_free.end());
    std::sort(sorted_.begin(), sorted_.end(), std::greater<>());
    prefix_.resize(gpus + 1);
    prefix_[0] = 0;
    for (size_t i = 0; i < gpus; ++i) prefix_[i + 1] = prefix_[i] + sorted_[i];
    const int64_t all = prefix_[gpus];
    fit_.resize(gpu_milli_.size());
    small_.resize(gpu_milli_.size());
    size_t fit = 0;
    for (size_t i = gpu_milli_.size(); i-- > 0;) {  // gpu_milli_ ascends
      while (fit < gpus && sorted_[fit] >= gpu_milli_[i]) ++fit;
      fit_[i] = static_cast<int>(fit), small_[i] = all - prefix_[fit];
    }
    int64_t s = always_all_[slot] * all;
    for (const auto& gr : groups_[slot]) {
      const int64_t n = gr.cum.back();
      const auto fits = std::upper_bound(gr.cpu.begin(), gr.cpu.end(), cpu_free) - gr.cpu.begin();
      const int64_t with_cpu = fits == 0 ? 0 : gr.cum[fits - 1];
      s += with_cpu * (fit_[gr.g_index] >= gr.num_gpu ? small_[gr.g_index] : all) + (n - with_cpu) * all;
    }
    return s;
  }
  // P(m) - min P over the cluster's models, indexed by model id (0 for models with no GPUs).
  static std::vector<double> model_excess_pressure(const AllocCluster& c, const std::vector<AllocPod>& pods) {
    std::vector<double> cap(kMaxModels, 0.0), named(kMaxModels, 0.0), excess(kMaxModels, 0.0);
    for (const auto& n : c.nodes())
      if (n.model_id >= 0) cap[n.model_id] += static_cast<double>(n.gpu_free.size()) * kGpuMilli;
    for (const auto& p : pods) {
      if (p.num_gpu == 0 || p.gpu_spec.empty()) continue;
      const uint64_t mask = c.spec_mask(p.gpu_spec);
      for (int m = 0; m < kMaxModels; ++m)
        if (mask >> m & 1) named[m] += static_cast<double>(p.gpu_demand());
    }
    double lowest = HUGE_VAL;
    for (int m = 0; m < kMaxModels; ++m)
      if (cap[m] > 0) lowest = std::min(lowest, named[m] / cap[m]);
    for (int m = 0; m < kMaxModels; ++m)
      if (cap[m] > 0) excess[m] = named[m] / cap[m] - lowest;
    return excess;
  }
  // CPU-only pods carry at least kCpuOnlyShare of the workload's CPU demand.
  static bool cpu_bound(const std::vector<AllocPod>& pods) {
    int64_t all = 0, cpu_only = 0;
    for (const auto& p : pods) {
      all += p.cpu_milli;
      if (p.num_gpu == 0) cpu_only += p.cpu_milli;
    }
    return all > 0 && static_cast<double>(cpu_only) >= kCpuOnlyShare * static_cast<double>(all);
  }
  static bool in_use(const AllocNode& n) {
    return std::any_of(n.gpu_free.begin(), n.gpu_free.end(), [](int32_t f) { return f < kGpuMilli; });
  }
  // Whole-GPU pods' key (0..8, higher wins): 1 = a node with a GPU in use (8, else 0); 2 = fewer
  // fully free GPUs left after placement.
  int whole_level(const AllocNode& n, const AllocPod& p) const {
    if (opt_.whole_key == 1) return in_use(n) ? 8 : 0;
    int whole = 0;
    for (int32_t f : n.gpu_free) whole += f == kGpuMilli;
    return std::clamp(8 - (whole - p.num_gpu), 0, 8);
  }
  // 0..kSpan-1, higher packs tighter.
  static int packing_tie(const AllocNode& n, const AllocPod& p, bool share_in_use) {
    if (p.num_gpu == 0) return (kGmax - std::min<int64_t>(n.gpu_free_total(), kGmax)) / kFreeStep;
    if (p.is_share())
      return share_in_use && std::any_of(n.gpu_free.begin(), n.gpu_free.end(), [](int32_t f) { return f < kGpuMilli; })
                 ? 1
                 : 0;
    if (p.num_gpu == 1) return 0;
    const int64_t cpu_after = n.cpu_free() - p.cpu_milli;
    const int64_t gpu_after = n.gpu_free_total() - p.gpu_demand();
    const int64_t per_gpu = cpu_after * kGpuMilli / (gpu_after + kGpuMilli);  // +1 GPU: no division by 0
    return kPackLevels - 1 - static_cast<int>(std::min<int64_t>(kPackLevels - 1, per_gpu / kCpuPerGpuStep));
  }
  // (primary key, GPU for share pods): FGD as policy/fgd.cc, with the pressure penalty.
  std::pair<int, int> fgd_score(const AllocNode& n, const AllocPod& p) const {
    const int64_t cpu_after = n.cpu_free() - p.cpu_milli;
    const int64_t before = frag(n.cpu_free(), n.model_id, n.gpu_free);
    std::vector<int32_t>& after = after_;
    after.assign(n.gpu_free.begin(), n.gpu_free.end());
    if (!p.is_share()) {
      const double excess = n.model_id >= 0 ? excess_[n.model_id] : 0.0;  // -1: a node without a model
      const double penalty = kLambda * excess * static_cast<double>(p.gpu_demand()) / kGpuMilli;
      for (int g : pick_gpus_best_fit(n, p)) after[g] = 0;  // whole GPUs (or none)
      return {to_score(before - frag(cpu_after, n.model_id, after), penalty), -1};
    }
    // Frag depends on the multiset of free milli, so GPUs with equal free milli score alike: only
    // the lowest index of each value is tried (FGD keeps the lowest index on ties).
    int best = -1, best_gpu = -1;
    for (int i = 0; i < static_cast<int>(after.size()); ++i) {
      if (n.gpu_free[i] < p.gpu_milli) continue;
      if (std::find(n.gpu_free.begin(), n.gpu_free.begin() + i, n.gpu_free[i]) != n.gpu_free.begin() + i) continue;
      after[i] -= p.gpu_milli;
      const int s = to_score(before - frag(cpu_after, n.model_id, after), 0.0);
      after[i] += p.gpu_milli;
      if (s > best) best = s, best_gpu = i;
    }
    return {best, best_gpu};
  }
  int to_score(int64_t delta_scaled, double penalty) const {
    if (total_ == 0) return opt_.scale / 2;
    const double x = static_cast<double>(delta_scaled) / (1000.0 * static_cast<double>(total_)) - penalty;
    return static_cast<int>(std::floor(opt_.scale / (1.0 + std::exp(-x))));
  }

  FgdPackOptions opt_;
  int64_t total_ = 0;  // the target workload's kept count (denominator of p_t)
  std::vector<int32_t> gpu_milli_;             // the groups' distinct g, ascending
  std::vector<std::vector<TaskGroup>> groups_;  // [model id or kMaxModels] the groups that may use it
  std::vector<int64_t> always_all_;             // [same] count of types for which all free is fragment
  mutable std::vector<int32_t> after_;          // fgd_score() scratch: free milli after placement
  mutable std::vector<int32_t> sorted_;         // frag() scratch: free milli, descending,
  mutable std::vector<int64_t> prefix_;         // and its prefix sums
  mutable std::vector<int> fit_;                // frag() scratch, per distinct g
  mutable std::vector<int64_t> small_;
  std::vector<double> excess_ = std::vector<double>(kMaxModels, 0.0);
  bool share_in_use_ = false;  // share pods prefer nodes with a GPU in use (prepare())
};

}  // namespace

std::unique_ptr<ScorePolicy> make_fgdpack_policy(const FgdPackOptions& options) {
  return std::make_unique<FgdPackPolicy>(options);
}

}  // namespace gpurent
