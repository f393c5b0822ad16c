#include "server/services/usage_ingest.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <tuple>

#include "core/fields.h"
#include "model/node.h"
#include "server/services/access.h"
#include "server/services/issued_invoices.h"
#include "server/services/record_faults.h"

namespace gpurent {
namespace {

struct NodeGpus {
  std::string id;
  std::string name;
  std::set<int64_t> indexes;
};

Result<NodeGpus> node_gpus(const Record& r) {
  auto cards = decode_record(r, stored_node_cards, "usage samples of its cards are refused");
  if (!cards) return cards.error();
  NodeGpus n{r.id, r.name, {}};
  for (const StoredCard& c : *cards) n.indexes.insert(c.index);
  return n;
}

Message index_list(const std::set<int64_t>& s) {
  std::string out;
  for (int64_t i : s) out += (out.empty() ? "" : ", ") + std::to_string(i);
  return out.empty() ? Message("usage.gpu_indexes.none") : verbatim(out);
}

// A reference's error, as resolve_ref worded it (its code when it has one).
void add_reason(FieldErrors& errs, const FieldError& f) {
  if (f.coded.empty())
    errs.add(f.field, f.reason);
  else
    errs.add(f.field, f.coded);
}

// Resolves the GPU a sample names — by UUID, or by node reference and index — among the nodes
// the caller may report for (a supplier its own, operators all). Node look-ups are cached per
// batch; the UUID table is loaded at the first sample that uses one.
class GpuResolver {
 public:
  GpuResolver(StoreTx& tx, const Principal& p) : tx_(tx) {
    if (!p.is_operator()) scope_["supplier_id"] = p.supplier_id.empty() ? "-" : p.supplier_id;
  }

  // The (node id, GPU index) of sample `s` at path `at`; nullopt with the reason added to `errs`
  // when it names nothing the caller may report for. An error: the store failed or a node record
  // no longer decodes.
  Result<std::optional<std::pair<std::string, int64_t>>> resolve(const GpuSample& s, const std::string& at,
                                                                 FieldErrors& errs) {
    using Out = std::optional<std::pair<std::string, int64_t>>;
    if (!s.uuid.empty()) {
      if (!uuids_loaded_)
        if (auto st = load_uuids(); !st) return st.error();
      auto it = by_uuid_.find(s.uuid);
      if (it == by_uuid_.end()) {
        errs.add(at + ".uuid", Message("usage.uuid_not_visible").arg("uuid", s.uuid));
        return Out();
      }
      return Out(it->second);
    }
    auto [it, fresh] = nodes_.emplace(s.node, std::nullopt);
    if (fresh) {
      auto rec = resolve_ref(tx_, "nodes", s.node, scope_, at + ".node");
      if (!rec) {
        if (rec.error().code != Code::kInvalid) return rec.error();
        for (const auto& f : rec.error().fields) add_reason(errs, f);
        return Out();
      }
      auto gpus = node_gpus(*rec);
      if (!gpus) return gpus.error();
      it->second = std::move(*gpus);
    }
    if (!it->second) return Out();  // reported at its first use
    const int64_t gpu = s.gpu.value_or(-1);
    if (!it->second->indexes.count(gpu)) {
      errs.add(at + ".gpu", Message("usage.node_has_no_gpu")
                                .arg("node", it->second->name)
                                .arg("gpu", std::to_string(gpu))
                                .arg("indexes", index_list(it->second->indexes)));
      return Out();
    }
    return Out(std::make_pair(it->second->id, gpu));
  }

 private:
  Status load_uuids() {
    uuids_loaded_ = true;
    ListQuery q{"nodes", scope_, "", 1000};
    for (;;) {
      auto page = tx_.list(q);
      if (!page) return page.error();
      for (const Record& r : page->items) {
        auto cards = decode_record(r, stored_node_cards, "usage samples naming its cards by UUID are refused");
        if (!cards) return cards.error();
        for (const StoredCard& c : *cards)
          if (c.uuid) by_uuid_[*c.uuid] = {r.id, c.index};
      }
      if (page->next_after.empty()) return ok_status();
      q.after_id = page->next_after;
    }
  }

  StoreTx& tx_;
  std::map<std::string, std::string> scope_;
  std::map<std::string, std::optional<NodeGpus>> nodes_;  // ref -> node (nullopt: unresolved)
  std::map<std::string, std::pair<std::string, int64_t>> by_uuid_;
  bool uuids_loaded_ = false;
};

// The batch's GPU samples as rows (at most 100 errors are collected).
Status resolve_gpu_samples(StoreTx& tx, const Principal& p, const UsageBatch& b, FieldErrors& errs,
                           UsageBatchRows& rows) {
  GpuResolver gpus(tx, p);
  rows.gpu.reserve(b.gpu_samples.size());
  // The parser refused repeats as written; a GPU named by uuid in one sample and by node + index
  // in another, or by two names of one node (its name and its id), can only be caught here. The
  // check (a set of every sample) runs only once the batch is seen to name a GPU two ways.
  bool uuid_form = false, node_form = false;
  for (const GpuSample& s : b.gpu_samples) (s.uuid.empty() ? node_form : uuid_form) = true;
  bool mixed = uuid_form && node_form;
  std::set<std::tuple<std::string, int64_t, TimeMs>> seen;
  std::map<std::string, std::string> id_of_ref;  // node refs as written -> node id
  std::set<std::string> ref_ids;
  const std::string* last_ref = nullptr;
  for (size_t i = 0; i < b.gpu_samples.size() && errs.list().size() < 100; ++i) {
    const GpuSample& s = b.gpu_samples[i];
    const std::string at = "gpu_samples[" + std::to_string(i) + "]";
    auto card = gpus.resolve(s, at, errs);
    if (!card) return card.error();
    if (!*card) continue;
    GpuUsageRow r;
    std::tie(r.node_id, r.gpu) = **card;
    if (!mixed && s.uuid.empty() && (!last_ref || *last_ref != s.node)) {
      last_ref = &s.node;
      if (id_of_ref.emplace(s.node, r.node_id).second && !ref_ids.insert(r.node_id).second) {
        mixed = true;  // a second name of a node seen before: check every sample from here on
        for (const GpuUsageRow& earlier : rows.gpu) seen.emplace(earlier.node_id, earlier.gpu, earlier.at);
      }
    }
    if (mixed && !seen.emplace(r.node_id, r.gpu, s.at).second) {
      errs.add(at, Message("usage.repeated_sample_named_another_way"));
      continue;
    }
    r.at = s.at;
    r.utilization_pct = s.metrics.utilization_pct;
    r.memory_used_mib = s.metrics.memory_used_mib;
    r.power_mw = s.metrics.power_mw;
    r.sm_clock_mhz = s.metrics.sm_clock_mhz;
    r.gr_engine_active_pct = s.metrics.gr_engine_active_pct;
    rows.gpu.push_back(std::move(r));
  }
  return ok_status();
}

// The batch's job samples as rows, each job looked up once.
Status resolve_job_samples(StoreTx& tx, const UsageBatch& b, FieldErrors& errs, UsageBatchRows& rows) {
  std::map<std::string, std::optional<Record>> jobs;
  rows.jobs.reserve(b.job_samples.size());
  for (size_t i = 0; i < b.job_samples.size() && errs.list().size() < 100; ++i) {
    const JobSample& s = b.job_samples[i];
    auto [it, fresh] = jobs.emplace(s.job, std::nullopt);
    if (fresh) {
      const std::string field = "job_samples[" + std::to_string(i) + "].job";
      // By id only: a name is unique within its project, and once a job is gone another (any
      // tenant's) may take it: the usage, money, would be charged to it.
      if (!looks_like_id(s.job) || s.job.rfind("job_", 0) != 0) {
        errs.add(field, Message("usage.job_by_id").arg("job", s.job));
        continue;
      }
      auto rec = resolve_ref(tx, "jobs", s.job, {}, field);
      if (!rec) {
        if (rec.error().code != Code::kInvalid) return rec.error();
        for (const auto& f : rec.error().fields) add_reason(errs, f);
        continue;
      }
      it->second = std::move(rec).value();
    }
    if (!it->second) continue;
    const JobCounters& d = s.delta;
    rows.jobs.push_back(JobUsageRow{.job_id = it->second->id,
                                    .tenant_id = it->second->tenant_id,
                                    .project_id = it->second->project_id,
                                    .at = s.at,
                                    .storage_io_bytes = d.storage_io_bytes,
                                    .egress_bytes = d.egress_bytes,
                                    .input_tokens = d.input_tokens,
                                    .output_tokens = d.output_tokens,
                                    .requests = d.requests});
  }
  return ok_status();
}

// Resolves every reference of the batch and builds the store rows. Errors are collected per
// sample field (a reference is looked up once, reported at its first use).
Result<UsageBatchRows> resolve(StoreTx& tx, const Principal& p, const UsageBatch& b, const std::string& digest,
                               TimeMs now) {
  UsageBatchRows rows;
  // Keys are the caller's own: a tenant's, a supplier's, or the platform's (operators, meters).
  rows.scope = !p.tenant_id.empty()     ? "tenant:" + p.tenant_id
               : !p.supplier_id.empty() ? "supplier:" + p.supplier_id
                                        : "platform";
  rows.idempotency_key = b.idempotency_key;
  rows.content_sha256 = digest;
  rows.received_at = now;
  rows.submitted_by = p.user_id;
  FieldErrors errs;
  if (auto st = resolve_gpu_samples(tx, p, b, errs, rows); !st) return st.error();
  if (auto st = resolve_job_samples(tx, b, errs, rows); !st) return st.error();
  if (!errs.empty()) return errs.to_error();
  return rows;
}

// Refuses the batch (already inserted in the writer's transaction, which then rolls back) when a
// job's counter over one minute, with what is stored (`store`, the committed state: the batch is
// not in it), would pass kMaxCounterDelta: the roll-up folds a minute's samples into one row, which
// then never overflows (a faulty meter at the cap every minute can still take one job's own totals
// past int64 within days: reads of that job, its tenant's, fail; the roll-up, everyone's, does not).
Status check_job_minutes(StoreReader& store, const UsageBatch& b, const UsageBatchRows& rows) {
  using Sums = std::array<int64_t, 5>;
  const auto counters = [](const auto& x) -> Sums {
    return {x.storage_io_bytes, x.egress_bytes, x.input_tokens, x.output_tokens, x.requests};
  };
  static constexpr std::array<const char*, 5> kNames = {"storage_io_bytes", "egress_bytes", "input_tokens",
                                                        "output_tokens", "requests"};
  std::map<std::pair<std::string, TimeMs>, std::pair<size_t, Sums>> minutes;  // -> first sample, batch sums
  for (size_t i = 0; i < rows.jobs.size(); ++i) {
    const JobUsageRow& r = rows.jobs[i];
    auto [it, fresh] = minutes.try_emplace({r.job_id, r.at - r.at % kMsPerMinute}, i, Sums{});  // as the roll-up groups
    const Sums add = counters(r);
    for (size_t k = 0; k < add.size(); ++k)  // each <= 10^15: held below 2^62, never past int64
      it->second.second[k] = std::min<int64_t>(it->second.second[k] + add[k], INT64_MAX / 2);
  }
  for (const auto& [key, first_sums] : minutes) {
    const auto& [first, sums] = first_sums;
    Sums total = sums;
    if (std::all_of(total.begin(), total.end(), [](int64_t v) { return v == 0; })) continue;
    auto stored = store.job_usage(key.first, key.second, key.second + kMsPerMinute, 1'000'000);
    if (!stored) return stored.error();
    for (const JobUsagePoint& pt : *stored) {
      const Sums add = counters(pt);
      for (size_t k = 0; k < add.size(); ++k)
        total[k] = std::min<int64_t>(total[k] + std::min(add[k], kMaxCounterDelta), INT64_MAX / 2);
    }
    for (size_t k = 0; k < total.size(); ++k)
      if (total[k] > kMaxCounterDelta)
        return Error::invalid("job_samples[" + std::to_string(first) + "]." + kNames[k],
                              Message("usage.job_minute_cap")
                                  .arg("job", b.job_samples[first].job)
                                  .arg("minute", format_rfc3339(key.second))
                                  .arg("max", std::to_string(kMaxCounterDelta)));
  }
  return ok_status();
}

}  // namespace

Principal system_principal(const std::string& name) {
  Principal p;
  p.user_id = "system:" + name;
  p.role = Role::kOperatorAdmin;
  return p;
}

Result<UsageIngestOutcome> ingest_usage(ServiceContext& app, const Principal& p, const UsageBatch& batch) {
  if (write_scope(p, ObjectKind::kGpuTelemetry) == Scope::kNone)
    return forbidden(Message("usage.role_may_not_report").arg("role", role_name(p.role)));
  if (write_scope(p, ObjectKind::kJobUsage) == Scope::kNone && !batch.job_samples.empty())
    return forbidden(Message("usage.job_samples_operator_only"));
  const std::string digest = usage_batch_digest(batch);  // here, not on the single writer
  UsageIngestOutcome out;
  Status st = app.loop.run([&](StoreTx& tx) -> Status {
    // Again inside the writer: a month whose close began after the caller looked (its mark is
    // written before any tenant is rated) takes no more usage.
    auto through = invoicing_closed_through(tx);
    if (!through) return through.error();
    auto closed = [&](const char* list, size_t i, TimeMs at) -> Status {
      if (at >= *through) return ok_status();
      return Error::invalid(std::string(list) + "[" + std::to_string(i) + "].at",
                            Message("usage.at_in_closed_month")
                                .arg("at", format_rfc3339(at))
                                .arg("month", format_rfc3339(at).substr(0, 7)));
    };
    for (size_t i = 0; i < batch.gpu_samples.size(); ++i)
      if (auto s = closed("gpu_samples", i, batch.gpu_samples[i].at); !s) return s;
    for (size_t i = 0; i < batch.job_samples.size(); ++i)
      if (auto s = closed("job_samples", i, batch.job_samples[i].at); !s) return s;
    auto rows = resolve(tx, p, batch, digest, app.clock.now());
    if (!rows) return rows.error();
    auto r = tx.insert_usage_batch(*rows);
    if (!r) return r.error();
    if (!r->duplicate)
      if (auto s = check_job_minutes(app.store, batch, *rows); !s) return s;
    out = *r;
    return ok_status();
  });
  if (!st) return st.error();
  return out;
}

}  // namespace gpurent
