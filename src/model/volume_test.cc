#include "model/volume.h"

#include <gtest/gtest.h>

namespace gpurent {
namespace {

std::vector<std::string> fields_of(const Error& e) {
  std::vector<std::string> out;
  for (const auto& fe : e.fields) out.push_back(fe.field);
  return out;
}

TEST(Volume, IsCheckedAndRoundTrips) {
  auto v = parse_volume(json{{"name", "data"}, {"size_gb", 500}, {"description", "shards"}, {"id", "vol_x"}});
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(v->size_gb, 500);
  v->tenant_id = "ten_1";
  auto back = decode_volume(to_json(*v));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, *v);
  EXPECT_EQ(index_of(*v).tenant_id, "ten_1");
  EXPECT_EQ(fields_of(parse_volume(json{{"name", "data"}}).error()), std::vector<std::string>{"size_gb"});
  EXPECT_EQ(fields_of(parse_volume(json{{"name", "data"}, {"size_gb", kMaxVolumeGb + 1}}).error()),
            std::vector<std::string>{"size_gb"});
  EXPECT_EQ(fields_of(parse_volume(json{{"name", "data"}, {"size_gb", "10"}}).error()), std::vector<std::string>{"size_gb"});
  EXPECT_EQ(fields_of(parse_volume(json{{"name", "a/b"}, {"size_gb", 1}}).error()), std::vector<std::string>{"name"});
  EXPECT_EQ(fields_of(parse_volume(json{{"name", "d"}, {"size_gb", 1}, {"mount", "/x"}}).error()),
            std::vector<std::string>{"mount"});
  EXPECT_FALSE(decode_volume(json{{"name", "data"}, {"size_gb", 5}})) << "a stored volume has its tenant";
}

TEST(Volume, KeptRecordsRoundTrip) {
  KeptVolume k{"vol_1", "data", "off_1", "", 5'000'000'000, 1000, std::nullopt};
  auto back = decode_kept_volume(to_json(k));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, k);
  k.to = 2000;
  EXPECT_EQ(*decode_kept_volume(to_json(k)), k);
  json bad = to_json(k);
  bad["bytes"] = "5";
  EXPECT_FALSE(decode_kept_volume(bad));
}

}  // namespace
}  // namespace gpurent
