#include "meter/usage.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "core/message.h"

namespace gpurent {
namespace {

using json = nlohmann::json;

const TimeMs kNow = parse_rfc3339("2026-11-29T12:00:00Z", "").value();

UsageParseOptions opts(size_t max = kMaxSamplesPerBatch) { return {kNow, max}; }

json good_batch() {
  return json::parse(R"({
    "idempotency_key": "agent-node7:000123",
    "gpu_samples": [
      {"at": "2026-11-29T11:59:00Z", "node": "node-7", "gpu": 3, "utilization_pct": 87, "memory_used_mib": 40000,
       "power_mw": 350000, "sm_clock_mhz": 1980, "gr_engine_active_pct": 80},
      {"at": "2026-11-29T11:59:15Z", "uuid": "GPU-0123abcd-4567-89ef-0123-456789abcdef", "utilization_pct": 0}
    ],
    "job_samples": [
      {"at": "2026-11-29T11:59:00Z", "job": "job_0123456789abcdef", "egress_bytes": 1048576, "input_tokens": 12,
       "output_tokens": 300, "requests": 2, "storage_io_bytes": 0}
    ]})");
}

std::map<std::string, std::string> errors_of(const Result<UsageBatch>& r) {
  std::map<std::string, std::string> out;
  if (!r.ok())
    for (const auto& f : r.error().fields) out[f.field] = f.reason;
  return out;
}

TEST(UsageBatch, ParsesEveryField) {
  auto b = parse_usage_batch(good_batch(), opts());
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->idempotency_key, "agent-node7:000123");
  ASSERT_EQ(b->gpu_samples.size(), 2u);
  const GpuSample& g = b->gpu_samples[0];
  EXPECT_EQ(g.at, kNow - 60'000);
  EXPECT_EQ(g.node, "node-7");
  EXPECT_EQ(g.gpu, 3);
  EXPECT_EQ(g.metrics.utilization_pct, 87);
  EXPECT_EQ(g.metrics.memory_used_mib, 40000);
  EXPECT_EQ(g.metrics.power_mw, 350000);
  EXPECT_EQ(g.metrics.sm_clock_mhz, 1980);
  EXPECT_EQ(g.metrics.gr_engine_active_pct, 80);
  EXPECT_EQ(b->gpu_samples[1].uuid, "GPU-0123abcd-4567-89ef-0123-456789abcdef");
  EXPECT_FALSE(b->gpu_samples[1].gpu.has_value());
  EXPECT_FALSE(b->gpu_samples[1].metrics.power_mw.has_value());
  ASSERT_EQ(b->job_samples.size(), 1u);
  EXPECT_EQ(b->job_samples[0].delta, (JobCounters{0, 1048576, 12, 300, 2}));
  EXPECT_EQ(b->size(), 3u);
}

TEST(UsageBatch, NamesEachBadFieldWithItsPath) {
  json body = good_batch();
  body["idempotency_key"] = "has space";
  body["gpu_samples"][0]["utilization_pct"] = 130;
  body["gpu_samples"][0]["power_mw"] = 350.5;  // floats are refused
  body["gpu_samples"][1]["uuid"] = "GPU-XYZ";
  body["gpu_samples"].push_back({{"at", "yesterday"}, {"node", "n"}, {"utilization_pct", 1}, {"temp_c", 40}});
  body["job_samples"][0]["egress_bytes"] = -5;
  body["job_samples"].push_back({{"at", "2026-11-29T11:00:00Z"}});
  auto errs = errors_of(parse_usage_batch(body, opts()));
  EXPECT_NE(errs["idempotency_key"].find("letters, digits"), std::string::npos);
  EXPECT_EQ(errs["gpu_samples[0].utilization_pct"], "must be at most 100 (got 130)");
  EXPECT_EQ(errs["gpu_samples[0].power_mw"], "must be a whole number");
  EXPECT_NE(errs["gpu_samples[1].uuid"].find("is not a GPU UUID"), std::string::npos);
  EXPECT_FALSE(errs["gpu_samples[2].at"].empty());
  EXPECT_NE(errs["gpu_samples[2].gpu"].find("is required"), std::string::npos);
  EXPECT_EQ(errs["gpu_samples[2].temp_c"], "unknown field");
  EXPECT_EQ(errs["job_samples[0].egress_bytes"], "must be at least 0 (got -5)");
  EXPECT_EQ(errs["job_samples[1].job"], "is required");
  EXPECT_EQ(errs.size(), 9u);
}

TEST(UsageBatch, GpuIsNamedOneWayOnly) {
  json body = {{"idempotency_key", "k"},
               {"gpu_samples",
                {{{"at", "2026-11-29T11:00:00Z"},
                  {"uuid", "GPU-0123abcd-4567-89ef-0123-456789abcdef"},
                  {"node", "n"},
                  {"gpu", 1},
                  {"utilization_pct", 5}},
                 {{"at", "2026-11-29T11:00:00Z"}, {"utilization_pct", 5}}}}};
  auto errs = errors_of(parse_usage_batch(body, opts()));
  EXPECT_NE(errs["gpu_samples[0].node"].find("together with uuid"), std::string::npos);
  EXPECT_NE(errs["gpu_samples[0].gpu"].find("together with uuid"), std::string::npos);
  EXPECT_NE(errs["gpu_samples[1].node"].find("or give the GPU's uuid"), std::string::npos);
}

TEST(UsageBatch, RefusesEmptyOversizedRepeatedAndOutOfWindow) {
  EXPECT_EQ(errors_of(parse_usage_batch(json{{"idempotency_key", "k"}}, opts()))["gpu_samples"],
            "a batch needs at least one sample (gpu_samples or job_samples)");
  EXPECT_TRUE(errors_of(parse_usage_batch(json{{"gpu_samples", json::array()}}, opts())).count("idempotency_key"));
  auto big = errors_of(parse_usage_batch(good_batch(), opts(2)));
  EXPECT_EQ(big["gpu_samples"], "a batch holds at most 2 samples (got 3): split it into several batches");

  json rep = good_batch();
  rep["gpu_samples"].push_back(rep["gpu_samples"][0]);
  EXPECT_EQ(errors_of(parse_usage_batch(rep, opts()))["gpu_samples[2]"],
            "repeats the same GPU and time as an earlier sample");

  json old = good_batch();
  old["gpu_samples"][0]["at"] = format_rfc3339(kNow - kSampleMaxAgeMs - 1);
  old["job_samples"][0]["at"] = format_rfc3339(kNow + kSampleMaxAheadMs + 1);
  auto errs = errors_of(parse_usage_batch(old, opts()));
  EXPECT_NE(errs["gpu_samples[0].at"].find("more than 30 days in the past"), std::string::npos);
  EXPECT_NE(errs["job_samples[0].at"].find("in the future"), std::string::npos);
  old["gpu_samples"][0]["at"] = format_rfc3339(kNow - kSampleMaxAgeMs);
  old["job_samples"][0]["at"] = format_rfc3339(kNow + kSampleMaxAheadMs);
  EXPECT_TRUE(parse_usage_batch(old, opts()).ok());
}

TEST(UsageBatch, StopsReportingAfterAHundredErrors) {
  json body = {{"idempotency_key", "k"}, {"gpu_samples", json::array()}};
  for (int i = 0; i < 1000; ++i)
    body["gpu_samples"].push_back(
        {{"at", "2026-11-29T11:00:00Z"}, {"node", "n"}, {"gpu", i % 1000}, {"utilization_pct", 101}});
  auto r = parse_usage_batch(body, opts());
  ASSERT_FALSE(r.ok());
  EXPECT_LE(r.error().fields.size(), 101u);
  EXPECT_EQ(r.error().fields.back().reason, "validation stopped after 100 errors");
  EXPECT_EQ(r.error().fields.back().coded.code, "usage.validation_stopped");
  EXPECT_EQ(render(r.error().fields.back().coded, "zh"), "发现 100 处错误后停止校验");
}

// Reasons are message codes with arguments, so the API words them in the caller's language.
TEST(UsageBatch, ReasonsAreMessageCodes) {
  json body = good_batch();
  body["gpu_samples"][1]["uuid"] = "GPU-XYZ";
  body["gpu_samples"][1]["node"] = "n";
  auto r = parse_usage_batch(body, opts());
  ASSERT_FALSE(r.ok());
  std::map<std::string, FieldError> by_field;
  for (const auto& f : r.error().fields) by_field[f.field] = f;
  const FieldError& uuid = by_field["gpu_samples[1].uuid"];
  EXPECT_EQ(uuid.coded.code, "usage.uuid_invalid");
  EXPECT_EQ(render_en(uuid.coded), uuid.reason);
  EXPECT_EQ(render(uuid.coded, "zh"), "“GPU-XYZ”不是 GPU UUID（GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx，小写十六进制）");
  EXPECT_EQ(by_field["gpu_samples[1].node"].coded.code, "usage.not_with_uuid");

  auto big = parse_usage_batch(good_batch(), opts(2));
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().fields[0].coded.code, "usage.batch_too_large");
  EXPECT_EQ(render(big.error().detail, "zh"), "gpu_samples：一个批次最多 2 个样本（实际为 3 个）：请拆分为多个批次");

  json old = good_batch();
  old["job_samples"][0]["at"] = format_rfc3339(kNow + kSampleMaxAheadMs + 1);
  auto ahead = parse_usage_batch(old, opts());
  ASSERT_FALSE(ahead.ok());
  EXPECT_EQ(ahead.error().fields[0].coded.code, "usage.at_in_future");
  EXPECT_EQ(ahead.error().fields[0].coded.text_of("now"), "2026-11-29T12:00:00.000Z");

  auto empty = parse_usage_batch(json{{"idempotency_key", "k"}}, opts());
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().fields[0].coded.code, "usage.batch_empty");
  EXPECT_EQ(render(empty.error().detail, "zh"), "gpu_samples：一个批次至少需要一个样本（gpu_samples 或 job_samples）");
}

TEST(UsageBatch, DigestIgnoresJsonFormAndSeesEveryValue) {
  auto a = parse_usage_batch(good_batch(), opts()).value();
  auto b = parse_usage_batch(json::parse(good_batch().dump(2)), opts()).value();
  b.idempotency_key = "another-key";
  EXPECT_EQ(usage_batch_digest(a), usage_batch_digest(b));
  EXPECT_EQ(usage_batch_digest(a).size(), 64u);
  auto c = a;
  c.job_samples[0].delta.requests += 1;
  EXPECT_NE(usage_batch_digest(a), usage_batch_digest(c));
  auto d = a;
  d.gpu_samples[1].metrics.power_mw = 0;  // absent and zero differ
  EXPECT_NE(usage_batch_digest(a), usage_batch_digest(d));
  auto e = a;
  e.gpu_samples[0].node = "node-7|3";  // no value can spoof a field boundary
  e.gpu_samples[0].gpu.reset();
  EXPECT_NE(usage_batch_digest(a), usage_batch_digest(e));
}

TEST(UsageBatch, IdempotencyKeyAlphabet) {
  EXPECT_TRUE(valid_idempotency_key("dcgm:node-7:1764417600000"));
  EXPECT_TRUE(valid_idempotency_key(std::string(128, 'a')));
  EXPECT_FALSE(valid_idempotency_key(std::string(129, 'a')));
  EXPECT_FALSE(valid_idempotency_key(""));
  EXPECT_FALSE(valid_idempotency_key("a/b"));
}

// The fast path gives what the document path gives, or declines.
void expect_same(const json& body, bool fast_must_accept) {
  auto slow = parse_usage_batch(body, opts());
  auto fast = parse_usage_batch_fast(body.dump(), opts());
  if (!slow.ok()) {
    EXPECT_FALSE(fast.has_value()) << "fast path accepted what the document path refuses: "
                                   << body.dump().substr(0, 300);
    return;
  }
  if (fast_must_accept) {
    ASSERT_TRUE(fast.has_value()) << body.dump().substr(0, 300);
  }
  if (!fast) return;
  EXPECT_EQ(fast->idempotency_key, slow->idempotency_key);
  EXPECT_EQ(fast->gpu_samples, slow->gpu_samples);
  EXPECT_EQ(fast->job_samples, slow->job_samples);
}

TEST(UsageBatchFast, AgreesWithTheDocumentPath) {
  expect_same(good_batch(), true);
  std::mt19937_64 rng(42);
  auto pick = [&](int64_t n) { return static_cast<int64_t>(rng() % static_cast<uint64_t>(n)); };
  for (int round = 0; round < 300; ++round) {
    json b = {{"idempotency_key", "k-" + std::to_string(round)},
              {"gpu_samples", json::array()},
              {"job_samples", json::array()}};
    for (int i = 0, n = 1 + static_cast<int>(pick(20)); i < n; ++i) {
      json g = {{"at", format_rfc3339(kNow - pick(3'600'000))}, {"utilization_pct", pick(101)}};
      if (pick(4) == 0)
        g["uuid"] = "GPU-0123abcd-4567-89ef-0123-4567" + std::to_string(10000000 + pick(89999999));
      else
        g["node"] = "node-" + std::to_string(pick(3)), g["gpu"] = pick(8);
      if (pick(2)) g["memory_used_mib"] = pick(81920);
      if (pick(2)) g["power_mw"] = pick(700'000);
      if (pick(3)) g["sm_clock_mhz"] = pick(2000);
      if (pick(3)) g["gr_engine_active_pct"] = pick(101);
      b["gpu_samples"].push_back(g);
    }
    for (int i = 0, n = static_cast<int>(pick(5)); i < n; ++i)
      b["job_samples"].push_back({{"at", format_rfc3339(kNow - pick(3'600'000))},
                                  {"job", "job-" + std::to_string(pick(4))},
                                  {"egress_bytes", pick(1 << 30)},
                                  {"requests", pick(100)}});
    expect_same(b, true);  // random repeats of a GPU and time make some invalid: both must agree
    // One mutation each: every one must be refused by both paths, or accepted identically.
    json m = b;
    switch (round % 12) {
      case 0:
        m["gpu_samples"][0]["utilization_pct"] = 101;
        break;
      case 1:
        m["gpu_samples"][0]["utilization_pct"] = 1.5;
        break;
      case 2:
        m["gpu_samples"][0]["extra"] = 1;
        break;
      case 3:
        m["gpu_samples"][0].erase("at");
        break;
      case 4:
        m["gpu_samples"][0]["at"] = format_rfc3339(kNow + kSampleMaxAheadMs + 1);
        break;
      case 5:
        m["gpu_samples"][0]["uuid"] = "GPU-0123ABCD-4567-89ef-0123-456789abcdef";
        break;
      case 6:
        m["gpu_samples"][0]["memory_used_mib"] = nullptr;
        break;  // null: absent (declined by fast)
      case 7:
        m["gpu_samples"][0]["node"] = "n\u00f6de";
        break;  // non-ASCII: declined by fast
      case 8:
        m["idempotency_key"] = "a b";
        break;
      case 9:
        m["gpu_samples"].push_back(m["gpu_samples"][0]);
        break;
      case 10:
        m["job_samples"].push_back({{"at", format_rfc3339(kNow)}, {"job", "j"}, {"egress_bytes", -1}});
        break;
      case 11:
        m["gpu_samples"] = json::object();
        break;
    }
    expect_same(m, false);
  }
  EXPECT_FALSE(parse_usage_batch_fast("{\"idempotency_key\":\"k\",\"job_samples\":[]} x", opts()));
  EXPECT_FALSE(
      parse_usage_batch_fast("{\"idempotency_key\":\"k\",\"idempotency_key\":\"k\",\"job_samples\":[{\"at\":\"2026-11-"
                             "29T11:00:00Z\",\"job\":\"j\"}]}",
                             opts()));
  EXPECT_TRUE(parse_usage_batch_fast(
      "{\"idempotency_key\":\"k\",\"job_samples\":[{\"at\":\"2026-11-29T11:00:00Z\",\"job\":\"j\"}]}", opts()));
  auto too_many = parse_usage_batch_fast(good_batch().dump(), opts(2));
  EXPECT_FALSE(too_many.has_value());
}

}  // namespace
}  // namespace gpurent
