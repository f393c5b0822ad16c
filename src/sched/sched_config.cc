#include "sched/sched_config.h"


#include "core/yaml_json.h"
#include "sched/score_policy.h"

namespace gpurent {

void read_sched_config(Fields& c, SchedConfig& cfg) {
  if (auto p = c.opt_str("policy", {.min_len = 1, .max_len = 64})) {
    if (auto made = make_score_policy(*p); !made)
      c.error("policy", made.error().fields.at(0).coded);
    else cfg.score_policy = *p;
  }
  cfg.preemption = c.boolean("preemption", cfg.preemption);
  cfg.protect_inference_min = c.boolean("protect_inference_min", cfg.protect_inference_min);
  cfg.backfill = c.boolean("backfill", cfg.backfill);
  cfg.quota_lending = c.boolean("quota_lending", cfg.quota_lending);
  if (auto s = c.opt_integer("spot_notice_seconds", 0, kSecondsPerDay)) cfg.spot_notice_ms = *s * kMsPerSecond;
  cfg.inference_extra_rank = c.enumeration("inference_extra_rank", kPriorityClassNames,
                                           std::optional{cfg.inference_extra_rank});
  if (const json* w = c.raw("tenant_weights")) {
    if (!w->is_object()) {
      c.error("tenant_weights", Message("sched.config.tenant_weights_map"));
    } else {
      for (const auto& [k, v] : w->items()) {
        if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 1000)
          c.error("tenant_weights." + k, Message("sched.config.weight_integer"));
        else
          cfg.tenant_weights[k] = v.get<int64_t>();
      }
    }
  }
  c.finish();
}

Result<SchedConfig> parse_sched_config(const std::string& text, SchedConfig cfg) {
  auto doc = parse_json_or_yaml(text);
  if (!doc) {
    if (doc.error().detail.empty()) return Error::invalid("--sched-config", doc.error().message);
    return Error::invalid("--sched-config", doc.error().detail);
  }
  FieldErrors errs;
  Fields f(*doc, "", errs);
  if (!f.valid_object()) return Error::invalid("--sched-config", Message("sched.config.not_map"));
  read_sched_config(f, cfg);
  if (!errs.empty()) return errs.to_error();
  return cfg;
}

}  // namespace gpurent
