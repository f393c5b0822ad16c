// A store with a record in every table, and a comparison of two stores through the Store
// interface, for the backup, restore and migration tests (store_backup_test.cc,
// pg_backup_test.cc, src/cli/store_commands_test.cc). Test-only; not thread-safe.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/message.h"
#include "store/store.h"

namespace gpurent::testing_records {

inline constexpr TimeMs kJan31 = 1'801'439'940'000;  // 2027-01-31T23:59:00Z
inline constexpr TimeMs kFeb1 = 1'801'440'000'000;   // 2027-02-01T00:00:00Z
inline constexpr TimeMs kMin = 60'000;
inline const std::vector<std::string> kKinds = {"suppliers", "tenants", "projects", "jobs", "users", "artifacts"};

inline Record record(std::string kind, std::string id, std::string name, std::string tenant = "") {
  Record r;
  r.kind = std::move(kind);
  r.id = std::move(id);
  r.name = std::move(name);
  r.tenant_id = std::move(tenant);
  r.created_at = kJan31 - 86'400'000;
  r.updated_at = r.created_at;
  r.body = {{"id", r.id},
            {"name", r.name},
            {"price", "3.20"},
            {"gpus", {1, 2, 3}},
            {"ratio", 0.125},
            {"big", 9007199254740993LL},
            {"text", "租用 GPU\t\"quoted\"\n\\"},
            {"none", nullptr}};
  return r;
}

inline GpuUsageRow gpu_sample(TimeMs at, int64_t gpu, int64_t util) {
  GpuUsageRow r;
  r.node_id = "nod_1";
  r.gpu = gpu;
  r.at = at;
  r.utilization_pct = util;
  if (gpu == 0) r.memory_used_mib = 1000 + util;  // GPU 1 reports no memory: NULLs travel too
  r.power_mw = 250'000;
  return r;
}

inline JobUsageRow job_sample(std::string job, TimeMs at, int64_t egress) {
  JobUsageRow r;
  r.job_id = std::move(job);
  r.tenant_id = "ten_1";
  r.project_id = "prj_1";
  r.at = at;
  r.egress_bytes = egress;
  r.storage_io_bytes = 2 * egress;
  r.input_tokens = 7;
  r.requests = 1;
  return r;
}

// Every table of the schema gets rows: objects (named, unnamed, updated), tokens (one revoked),
// job events with coded reasons, audit entries, three usage batches across a month boundary of
// which the first is rolled up into minutes (raw rows and minute rows both remain), job metrics.
inline void seed_every_table(Store& s) {
  auto must = [](const Status& st, const char* what) { ASSERT_TRUE(st.ok()) << what << ": " << st.error().message; };
  must(s.write([&](StoreTx& tx) -> Status {
    for (const Record& r : {record("suppliers", "sup_1", "acme"), record("tenants", "ten_1", "globex"),
                            record("projects", "prj_1", "vision", "ten_1"), record("users", "usr_1", "ana", "ten_1")})
      if (auto st = tx.insert(r); !st) return st;
    Record job = record("jobs", "job_1", "train", "ten_1");
    job.project_id = "prj_1";
    job.state = "running";
    job.gpu_model = "h100-sxm5-80gb";
    if (auto st = tx.insert(job); !st) return st;
    if (auto st = tx.insert(record("jobs", "job_2", "", "ten_1")); !st) return st;  // unnamed
    Record artifact = record("artifacts", "art_1", "prj_1/weights", "ten_1");       // counts in tenant_storage
    artifact.project_id = "prj_1";
    artifact.body["size_bytes"] = 4096;
    artifact.body["sha256"] = std::string(64, 'e');
    if (auto st = tx.insert(artifact); !st) return st;
    auto got = tx.get("jobs", "job_1");
    if (!got) return got.error();
    got->body["state"] = "running";
    got->updated_at += 1000;
    if (auto st = tx.update(*got); !st) return st;
    TokenRow t{"tok_1", "usr_1", "ten_1", "", "tenant_admin", "ci", "hash_1", kJan31, 0, false};
    if (auto st = tx.insert_token(t); !st) return st;
    TokenRow t2{"tok_2", "usr_1", "ten_1", "", "tenant_member", "old", "hash_2", kJan31 + 1, kFeb1, false};
    if (auto st = tx.insert_token(t2); !st) return st;
    if (auto st = tx.revoke_token("tok_2"); !st) return st;
    for (const JobEvent& e :
         {JobEvent{"job_1", kJan31, "", "pending", Message("job.submitted")},
          JobEvent{"job_1", kJan31, "pending", "running", Message("sched.placed").arg("node", "n1")},
          JobEvent{"job_2", kJan31 + 5, "", "pending", verbatim("by hand")}})
      if (auto st = tx.append_job_event(e); !st) return st;
    for (const AuditEntry& a : {AuditEntry{kJan31, "usr_1", "create", "jobs", "job_1", "{}"},
                                AuditEntry{kJan31, "usr_1", "create", "jobs", "job_2", ""},
                                AuditEntry{kJan31 + 9, "usr_0", "update", "tenants", "ten_1", "budget"}})
      if (auto st = tx.append_audit(a); !st) return st;
    return tx.insert_job_metrics({{"job_1", "ten_1", "prj_1", "loss", kJan31, 0.1 + 0.2, false},
                                  {"job_1", "ten_1", "prj_1", "loss", kFeb1, 1e-300, false},
                                  {"job_1", "ten_1", "prj_1", "acc", kFeb1, 0.75, true},
                                  {"job_2", "ten_1", "prj_1", "acc", kFeb1 + kMin, -2.5, true}});
  }),
       "objects, tokens, events, audit, metrics");
  auto ingest = [&](const std::string& key, std::vector<GpuUsageRow> g, std::vector<JobUsageRow> j) {
    UsageBatchRows b{key, "sha-" + key, kFeb1 + 10 * kMin, "usr_1", std::move(g), std::move(j), "tenant:ten_1"};
    must(s.write([&](StoreTx& tx) -> Status {
      auto r = tx.insert_usage_batch(b);
      return r ? ok_status() : Status(r.error());
    }),
         key.c_str());
  };
  ingest("k1", {gpu_sample(kJan31 + 1000, 0, 40), gpu_sample(kJan31 + 2000, 0, 60), gpu_sample(kJan31 + 3000, 1, 10)},
         {job_sample("job_1", kJan31 + 1000, 100), job_sample("job_1", kJan31 + 1000, 5)});
  must(s.write([&](StoreTx& tx) -> Status {
    auto r = tx.roll_up_usage(kFeb1, 0);
    return r ? ok_status() : Status(r.error());
  }),
       "roll-up");
  ingest("k2", {gpu_sample(kFeb1 + 1000, 0, 90), gpu_sample(kFeb1 + kMin, 1, 20)},
         {job_sample("job_1", kFeb1 + 1000, 300), job_sample("job_2", kFeb1 + 2000, 1)});
  ingest("k3", {gpu_sample(kJan31 + 30'000, 0, 50)}, {job_sample("job_1", kJan31 + 30'000, 7)});
}

inline void expect_same_record(const Record& a, const Record& b) {
  EXPECT_EQ(a.kind + "/" + a.id, b.kind + "/" + b.id);
  EXPECT_EQ(a.name, b.name) << a.id;
  EXPECT_EQ(a.tenant_id, b.tenant_id) << a.id;
  EXPECT_EQ(a.supplier_id, b.supplier_id) << a.id;
  EXPECT_EQ(a.project_id, b.project_id) << a.id;
  EXPECT_EQ(a.state, b.state) << a.id;
  EXPECT_EQ(a.region, b.region) << a.id;
  EXPECT_EQ(a.gpu_model, b.gpu_model) << a.id;
  EXPECT_EQ(a.created_at, b.created_at) << a.id;
  EXPECT_EQ(a.updated_at, b.updated_at) << a.id;
  EXPECT_EQ(a.version, b.version) << a.id;
  EXPECT_EQ(a.body, b.body) << a.id;
}

template <class T>
T value_or_fail(Result<T> r, const char* what) {
  EXPECT_TRUE(r.ok()) << what << ": " << (r.ok() ? "" : r.error().message);
  return r.ok() ? std::move(r).value() : T{};
}

// Everything seed_every_table wrote reads back the same from `b` as from `a`; `expect_objects`
// objects in all.
inline void expect_same_records(Store& a, Store& b, size_t expect_objects = 7) {
  size_t objects = 0;
  for (const std::string& kind : kKinds) {
    auto x = value_or_fail(list_all(a, kind), "list a"), y = value_or_fail(list_all(b, kind), "list b");
    ASSERT_EQ(x.size(), y.size()) << kind;
    for (size_t i = 0; i < x.size(); ++i) expect_same_record(x[i], y[i]);
    objects += x.size();
  }
  EXPECT_EQ(objects, expect_objects);
  EXPECT_EQ(value_or_fail(a.tenant_stored_bytes("ten_1"), "stored a"), 4096);
  EXPECT_EQ(value_or_fail(b.tenant_stored_bytes("ten_1"), "stored b"), 4096);
  EXPECT_EQ(value_or_fail(b.count("artifacts", {{"sha256", std::string(64, 'e')}}), "by digest b"), 1);
  auto ta = value_or_fail(a.tokens({}), "tokens a"), tb = value_or_fail(b.tokens({}), "tokens b");
  ASSERT_EQ(ta.size(), 2u);
  ASSERT_EQ(ta.size(), tb.size());
  for (size_t i = 0; i < ta.size(); ++i) {
    EXPECT_EQ(ta[i].id, tb[i].id);
    EXPECT_EQ(ta[i].secret_hash, tb[i].secret_hash);
    EXPECT_EQ(ta[i].revoked, tb[i].revoked) << ta[i].id;
    EXPECT_EQ(ta[i].expires_at, tb[i].expires_at);
    EXPECT_EQ(ta[i].role, tb[i].role);
  }
  EXPECT_TRUE(b.token_by_hash("hash_1").value().has_value());
  for (const char* job : {"job_1", "job_2"}) {
    auto ea = value_or_fail(a.job_events(job), "events a"), eb = value_or_fail(b.job_events(job), "events b");
    ASSERT_EQ(ea.size(), eb.size()) << job;
    ASSERT_FALSE(ea.empty());
    for (size_t i = 0; i < ea.size(); ++i) {
      EXPECT_EQ(ea[i].at, eb[i].at);
      EXPECT_EQ(ea[i].to_state, eb[i].to_state);
      EXPECT_EQ(message_to_json(ea[i].reason), message_to_json(eb[i].reason));
    }
  }
  auto aa = value_or_fail(a.audit("", 1000), "audit a"), ab = value_or_fail(b.audit("", 1000), "audit b");
  ASSERT_EQ(aa.size(), 3u);
  ASSERT_EQ(aa.size(), ab.size());
  for (size_t i = 0; i < aa.size(); ++i) {
    EXPECT_EQ(aa[i].object_id, ab[i].object_id);  // newest first: the order of appends survived
    EXPECT_EQ(aa[i].detail, ab[i].detail);
  }
  const TimeMs from = kJan31 - kMin, to = kFeb1 + 10 * kMin;
  for (int64_t gpu : {0, 1}) {
    auto ga = value_or_fail(a.gpu_usage("nod_1", gpu, from, to, 1000), "gpu a");
    EXPECT_FALSE(ga.empty());
    EXPECT_EQ(ga, value_or_fail(b.gpu_usage("nod_1", gpu, from, to, 1000), "gpu b")) << "GPU " << gpu;
  }
  auto minutes = value_or_fail(a.gpu_usage("nod_1", 0, from, to, 1000), "gpu a");
  EXPECT_TRUE(std::any_of(minutes.begin(), minutes.end(), [](const auto& p) { return p.minute; }));
  EXPECT_TRUE(std::any_of(minutes.begin(), minutes.end(), [](const auto& p) { return !p.minute; }));
  for (const char* job : {"job_1", "job_2"})
    EXPECT_EQ(value_or_fail(a.job_usage(job, from, to, 1000), "job a"),
              value_or_fail(b.job_usage(job, from, to, 1000), "job b"));
  EXPECT_EQ(value_or_fail(a.tenant_job_usage("ten_1", from, to, 1000), "tenant a"),
            value_or_fail(b.tenant_job_usage("ten_1", from, to, 1000), "tenant b"));
  JobUsageFilter totals{"", "", "ten_1", from, to};
  auto tot = value_or_fail(a.job_usage_totals(totals), "totals a");
  EXPECT_EQ(tot.size(), 2u);
  EXPECT_EQ(tot, value_or_fail(b.job_usage_totals(totals), "totals b"));
  JobMetricFilter mf{"", "ten_1", from, to};
  auto ma = value_or_fail(a.job_metrics(mf), "metrics a"), mb = value_or_fail(b.job_metrics(mf), "metrics b");
  ASSERT_EQ(ma.size(), 4u);
  ASSERT_EQ(ma.size(), mb.size());
  for (size_t i = 0; i < ma.size(); ++i) {
    EXPECT_EQ(ma[i].job_id + ma[i].name, mb[i].job_id + mb[i].name);
    EXPECT_EQ(ma[i].at, mb[i].at);
    EXPECT_EQ(ma[i].value, mb[i].value);  // exactly: 0.1 + 0.2, 1e-300
    EXPECT_EQ(ma[i].higher_is_better, mb[i].higher_is_better);
  }
  GpuBucketQuery bq{"", -1, from, to, kMsPerHour};
  EXPECT_EQ(value_or_fail(a.gpu_usage_buckets(bq), "buckets a"), value_or_fail(b.gpu_usage_buckets(bq), "buckets b"));
  // The idempotency keys came along: the first batch sent again is a duplicate.
  UsageBatchRows again{"k1", "sha-k1",      kFeb1 + 20 * kMin, "usr_1", {gpu_sample(kJan31 + 1000, 0, 40)},
                       {},   "tenant:ten_1"};
  Result<UsageIngestOutcome> dup = Error::make(Code::kInternal, "not run");
  EXPECT_TRUE(b.write([&](StoreTx& tx) -> Status {
                 dup = tx.insert_usage_batch(again);
                 return dup ? ok_status() : Status(dup.error());
               }).ok());
  ASSERT_TRUE(dup.ok()) << dup.error().message;
  EXPECT_TRUE(dup->duplicate);
}

}  // namespace gpurent::testing_records
