// Workload fingerprint, output side: the explanation (steps, summary, notes, as message codes
// rendered from src/messages/<lang>.json) and to_json.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "advisor/advisor_util.h"
#include "advisor/fingerprint.h"
#include "advisor/fingerprint_internal.h"
#include "core/json_put.h"
#include "core/message.h"

namespace gpurent {
using namespace fingerprint_internal;

namespace {

std::string fmt_bp(int64_t bp) { return fixed(bp, 100, 2, false) + " %"; }    // -7000 -> "-70.00 %"
std::string fmt_ms(int64_t us) { return fixed(us, 1000, 3, true) + " ms"; }   // 642857 -> "642.857 ms"
std::string fmt_times(int64_t pm) { return fixed(pm, 1000, 3, true) + "x"; }  // 1667 -> "1.667x"
std::string fmt_x10(int64_t x10) { return fixed(x10, 10, 1, false); }         // 153 -> "15.3"
std::string fmt_mbps(int64_t bps) { return std::to_string(div_half_even_sat(bps, kBytesPerMb)) + " MB/s"; }
std::string money_str(const Money& m) { return m.to_string(); }

// The bottleneck's human name (the JSON's "bottleneck" carries the language-neutral key).
Message bottleneck_message(WorkloadBottleneck b) {
  switch (b) {
    case WorkloadBottleneck::kCompute:
      return Message("advisor.fingerprint.bottleneck.compute");
    case WorkloadBottleneck::kMemoryBandwidth:
      return Message("advisor.fingerprint.bottleneck.memory_bandwidth");
    case WorkloadBottleneck::kCommunication:
      return Message("advisor.fingerprint.bottleneck.communication");
    case WorkloadBottleneck::kIo:
      return Message("advisor.fingerprint.bottleneck.io");
    case WorkloadBottleneck::kCpu:
      return Message("advisor.fingerprint.bottleneck.cpu");
    case WorkloadBottleneck::kUndetermined:
      break;
  }
  return Message("advisor.fingerprint.bottleneck.undetermined");
}

// What "speed" means when the GPU part is scaled to another model.
Message perf_name(PerfMode m) {
  switch (m) {
    case PerfMode::kRoofline:
      return Message("advisor.fingerprint.speed.roofline");
    case PerfMode::kBandwidth:
      return Message("advisor.fingerprint.speed.bandwidth");
    case PerfMode::kPeak:
      return Message("advisor.fingerprint.speed.peak");
    case PerfMode::kNone:
      break;
  }
  return Message("advisor.fingerprint.speed.none");
}

json option_json(const FingerprintOption& o) {
  json j = {{"label", o.label},
            {"gpu_model", o.gpu_model},
            {"gpu_count", o.gpu_count},
            {"interconnect", enum_name(kGpuInterconnectNames, o.interconnect)},
            {"link_gbps", o.link_gbps},
            {"faster_storage", o.faster_storage},
            {"gpu_us", o.gpu_us},
            {"host_us", o.host_us},
            {"read_us", o.read_us},
            {"communication_us", o.communication_us},
            {"step_us", o.step_us},
            {"cost_per_hour", o.cost_per_hour.amount_string()},
            {"cost_per_step", o.cost_per_step.amount_string()},
            {"cost_per_1000_steps", o.cost_per_1000_steps.amount_string()}};
  if (o.faster_storage) {
    j["required_read_speedup_permille"] = o.required_read_speedup_permille;
    if (o.required_read_bytes_per_s)
      j["required_read_mb_per_s"] = div_half_even_sat(*o.required_read_bytes_per_s, kBytesPerMb);
  }
  put_opt(j, "cpu_cores_per_gpu", o.cpu_cores_per_gpu);
  return j;
}

}  // namespace

namespace {

// One line of the arithmetic shown to the user, as a message code, with its formula.
void step(FingerprintResult& r, Message text, std::string formula, json value) {
  r.steps.push_back({std::move(text), std::move(formula), std::move(value)});
}

// Today's step: its parts, the roofline, the bottleneck and the read time.
void explain_today(const Analysis& a, FingerprintResult& r) {
  const FingerprintInput& in = *a.in;
  const FingerprintParts& p = r.parts;
  const std::string T = fmt_ms(a.T);
  if (r.step_time_given)
    step(r, Message("advisor.fingerprint.step.step_time"), "T = " + T, a.T);
  else
    step(r, Message("advisor.fingerprint.step.step_time_hour"), "T = 3600000 ms", a.T);
  step(r, Message("advisor.fingerprint.step.data_wait"), "W = " + T + " x " + fmt_pm(p.data_wait) + " = " + fmt_ms(a.W),
       a.W);
  step(r, Message("advisor.fingerprint.step.communication"),
       "N = " + T + " x " + fmt_pm(p.communication) + " = " + fmt_ms(a.N), a.N);
  step(r, Message("advisor.fingerprint.step.gpu_busy"), "G = " + T + " x " + fmt_pm(p.gpu) + " = " + fmt_ms(a.G), a.G);
  if (a.H > 0)
    step(r, Message("advisor.fingerprint.step.host_time"), "H = " + T + " x " + fmt_pm(p.host) + " = " + fmt_ms(a.H),
         a.H);
  if (a.X > 0)
    step(r, Message("advisor.fingerprint.step.unexplained_idle"),
         "X = " + T + " x " + fmt_pm(p.unattributed) + " = " + fmt_ms(a.X), a.X);
  const FingerprintRoofline& rf = r.roofline;
  if (rf.compute_efficiency_permille)
    step(r, Message("advisor.fingerprint.step.compute_efficiency"),
         fmt_x10(*in.achieved_tflops_x10) + " / " + fmt_x10(*rf.peak_tflops_x10) +
             " TFLOPS = " + fmt_pm(*rf.compute_efficiency_permille),
         *rf.compute_efficiency_permille);
  if (rf.bandwidth_efficiency_permille)
    step(r, Message("advisor.fingerprint.step.bandwidth_use"),
         std::to_string(*in.memory_bandwidth_used_gbps) + " / " + std::to_string(*rf.peak_bandwidth_gbps) +
             " GB/s = " + fmt_pm(*rf.bandwidth_efficiency_permille),
         *rf.bandwidth_efficiency_permille);
  if (rf.arithmetic_intensity_x10)
    step(r, Message("advisor.fingerprint.step.arithmetic_intensity"),
         "AI = " + fmt_x10(*in.achieved_tflops_x10) + " TFLOPS / " + std::to_string(*in.memory_bandwidth_used_gbps) +
             " GB/s = " + fmt_x10(*rf.arithmetic_intensity_x10) + " FLOP/B",
         fmt_x10(*rf.arithmetic_intensity_x10));
  if (rf.ridge_point_x10)
    step(r, Message("advisor.fingerprint.step.ridge_point"),
         "ridge = " + fmt_x10(*rf.peak_tflops_x10) + " TFLOPS / " + std::to_string(*rf.peak_bandwidth_gbps) +
             " GB/s = " + fmt_x10(*rf.ridge_point_x10) + " FLOP/B",
         fmt_x10(*rf.ridge_point_x10));
  {
    std::string f = "losses: communication " + fmt_pm(p.communication) + ", data wait " + fmt_pm(p.data_wait) +
                    (r.data_wait_cause.empty() ? "" : " (" + r.data_wait_cause + ")") + ", host " + fmt_pm(p.host) +
                    ", unexplained " + fmt_pm(p.unattributed) + "; threshold " + fmt_pm(kLossThresholdPermille) +
                    "; GPU part " + (rf.memory_bound ? "memory-bound" : "compute-bound") + " -> " +
                    enum_name(kWorkloadBottleneckNames, r.bottleneck);
    step(r, Message("advisor.fingerprint.step.bottleneck"), f, enum_name(kWorkloadBottleneckNames, r.bottleneck));
  }
  if (a.R > 0)
    step(r,
         a.W > 0 ? Message("advisor.fingerprint.step.read_time_wait")
                 : Message("advisor.fingerprint.step.read_time_rate"),
         "R = " + fmt_ms(a.R), a.R);
}

// What the recommendation changes, part by part, and what a step then costs.
void explain_change(const Analysis& a, FingerprintResult& r) {
  const FingerprintInput& in = *a.in;
  const std::string T = fmt_ms(a.T);
  const FingerprintOption& c = r.current;
  const FingerprintOption& o = r.recommended;
  step(r, Message("advisor.fingerprint.step.cost_today"),
       std::to_string(c.gpu_count) + " x " + money_str(in.price_per_gpu_hour) + " x " + T +
           " / 3600000 ms = " + money_str(c.cost_per_step),
       c.cost_per_step.amount_string());
  const std::string ratio = std::to_string(a.n) + "/" + std::to_string(o.gpu_count);
  const GpuModel* new_model = a.catalog->find(o.gpu_model);
  const auto speed_now = perf_of(a, *a.model);
  const auto speed_new = new_model ? perf_of(a, *new_model) : std::nullopt;
  const std::string speeds = speed_now && speed_new ? std::to_string(static_cast<int64_t>(*speed_now)) + "/" +
                                                          std::to_string(static_cast<int64_t>(*speed_new))
                                                    : "1/1";
  step(r, Message("advisor.fingerprint.step.new_gpu_part").arg("speed", perf_name(a.mode)),
       "G' = " + fmt_ms(a.G) + " x " + ratio + " x " + speeds + " (" + a.model->id + " -> " + o.gpu_model +
           ") = " + fmt_ms(o.gpu_us),
       o.gpu_us);
  const std::string cores = std::to_string(a.cores) + "/" + std::to_string(o.cpu_cores_per_gpu.value_or(a.cores));
  step(r, Message("advisor.fingerprint.step.new_host_part"),
       "H' = " + fmt_ms(a.H) + " x " + ratio + " x " + cores + " + " + fmt_ms(a.X) + " x " + ratio + " = " +
           fmt_ms(o.host_us),
       o.host_us);
  if (o.faster_storage && !(in.faster_storage && in.faster_storage->read_bytes_per_s)) {
    step(r, Message("advisor.fingerprint.step.storage_sized_to_need"),
         "R' = " + fmt_ms(o.read_us) + "; read speed x " + fmt_ms(a.R) + " / " + fmt_ms(o.read_us) + " = " +
             fmt_times(o.required_read_speedup_permille) +
             (o.required_read_bytes_per_s ? "; " + fmt_mbps(*in.io_bytes_per_s) + " x " + T + " / " +
                                                fmt_ms(o.read_us) + " = " + fmt_mbps(*o.required_read_bytes_per_s)
                                          : ""),
         o.read_us);
  } else if (o.faster_storage) {
    step(r, Message("advisor.fingerprint.step.storage_given_capacity"),
         "R' = " + fmt_ms(o.read_us) + " at " + fmt_mbps(*in.faster_storage->read_bytes_per_s), o.read_us);
  } else if (a.read_cpu_bound) {
    step(r, Message("advisor.fingerprint.step.read_cpu_bound"),
         "R' = " + fmt_ms(a.R) + " x " + ratio + " x " + cores + " = " + fmt_ms(o.read_us), o.read_us);
  } else {
    step(r, Message("advisor.fingerprint.step.same_storage"), "R' = " + fmt_ms(o.read_us), o.read_us);
  }
  step(r, Message("advisor.fingerprint.step.new_communication"),
       "N' = " + fmt_ms(a.N) + " x ring(" + std::to_string(o.gpu_count) + ")/ring(" + std::to_string(a.n) + ") x " +
           std::to_string(a.link_gbps) + "/" + std::to_string(o.link_gbps) + " GB/s = " + fmt_ms(o.communication_us),
       o.communication_us);
  step(r, Message("advisor.fingerprint.step.new_step"),
       "T' = max(" + fmt_ms(o.gpu_us + o.host_us) + ", " + fmt_ms(o.read_us) + ") + " + fmt_ms(o.communication_us) +
           " = " + fmt_ms(o.step_us),
       o.step_us);
  step(r, Message("advisor.fingerprint.step.cost_after"),
       money_str(o.cost_per_hour) + " x " + fmt_ms(o.step_us) + " / 3600000 ms = " + money_str(o.cost_per_step),
       o.cost_per_step.amount_string());
  step(r, Message("advisor.fingerprint.step.speedup"),
       T + " / " + fmt_ms(o.step_us) + " = " + fmt_times(r.speedup_permille) + "; " + fmt_bp(r.cost_change_bp),
       json{{"speedup_permille", r.speedup_permille}, {"cost_change_bp", r.cost_change_bp}});
}

// The recommended changes, one clause each, separated as the reader's language separates list
// items ("; " in English, "；" in Chinese). At most four: model, count, storage, cores.
Message change_list(std::vector<Message> changes) {
  Message m;
  switch (changes.size()) {
    case 1:
      m = Message("advisor.fingerprint.changes_1");
      break;
    case 2:
      m = Message("advisor.fingerprint.changes_2");
      break;
    case 3:
      m = Message("advisor.fingerprint.changes_3");
      break;
    default:
      m = Message("advisor.fingerprint.changes_4");
      break;
  }
  static const char* const kNames[] = {"a", "b", "c", "d"};
  for (size_t i = 0; i < changes.size() && i < 4; ++i) m.arg(kNames[i], std::move(changes[i]));
  return m;
}

// The one-paragraph summary: the bottleneck, then the recommendation and its expected effect.
void summarize(const Analysis& a, FingerprintResult& r) {
  const FingerprintOption& c = r.current;
  const FingerprintOption& o = r.recommended;
  std::vector<Message> changes;
  if (o.gpu_model != c.gpu_model) {
    if (o.interconnect != c.interconnect)
      changes.push_back(Message("advisor.fingerprint.change.move_to_interconnect")
                            .arg("model", o.gpu_model)
                            .arg("interconnect", enum_name(kGpuInterconnectNames, o.interconnect)));
    else
      changes.push_back(Message("advisor.fingerprint.change.move_to").arg("model", o.gpu_model));
  }
  if (o.gpu_count != c.gpu_count)
    changes.push_back((o.gpu_count < c.gpu_count ? Message("advisor.fingerprint.change.fewer_gpus")
                                                 : Message("advisor.fingerprint.change.more_gpus"))
                          .arg("now", std::to_string(c.gpu_count))
                          .arg("new", std::to_string(o.gpu_count)));
  if (o.faster_storage) {
    Message m = o.required_read_bytes_per_s ? Message("advisor.fingerprint.change.faster_storage_rate")
                                                  .arg("rate", fmt_mbps(*o.required_read_bytes_per_s))
                                            : Message("advisor.fingerprint.change.faster_storage");
    changes.push_back(std::move(m).arg("speedup", fmt_times(o.required_read_speedup_permille)));
  }
  if (o.cpu_cores_per_gpu != c.cpu_cores_per_gpu && o.cpu_cores_per_gpu)
    changes.push_back(Message("advisor.fingerprint.change.more_cores")
                          .arg("now", std::to_string(c.cpu_cores_per_gpu.value_or(0)))
                          .arg("new", std::to_string(*o.cpu_cores_per_gpu)));
  if (changes.empty()) {
    r.summary = Message("advisor.fingerprint.summary.keep").arg("bottleneck", bottleneck_message(r.bottleneck));
  } else {
    r.summary = Message("advisor.fingerprint.summary.recommended")
                    .arg("bottleneck", bottleneck_message(r.bottleneck))
                    .arg("changes", change_list(std::move(changes)))
                    .arg("step_now", fmt_ms(a.T))
                    .arg("step_new", fmt_ms(o.step_us))
                    .arg("speedup", fmt_times(r.speedup_permille))
                    .arg("cost_now", money_str(c.cost_per_step))
                    .arg("cost_new", money_str(o.cost_per_step))
                    .arg("cost_change", fmt_bp(r.cost_change_bp));
  }
}

// Notes on what the numbers cannot say by themselves.
void add_notes(const Analysis& a, FingerprintResult& r) {
  const FingerprintInput& in = *a.in;
  const FingerprintParts& p = r.parts;
  const FingerprintRoofline& rf = r.roofline;
  const FingerprintOption& c = r.current;
  const FingerprintOption& o = r.recommended;
  if (p.unattributed > 0)
    r.notes.push_back(Message("advisor.fingerprint.note.unexplained_idle").arg("share", fmt_pm(p.unattributed)));
  if (r.bottleneck == WorkloadBottleneck::kCompute && rf.compute_efficiency_permille &&
      *rf.compute_efficiency_permille < 400)
    r.notes.push_back(Message("advisor.fingerprint.note.kernel_efficiency")
                          .arg("efficiency", fmt_pm(*rf.compute_efficiency_permille)));
  if (r.bottleneck == WorkloadBottleneck::kCpu && !a.explore_cores)
    r.notes.push_back(Message("advisor.fingerprint.note.cpu_not_saturated"));
  if (o.gpu_count < c.gpu_count) r.notes.push_back(Message("advisor.fingerprint.note.fewer_gpus_keep_batch"));
  if (r.fastest_at_same_cost) {
    const FingerprintOption& f = *r.fastest_at_same_cost;
    r.notes.push_back((f.faster_storage ? Message("advisor.fingerprint.note.fastest_at_same_cost_storage")
                                        : Message("advisor.fingerprint.note.fastest_at_same_cost"))
                          .arg("gpus", std::to_string(f.gpu_count))
                          .arg("model", f.gpu_model)
                          .arg("cost", money_str(f.cost_per_step))
                          .arg("step", fmt_ms(f.step_us)));
  }
  if (in.offers.empty()) r.notes.push_back(Message("advisor.fingerprint.note.no_offers"));
}

}  // namespace

void fingerprint_internal::explain(const Analysis& a, FingerprintResult& r) {
  explain_today(a, r);
  explain_change(a, r);
  summarize(a, r);
  add_notes(a, r);
}

json to_json(const FingerprintResult& r) {
  const FingerprintInput& in = r.input;
  json profile = {{"source", in.source},
                  {"currency", currency_code(in.currency)},
                  {"gpu_model", in.gpu_model},
                  {"gpu_count", in.gpu_count},
                  {"price_per_gpu_hour", in.price_per_gpu_hour.amount_string()}};
  put_opt(profile, "gpu_utilization_permille", in.gpu_utilization_permille);
  put_opt(profile, "peak_memory_mib", in.peak_memory_mib);
  if (in.achieved_tflops_x10) profile["achieved_tflops"] = format_tflops_x10(*in.achieved_tflops_x10);
  put_opt(profile, "memory_bandwidth_used_gbps", in.memory_bandwidth_used_gbps);
  put_opt(profile, "nccl_share_permille", in.nccl_share_permille);
  put_opt(profile, "data_wait_share_permille", in.data_wait_share_permille);
  put_opt(profile, "storage_io_bytes_per_s", in.io_bytes_per_s);
  put_opt(profile, "storage_read_bytes_per_s", in.storage_read_bytes_per_s);  // what the storage delivers
  put_opt(profile, "cpu_utilization_permille", in.cpu_utilization_permille);
  put_opt(profile, "cpu_cores_per_gpu", in.cpu_cores_per_gpu);
  put_opt(profile, "step_time_ms", in.step_time_ms);
  const FingerprintParts& p = r.parts;
  json parts = {{"gpu", p.gpu},
                {"data_wait", p.data_wait},
                {"communication", p.communication},
                {"host", p.host},
                {"unattributed", p.unattributed}};
  const FingerprintRoofline& rf = r.roofline;
  json roof = json::object();
  if (rf.peak_tflops_x10) roof["peak_fp16_tflops"] = format_tflops_x10(*rf.peak_tflops_x10);
  put_opt(roof, "peak_bandwidth_gbps", rf.peak_bandwidth_gbps);
  put_opt(roof, "compute_efficiency_permille", rf.compute_efficiency_permille);
  put_opt(roof, "bandwidth_efficiency_permille", rf.bandwidth_efficiency_permille);
  if (rf.arithmetic_intensity_x10) roof["arithmetic_intensity_flop_per_byte"] = fmt_x10(*rf.arithmetic_intensity_x10);
  if (rf.ridge_point_x10) roof["ridge_point_flop_per_byte"] = fmt_x10(*rf.ridge_point_x10);
  roof["memory_bound"] = rf.memory_bound;
  json secondary = json::array();
  for (auto b : r.secondary) secondary.push_back(enum_name(kWorkloadBottleneckNames, b));
  json options = json::array();
  for (const auto& o : r.options) options.push_back(option_json(o));
  json alts = json::array();
  for (const auto& a : r.alternatives)
    alts.push_back({{"gpu_model", a.gpu_model},
                    {"step_us", a.step_us},
                    {"speedup_permille", a.speedup_permille},
                    {"break_even_price_per_gpu_hour", a.break_even_price_per_gpu_hour.amount_string()}});
  const json steps = steps_to_json(r.steps);
  json notes = json::array();
  for (const auto& n : r.notes) notes.push_back(text_json(n));
  json interconnect = {{"interconnect", enum_name(kGpuInterconnectNames, r.interconnect_advice)}};
  put_message(interconnect, "reason", r.interconnect_reason);
  json out = {{"profile", profile},
              {"unit", r.step_time_given ? "step" : "hour_of_current_work"},
              {"step_us", r.step_us},
              {"parts_permille", parts},
              {"data_wait_cause", r.data_wait_cause.empty() ? json(nullptr) : json(r.data_wait_cause)},
              {"roofline", roof},
              {"bottleneck", enum_name(kWorkloadBottleneckNames, r.bottleneck)},
              {"secondary_bottlenecks", secondary},
              {"interconnect_advice", interconnect},
              {"current", option_json(r.current)},
              {"recommendation", option_json(r.recommended)},
              {"fastest_at_same_cost", r.fastest_at_same_cost ? option_json(*r.fastest_at_same_cost) : json(nullptr)},
              {"speedup_permille", r.speedup_permille},
              {"cost_change_bp", r.cost_change_bp},
              {"notes", notes},
              {"options", options},
              {"options_evaluated", r.options_evaluated},
              {"alternatives", alts},
              {"steps", steps}};
  put_message(out, "summary", r.summary);
  return out;
}

}  // namespace gpurent
