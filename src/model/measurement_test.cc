#include "model/measurement.h"

#include <gtest/gtest.h>

#include "model/model_test_util.h"

namespace gpurent {
namespace {

using testing_util::BadCase;
using testing_util::expect_each_case_fails;
using testing_util::fails_only_on;

json incident() {
  return {{"kind", "incident"},
          {"node", "h100-05"},
          {"from", "2026-11-20T09:00:00Z"},
          {"to", "2026-11-20T11:00:00Z"},
          {"note", "PSU failure"}};
}

// What an acceptance run stores — its id, raw multi-line tool output as evidence — decodes again
// (every reader decodes: invoices, supplier scores, the dashboard). A body may not set the run,
// and evidence keeps line breaks and tabs but no other control character.
TEST(Measurement, AnAcceptanceRunsRecordDecodesWithItsRawEvidence) {
  json fp16 = {{"kind", "fp16_tflops"}, {"node", "h100-05"}, {"gpu", 3}, {"at", "2026-11-20T09:00:00Z"},
               {"fp16_tflops", "871.4"}, {"method", "acceptance"}, {"evidence", "{\"gpu\":3}\n{\"gpu\":3,\"x\":\"a\tb\"}\n"}};
  Measurement m = parse_measurement(fp16).value();
  m.acceptance_run = "acc_0123456789abcdef";
  m.node_id = "nod_0123456789abcdef";
  auto back = decode_measurement(to_json(m));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->acceptance_run, "acc_0123456789abcdef");
  EXPECT_EQ(back->evidence, m.evidence);
  json body = fp16;
  body["acceptance_run"] = "acc_0123456789abcdef";
  EXPECT_EQ(parse_measurement(body).value().acceptance_run, "") << "a server key: never taken from a body";
  body["evidence"] = "bell\x07";
  EXPECT_TRUE(fails_only_on(parse_measurement(body), "evidence", "line breaks and tabs"));
}

TEST(Measurement, ParsesEachKindAndRoundTrips) {
  json fp16 = {{"kind", "fp16_tflops"},
               {"node", "h100-05"},
               {"gpu", 3},
               {"at", "2026-11-20T09:00:00Z"},
               {"fp16_tflops", "871.4"}};
  auto m = parse_measurement(fp16);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->tflops_x10, 8714);
  EXPECT_EQ(parse_measurement(to_json(*m)).value(), *m);

  json nccl = {{"kind", "nccl_busbw"},
               {"node", "h100-05"},
               {"from", "2026-11-20T09:00:00Z"},
               {"to", "2026-11-20T10:00:00Z"},
               {"busbw_gbps", 380}};
  auto n = parse_measurement(nccl);
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_EQ(parse_measurement(to_json(*n)).value(), *n);

  auto i = parse_measurement(incident());
  ASSERT_TRUE(i.ok()) << i.error().message;
  EXPECT_FALSE(i->responded_at);
  EXPECT_FALSE(to_json(*i).contains("responded_at"));
}

TEST(Measurement, AnIncidentMayCarryWhenTheSupplierResponded) {
  json body = incident();
  body["responded_at"] = "2026-11-20T09:12:00Z";
  auto m = parse_measurement(body);
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_TRUE(m->responded_at);
  EXPECT_EQ(*m->responded_at - *m->from, 12 * 60'000);
  EXPECT_EQ(to_json(*m)["responded_at"], "2026-11-20T09:12:00.000Z");
  EXPECT_EQ(parse_measurement(to_json(*m)).value(), *m);
  // Both ends of the outage are allowed: a response at the very start or at the moment of repair.
  body["responded_at"] = "2026-11-20T09:00:00Z";
  EXPECT_TRUE(parse_measurement(body).ok());
  body["responded_at"] = "2026-11-20T11:00:00Z";
  EXPECT_TRUE(parse_measurement(body).ok());
}

TEST(Measurement, RespondedAtIsCheckedAndOnlyForIncidents) {
  expect_each_case_fails(incident(),
                         {{"before the outage", [](json& j) { j["responded_at"] = "2026-11-20T08:59:59Z"; },
                           "responded_at", "must lie between from and to"},
                          {"after the outage", [](json& j) { j["responded_at"] = "2026-11-20T11:00:01Z"; },
                           "responded_at", "must lie between from and to"},
                          {"not a time", [](json& j) { j["responded_at"] = "soon"; }, "responded_at", "RFC 3339"},
                          {"not a string", [](json& j) { j["responded_at"] = 12; }, "responded_at", "RFC 3339"}},
                         [](const json& j) { return parse_measurement(j); });
  json nccl = {{"kind", "nccl_busbw"},         {"node", "h100-05"}, {"from", "2026-11-20T09:00:00Z"},
               {"to", "2026-11-20T10:00:00Z"}, {"busbw_gbps", 380}, {"responded_at", "2026-11-20T09:10:00Z"}};
  EXPECT_TRUE(fails_only_on(parse_measurement(nccl), "responded_at", "is not used by a nccl_busbw measurement"));
  json fp16 = {{"kind", "fp16_tflops"},        {"node", "h100-05"},      {"gpu", 3},
               {"at", "2026-11-20T09:00:00Z"}, {"fp16_tflops", "871.4"}, {"responded_at", "2026-11-20T09:10:00Z"}};
  EXPECT_TRUE(fails_only_on(parse_measurement(fp16), "responded_at", "is not used by a fp16_tflops measurement"));
  // An unknown kind reports the kind alone, not every key it cannot judge.
  json unknown = incident();
  unknown["kind"] = "smoke";
  unknown["responded_at"] = "2026-11-20T09:10:00Z";
  EXPECT_TRUE(fails_only_on(parse_measurement(unknown), "kind", "unknown value 'smoke'"));
}

TEST(Measurement, IncidentWindowErrors) {
  expect_each_case_fails(
      incident(),
      {{"to before from", [](json& j) { j["to"] = "2026-11-20T08:00:00Z"; }, "to", "must be after from"},
       {"missing from", [](json& j) { j.erase("from"); }, "from", "is required"},
       {"gpu on an incident", [](json& j) { j["gpu"] = 1; }, "gpu", "is not used by a incident"}},
      [](const json& j) { return parse_measurement(j); });
  json j = incident();
  j["gpu"] = 1;
  FieldError e = testing_util::only_field_error(parse_measurement(j));
  EXPECT_EQ(e.coded.code, "measurement.field_not_used");
  EXPECT_EQ(e.coded.text_of("kind"), "incident");
  EXPECT_EQ(render(e.coded, "zh"), "incident 测量不使用此字段");
}

}  // namespace
}  // namespace gpurent
