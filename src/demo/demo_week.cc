#include "demo/demo_week.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "model/job.h"

namespace gpurent {
namespace {


TimeMs floor_to(TimeMs t, TimeMs unit) { return t - ((t % unit) + unit) % unit; }

// "1127" for 27 November.
std::string mmdd(TimeMs day) {
  const std::string d = format_rfc3339(day);
  return d.substr(5, 2) + d.substr(8, 2);
}

Job job(const std::string& name, const char* project, JobKind kind, int64_t hours) {
  Job j;
  j.name = name;
  j.project = project;
  j.kind = kind;
  j.priority_class = default_priority(kind);
  j.expected_duration_seconds = hours * 3600;
  j.image = "nvcr.io/nvidia/pytorch:24.10-py3";
  return j;
}

DemoObject submitted(const Job& j, const char* tenant) {
  json b = to_json(j);
  b.erase("status");
  return {"jobs", std::move(b), tenant};
}

// One DETR sweep run: 8 SXM GPUs on one NVSwitch, H100 or A100.
Job detr_run(const std::string& day, const char* variant, const char* lr, int64_t hours) {
  Job j = job("detr-sweep-" + day + "-" + variant, "vision", JobKind::kTraining, hours);
  j.gpus_per_worker = 8;
  j.constraints.gpu_models = {"h100-sxm5-80gb", "a100-sxm4-80gb"};
  j.constraints.form_factor = FormFactor::kSxm;
  j.constraints.placement = PlacementRule::kSameNvlinkDomain;
  j.command = {"torchrun", "--nproc-per-node=8", "finetune.py", "--dataset", "coco-2017", "--lr", lr};
  j.labels = {{"team", "vision"}, {"experiment", "detr-sweep"}, {"lr", lr}};
  return j;
}

void add_day(DemoWeek& w, TimeMs day) {
  const std::string d = mmdd(day);
  auto at = [&](int64_t hour, int64_t minute, DemoObject o) {
    w.submissions.push_back({day + hour * kMsPerHour + minute * kMsPerMinute, std::move(o)});
  };
  // Aurora AI, vision: a learning-rate sweep every day; every other day a run that streams its
  // dataset from object storage (I/O-bound); a notebook in the working day.
  at(9, 0, submitted(detr_run(d, "a", "3e-4", 7), "aurora-ai"));
  at(13, 0, submitted(detr_run(d, "b", "1e-3", 6), "aurora-ai"));
  if (((day / kMsPerDay) % 2) == 0) {
    Job j = detr_run(d, "c", "3e-4", 9);
    j.command.push_back("--stream-from=s3://aurora-datasets/coco/");
    at(15, 30, submitted(j, "aurora-ai"));
  }
  {
    Job j = job("nb-sam-" + d, "vision", JobKind::kDebug, 8);
    j.gpu_milli = 500;
    j.resources = {.cpu_cores = 8, .memory_gib = 64};
    j.constraints.gpu_models = {"a100-pcie-80gb", "l40s-48gb"};
    j.image = "quay.io/jupyter/pytorch-notebook:cuda12-python-3.11";
    j.command = {"jupyter", "lab", "--ip=0.0.0.0", "--no-browser"};
    at(10, 15, submitted(j, "aurora-ai"));
  }
  // 青云科技: continued pre-training on A100 every other day; a nightly evaluation on spot.
  if (((day / kMsPerDay) % 2) == 1) {
    Job j = job("llama-cpt-" + d, "pretrain", JobKind::kTraining, 20);
    j.workers = 2;
    j.gpus_per_worker = 8;
    j.constraints.gpu_models = {"a100-sxm4-80gb"};
    j.constraints.rdma = RdmaRequirement::kRoceV2;
    j.command = {"torchrun", "--nnodes=2", "--nproc-per-node=8", "cpt.py", "--corpus", "oss://qingyun/corpus-v3/"};
    j.labels = {{"team", "llm"}};
    at(2, 0, submitted(j, "qingyun-tech"));
  }
  {
    Job j = job("eval-" + d, "copilot", JobKind::kBatch, 2);
    j.gpus_per_worker = 1;
    j.constraints.gpu_models = {"ascend-910b-64gb", "a100-sxm4-80gb"};
    j.billing.mode = BillingMode::kSpot;
    j.billing.max_price_per_gpu_hour = Money(6 * Money::kMicrosPerUnit, Currency::kCNY);
    j.image = "quay.io/ascend/cann:8.0.0-910b-ubuntu22.04-py3.10";
    j.command = {"python", "eval.py", "--suite", "humaneval"};
    at(1, 0, submitted(j, "qingyun-tech"));
  }
}

// Uniform in [-1, 1] from a key and a counter.
double noise(uint64_t key, uint64_t n) {
  uint64_t x = key ^ (n * 0x9E3779B97F4A7C15ULL);
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return static_cast<double>(x >> 11) / static_cast<double>(1ULL << 52) - 1.0;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

// The daily swing at `t` for a workload peaking at peak_hour_utc: -1..1.
double diurnal(const Workload& w, TimeMs t) {
  const double hour = static_cast<double>(floor_to(t, kMsPerMinute) % kMsPerDay) / static_cast<double>(kMsPerHour);
  return std::cos(2 * std::numbers::pi * (hour - static_cast<double>(w.peak_hour_utc)) / 24.0);
}

}  // namespace

uint64_t demo_key(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

DemoWeek demo_week(TimeMs end, int days) {
  DemoWeek w;
  days = std::clamp(days, 1, 31);
  w.end = end;
  w.start = floor_to(end - days * kMsPerDay, kMsPerHour);
  for (TimeMs day = floor_to(w.start, kMsPerDay); day < end; day += kMsPerDay) add_day(w, day);
  // Only what falls inside the week, leaving the last half hour for the scheduler to catch up.
  std::erase_if(w.submissions, [&](const WeekSubmission& s) { return s.at < w.start || s.at >= end - 30 * kMsPerMinute; });
  std::stable_sort(w.submissions.begin(), w.submissions.end(),
                   [](const WeekSubmission& a, const WeekSubmission& b) { return a.at < b.at; });

  // Outages sit at fixed distances before the present (not at a time of day), so a replay of N
  // days holds the same ones whatever the hour: the runpod one from 2 days, both from 4.
  auto outage = [&](int64_t hours_before_end, const char* node, int64_t minutes, int64_t response_min,
                    const char* reason) {
    const TimeMs from = floor_to(end, kMsPerHour) - hours_before_end * kMsPerHour;
    if (from <= w.start || from + minutes * kMsPerMinute >= end) return;
    w.outages.push_back({node, from, from + minutes * kMsPerMinute, from + response_min * kMsPerMinute, reason});
  };
  outage(82, "huadong-aidc-sh-910b-02", 180, 12, "NPU HBM uncorrectable ECC errors; board replaced");
  outage(30, "runpod-ustx3-h200-01", 90, 25, "NVSwitch fabric manager crash; node rebooted");
  const TimeMs burst = floor_to(w.start, kMsPerDay) + (days - 1) * kMsPerDay + 4 * kMsPerHour;
  if (burst > w.start && burst + 6 * kMsPerHour < end) w.bursts.push_back({"code-assist", burst, burst + 6 * kMsPerHour, 600});
  return w;
}

Workload workload_of(std::string_view name, std::string_view kind) {
  Workload w;
  if (starts_with(name, "vit-h-pretrain")) {
    w = {93, 0, 0, 150, 0, 0, 0, "val_top1", true, 0.35, 0.78, 30};
  } else if (starts_with(name, "detr-sweep-") && ends_with(name, "-b")) {
    w = {88, 0, 0, 200, 0, 0, 0, "val_map", true, 0.200, 0.232, 1.5};  // lr too high: plateaus early
  } else if (starts_with(name, "detr-sweep-") && ends_with(name, "-c")) {
    w = {34, 0, 0, 2600, 0, 0, 0, "val_map", true, 0.200, 0.415, 4};  // waits on object storage
  } else if (starts_with(name, "detr-")) {
    w = {90, 0, 0, 200, 0, 0, 0, "val_map", true, 0.200, 0.452, 2.5};
  } else if (starts_with(name, "qwen-sft")) {
    w = {91, 0, 0, 80, 0, 0, 0, "train_loss", false, 2.10, 1.32, 40};
  } else if (starts_with(name, "llama-cpt")) {
    w = {89, 0, 0, 300, 0, 0, 0, "train_loss", false, 2.60, 2.02, 8};
  } else if (starts_with(name, "chat-70b")) {
    w = {52, 30, 17, 0, 25, 900, 700};
  } else if (starts_with(name, "embed-small")) {
    w = {30, 15, 17, 0, 2, 3000, 250};
  } else if (starts_with(name, "code-assist")) {
    w = {48, 30, 6, 0, 40, 600, 1200};
  } else if (kind == "inference") {
    w = {45, 25, 12, 0, 10, 500, 500};
  } else if (kind == "debug" || starts_with(name, "nb-") || starts_with(name, "notebook-")) {
    w = {6, 0, 0, 5, 0, 0, 0};
  } else if (kind == "batch") {
    w = {68, 0, 0, 400, 0, 0, 0};
  } else {
    w = {85, 0, 0, 150, 0, 0, 0};
  }
  return w;
}

CardSample busy_card(const Workload& w, const GpuModel& model, uint64_t key, TimeMs minute, int64_t share_milli) {
  const uint64_t n = static_cast<uint64_t>(floor_to(minute, kMsPerMinute) / kMsPerMinute);
  double util = static_cast<double>(w.busy_pct) + static_cast<double>(w.swing_pct) * diurnal(w, minute) +
                5.0 * noise(key, n);
  if (w.busy_pct < 10 && noise(key ^ 0xABCDEF, n / 10) > 0.8) util += 45;  // a notebook's occasional cell run
  util = std::clamp(util, 0.0, 100.0) * static_cast<double>(share_milli) / 1000.0;
  CardSample s;
  s.utilization_pct = static_cast<int64_t>(std::lround(util));
  const int64_t mem_mib = model.memory_gib * 1024;
  s.memory_used_mib = std::min(mem_mib, static_cast<int64_t>(static_cast<double>(mem_mib) *
                                                             (0.30 + 0.6 * static_cast<double>(w.busy_pct) / 100.0) *
                                                             static_cast<double>(share_milli) / 1000.0));
  const int64_t tdp_w = model.tdp_watts.value_or(400);
  s.power_mw = static_cast<int64_t>((60.0 + static_cast<double>(tdp_w - 60) * util / 100.0) * 1000.0);
  s.sm_clock_mhz = util > 1 ? 1755 + static_cast<int64_t>(std::lround(20 * noise(key + 1, n))) : 345;
  s.gr_engine_active_pct = std::max<int64_t>(0, s.utilization_pct - 2);
  return s;
}

CardSample idle_card(const GpuModel& model, uint64_t key, TimeMs minute) {
  const uint64_t n = static_cast<uint64_t>(floor_to(minute, kMsPerMinute) / kMsPerMinute);
  CardSample s;
  s.memory_used_mib = 0;
  s.power_mw = static_cast<int64_t>((55.0 + 8.0 * noise(key, n)) * 1000.0);
  s.sm_clock_mhz = 210;
  (void)model;
  return s;
}

JobTraffic job_traffic(const Workload& w, std::string_view job_name, int64_t gpus_milli, int64_t replicas, TimeMs from,
                       TimeMs to, const DemoWeek& week) {
  JobTraffic t;
  if (to <= from) return t;
  const int64_t minutes = (floor_to(to, kMsPerMinute) - floor_to(from, kMsPerMinute)) / kMsPerMinute;
  if (minutes <= 0) return t;
  const double day_factor = std::max(0.1, 1.0 + static_cast<double>(w.swing_pct) / 100.0 * diurnal(w, to));
  t.storage_io_bytes = w.storage_mb_per_gpu_min * gpus_milli / 1000 * minutes * 1'000'000;
  int64_t egress_minutes = minutes;
  for (const WeekBurst& b : week.bursts) {
    if (b.job != job_name) continue;
    const TimeMs lo = std::max(from, b.from), hi = std::min(to, b.to);
    if (hi > lo) egress_minutes += (hi - lo) / kMsPerMinute * (b.factor - 1);
  }
  t.egress_bytes = static_cast<int64_t>(static_cast<double>(w.egress_mb_per_min * egress_minutes * 1'000'000) *
                                        (w.swing_pct ? day_factor : 1.0));
  t.requests = static_cast<int64_t>(static_cast<double>(w.requests_per_min * replicas * minutes) * day_factor);
  t.input_tokens = t.requests * w.tokens_per_request * 3 / 4;
  t.output_tokens = t.requests * w.tokens_per_request - t.input_tokens;
  return t;
}

double metric_value(const Workload& w, uint64_t key, double run_hours) {
  const double span = w.metric_first - w.metric_last;
  const double v = w.metric_last + span * std::exp(-std::max(0.0, run_hours) / w.metric_tau_hours);
  const double jitter = 0.01 * std::abs(span) * noise(key, static_cast<uint64_t>(run_hours * 60));
  return std::round((v + jitter) * 10000.0) / 10000.0;
}

}  // namespace gpurent
