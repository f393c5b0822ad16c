#include "model/reservation.h"

#include <gtest/gtest.h>

#include <set>

#include "core/message.h"

namespace gpurent {
namespace {

json good() {
  return json::parse(R"({"name": "acme-h100-2027", "tenant": "acme", "nodes": ["h100-01", "nod_00000000000000a1"],
    "starts_at": "2026-12-01T00:00:00Z", "ends_at": "2027-12-01T00:00:00Z", "offer": "lambda-h100",
    "note": "12-month reserved, contract C-2026-118"})");
}

std::set<std::string> fields_of(const Error& e) {
  std::set<std::string> out;
  for (const auto& f : e.fields) out.insert(f.field);
  return out;
}

TEST(Reservation, ParsesAndRoundTrips) {
  auto r = parse_reservation(good());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->nodes.size(), 2u);
  EXPECT_TRUE(r->active_at(*parse_rfc3339("2026-12-01T00:00:00Z", "t")));
  EXPECT_FALSE(r->active_at(*parse_rfc3339("2027-12-01T00:00:00Z", "t")));  // the end is exclusive
  auto again = parse_reservation(to_json(*r));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *r);
  EXPECT_EQ(index_of(*r).name, "acme-h100-2027");
}

TEST(Reservation, NamesEveryBadField) {
  json b = good();
  b["nodes"] = {"h100-01", "h100-01"};
  b["ends_at"] = "2026-11-01T00:00:00Z";
  b["colour"] = "red";
  b.erase("tenant");
  auto r = parse_reservation(b);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(fields_of(r.error()), (std::set<std::string>{"nodes[1]", "ends_at", "colour", "tenant"}));
  json c = good();
  c["nodes"] = json::array();
  c["starts_at"] = "tomorrow";
  c.erase("ends_at");
  auto r2 = parse_reservation(c);
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(fields_of(r2.error()), (std::set<std::string>{"nodes", "starts_at", "ends_at"}));
}

// Up to kMaxReservedNodes nodes (a market trade of that many settles into one reservation; the
// list reader's default of 1,024 items used to refuse more), and the stored form decodes again.
TEST(Reservation, HoldsUpToItsNodeLimit) {
  json b = good();
  b["nodes"] = json::array();
  for (size_t i = 0; i < kMaxReservedNodes; ++i) b["nodes"].push_back("n" + std::to_string(i));
  auto r = parse_reservation(b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->nodes.size(), kMaxReservedNodes);
  json stored = to_json(*r);
  stored["node_ids"] = stored["nodes"];
  auto back = decode_reservation(stored);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->node_ids.size(), kMaxReservedNodes);
  b["nodes"].push_back("one-more");
  auto over = parse_reservation(b);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(fields_of(over.error()), std::set<std::string>{"nodes"});
  EXPECT_NE(over.error().message.find("4096"), std::string::npos) << over.error().message;
}

TEST(Reservation, ReasonsAreMessageCodesThatRenderInEveryLanguage) {
  json b = good();
  b.erase("ends_at");
  auto r = parse_reservation(b);
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(r.error().fields.size(), 1u);
  const FieldError& e = r.error().fields[0];
  EXPECT_EQ(e.coded.code, "reservation.time_required");
  EXPECT_EQ(e.reason, "is required (RFC 3339, e.g. 2027-12-01T00:00:00Z)");
  EXPECT_EQ(render(r.error().detail, "zh"), "ends_at：为必填项（RFC 3339 格式，例如 2027-12-01T00:00:00Z）");

  b = good();
  b["name"] = "Acme";
  auto bad_name = parse_reservation(b);
  ASSERT_FALSE(bad_name.ok());
  EXPECT_EQ(bad_name.error().fields[0].reason, "'Acme' is not valid: lowercase letters, digits and '-'");
  EXPECT_EQ(render(bad_name.error().fields[0].coded, "zh"), "“Acme”无效：小写字母、数字和“-”");
}

}  // namespace
}  // namespace gpurent
