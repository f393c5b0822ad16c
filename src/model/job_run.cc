#include "model/job_run.h"

#include "core/json_put.h"

#include "model/record_codec.h"

namespace gpurent {
namespace {

constexpr int64_t kMaxRunMilli = kMaxWorkers * kMaxGpusPerWorker * 1000;


}  // namespace

int64_t JobRun::cards() const {
  int64_t n = 0;
  for (const auto& p : placement) n += static_cast<int64_t>(p.gpus.size());
  return n;
}

Result<JobRun> decode_run(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  JobRun r;
  r.job_id = f.str("job_id", kServerText);
  r.job = f.opt_str("job", kServerText).value_or("");
  r.project_id = f.opt_str("project_id", kServerText).value_or("");
  r.tenant_id = f.opt_str("tenant_id", kServerText).value_or("");
  r.supplier_id = f.opt_str("supplier_id", kServerText).value_or("");
  r.offer_id = f.opt_str("offer_id", kServerText).value_or("");
  r.contract_id = f.opt_str("contract_id", kServerText).value_or("");
  r.billing_mode = f.enumeration("billing_mode", kBillingModeNames, std::optional(BillingMode::kOnDemand));
  r.gpu_milli = f.opt_integer("gpu_milli", 0, kMaxRunMilli).value_or(0);
  r.cpu_cores = f.opt_integer("cpu_cores", 0, 1'048'576).value_or(0);
  r.memory_gib = f.opt_integer("memory_gib", 0, 16'777'216).value_or(0);
  f.object("endpoint", false, [&](Fields& e) {
    JobEndpoint ep;
    ep.model = e.str("model", {.min_len = 1, .max_len = 128});
    ep.per = e.enumeration("per", kEndpointBillingNames);
    ep.qps = e.opt_integer("qps", 1, 100'000);
    r.endpoint = std::move(ep);
  });
  f.objects("placement", false, kMaxWorkers, [&](Fields& p, size_t) {
    RunCards c;
    c.node_id = p.opt_str("node_id", kServerText).value_or("");
    c.node = p.opt_str("node", kServerText).value_or("");
    if (const json* g = p.raw("gpus")) {
      if (!g->is_array()) {
        p.error("gpus", Message("job_run.gpus_not_list"));
      } else {
        for (const json& i : *g) {
          if (!i.is_number_integer() || i.get<int64_t>() < 0) {
            p.error("gpus", Message("job_run.gpus_not_indexes"));
            break;
          }
          c.gpus.push_back(i.get<int64_t>());
        }
      }
    }
    r.placement.push_back(std::move(c));
  });
  auto time = [&](const char* key) -> std::optional<TimeMs> {
    if (const json* v = f.raw(key); !v || v->is_null()) return std::nullopt;
    return f.opt_time(key);
  };
  r.requested_at = time("requested_at");
  r.admitted_at = time("admitted_at");
  r.running_at = time("running_at");
  r.ready_at = time("ready_at");
  r.ended_at = time("ended_at");
  r.end_reason = f.opt_str("end_reason", kServerText).value_or("");
  r.end_reason_message = stored_message(f, "end_reason_message");
  r.state = f.enumeration("state", kRunStateNames, std::optional(RunState::kOpen));
  r.slurm_job_id = f.opt_integer("slurm_job_id", 0, INT64_MAX);
  if (const json* v = f.raw("previous_run"); v && !v->is_null())
    r.previous_run = f.opt_str("previous_run", kServerText).value_or("");
  if (!errs.empty()) return errs.to_error();
  return r;
}

json to_json(const JobRun& r) {
  json placement = json::array();
  for (const auto& p : r.placement) placement.push_back({{"node_id", p.node_id}, {"node", p.node}, {"gpus", p.gpus}});
  json j = {{"job_id", r.job_id},
            {"job", r.job},
            {"project_id", r.project_id},
            {"tenant_id", r.tenant_id},
            {"supplier_id", r.supplier_id},
            {"offer_id", r.offer_id},
            {"contract_id", r.contract_id},
            {"billing_mode", enum_name(kBillingModeNames, r.billing_mode)},
            {"gpu_milli", r.gpu_milli},
            {"placement", std::move(placement)},
            {"requested_at", time_or_null(r.requested_at)},
            {"running_at", time_or_null(r.running_at)},
            {"ready_at", time_or_null(r.ready_at)},
            {"ended_at", time_or_null(r.ended_at)},
            {"end_reason", r.end_reason},
            {"state", enum_name(kRunStateNames, r.state)}};
  put_opt_time(j, "admitted_at", r.admitted_at);
  if (r.end_reason_message) j["end_reason_message"] = message_to_json(*r.end_reason_message);
  put_opt(j, "slurm_job_id", r.slurm_job_id);
  if (r.previous_run) j["previous_run"] = *r.previous_run;
  if (r.endpoint) {
    json e = {{"model", r.endpoint->model}, {"per", enum_name(kEndpointBillingNames, r.endpoint->per)}};
    put_opt(e, "qps", r.endpoint->qps);
    j["endpoint"] = std::move(e);
  }
  if (r.gpu_milli == 0) {
    j["cpu_cores"] = r.cpu_cores;
    j["memory_gib"] = r.memory_gib;
  }
  return j;
}

}  // namespace gpurent
