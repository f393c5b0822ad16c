#include "demo/price_lists.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "demo/builtin_prices.h"
#include "demo/demo_world.h"
#include "demo/world_parts.h"
#include "io/files.h"

namespace gpurent {
namespace {

Money usd_micros(int64_t micros) { return Money(micros, Currency::kUSD); }

const GpuPrice* find_price(const std::vector<GpuPrice>& v, const std::string& provider, const std::string& model) {
  for (const GpuPrice& g : v)
    if (g.provider == provider && g.gpu_model == model) return &g;
  return nullptr;
}

// The shared price lists, or "" when ../shared/data is absent.
std::string shared_prices_dir() {
  const std::string dir = default_data_dir();
  if (dir.empty()) return "";
  const std::filesystem::path p = std::filesystem::path(dir) / "prices";
  return std::filesystem::is_regular_file(p / "lambda_vms.csv") &&
                 std::filesystem::is_regular_file(p / "runpod_vms.csv")
             ? p.string()
             : "";
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// --- CSV ---------------------------------------------------------------------------------------

TEST(ParseCsv, CrlfQuotesAndBom) {
  const std::string text =
      "\xEF\xBB\xBF"
      "a,b,c\r\n"
      "1,\"x, \"\"quoted\"\"\",3\r\n"
      "\r\n"
      "4,\"two\r\nlines\",6";  // last line without a line end
  auto t = parse_csv(text, "t.csv");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->header, (std::vector<std::string>{"a", "b", "c"}));  // BOM stripped, no stray '\r'
  ASSERT_EQ(t->rows.size(), 2u);
  EXPECT_EQ(t->rows[0], (std::vector<std::string>{"1", "x, \"quoted\"", "3"}));
  EXPECT_EQ(t->rows[1], (std::vector<std::string>{"4", "two\r\nlines", "6"}));
  EXPECT_EQ(t->row_lines, (std::vector<size_t>{2, 4}));
  EXPECT_EQ(t->column("c"), std::optional<size_t>(2));
  EXPECT_EQ(t->column("C"), std::nullopt);
}

TEST(ParseCsv, LfAndCrlfGiveTheSameTable) {
  auto lf = parse_csv("h1,h2\nv1,\nv3,v4\n", "lf");
  auto crlf = parse_csv("h1,h2\r\nv1,\r\nv3,v4\r\n", "crlf");
  ASSERT_TRUE(lf && crlf);
  EXPECT_EQ(lf->header, crlf->header);
  EXPECT_EQ(lf->rows, crlf->rows);
  EXPECT_EQ(crlf->rows[0][1], "");  // an empty last field, not "\r"
}

TEST(ParseCsv, ErrorsNameTheLine) {
  auto short_row = parse_csv("a,b,c\r\n1,2,3\r\n4,5\r\n", "p.csv");
  ASSERT_FALSE(short_row);
  EXPECT_EQ(short_row.error().message, "p.csv line 3: has 2 fields, the header has 3");
  auto open_quote = parse_csv("a,b\n1,\"never closed\n", "q.csv");
  ASSERT_FALSE(open_quote);
  EXPECT_NE(open_quote.error().message.find("q.csv line 2: a quoted field is not closed"), std::string::npos);
  EXPECT_FALSE(parse_csv("\r\n\r\n", "empty.csv"));
}

// --- per-GPU arithmetic ------------------------------------------------------------------------

TEST(PerGpuHour, ExactDecimalDivision) {
  auto h100 = per_gpu_hour("23.92", 8);  // Lambda gpu_8x_h100_sxm5
  ASSERT_TRUE(h100);
  EXPECT_EQ(*h100, usd_micros(2'990'000));
  EXPECT_EQ(h100->amount_string(), "2.99");
  EXPECT_EQ(per_gpu_hour("14.32", 8)->amount_string(), "1.79");
  EXPECT_EQ(per_gpu_hour("0.43", 1)->amount_string(), "0.43");
  // 0.2 / 3 = 0.0666666...: rounded half to even at the micro-unit, not through a double.
  EXPECT_EQ(*per_gpu_hour("0.2", 3), usd_micros(66'667));
  // 0.000010 / 4 = 2.5 micro -> 2 (half to even), 0.000030 / 4 = 7.5 micro -> 8.
  EXPECT_EQ(*per_gpu_hour("0.00001", 4), usd_micros(2));
  EXPECT_EQ(*per_gpu_hour("0.00003", 4), usd_micros(8));
  EXPECT_EQ(per_gpu_hour("31.92", 8, Currency::kCNY)->currency(), Currency::kCNY);
}

TEST(PerGpuHour, RejectsWhatIsNotAPrice) {
  EXPECT_FALSE(per_gpu_hour("1e-05", 1));  // exponent form
  EXPECT_FALSE(per_gpu_hour("", 8));
  EXPECT_FALSE(per_gpu_hour("0", 8));
  EXPECT_FALSE(per_gpu_hour("-1.00", 8));
  EXPECT_FALSE(per_gpu_hour("2.99", 0));
  EXPECT_FALSE(per_gpu_hour("1.0000001", 1));  // more than 6 decimals
}

// --- which rows the demo uses ------------------------------------------------------------------

TEST(DemoGpuModel, PerProviderNaming) {
  EXPECT_EQ(demo_gpu_model("lambda", "gpu_8x_h100_sxm5", "H100"), "h100-sxm5-80gb");
  EXPECT_EQ(demo_gpu_model("lambda", "gpu_1x_h100_sxm5", "H100"), "h100-sxm5-80gb");
  EXPECT_EQ(demo_gpu_model("lambda", "gpu_8x_a100_80gb_sxm4", "A100-80GB"), "a100-sxm4-80gb");
  EXPECT_EQ(demo_gpu_model("lambda", "gpu_1x_h100_pcie", "H100"), "");  // PCIe H100: not in the demo
  EXPECT_EQ(demo_gpu_model("lambda", "gpu_8x_a100", "A100"), "");       // 40 GB
  EXPECT_EQ(demo_gpu_model("runpod", "8x_A100-80GB_SECURE", "A100-80GB"), "a100-pcie-80gb");
  EXPECT_EQ(demo_gpu_model("runpod", "8x_A100-80GB-SXM_SECURE", "A100-80GB-SXM"), "a100-sxm4-80gb");
  EXPECT_EQ(demo_gpu_model("runpod", "8x_H100-SXM_SECURE", "H100-SXM"), "h100-sxm5-80gb");
  EXPECT_EQ(demo_gpu_model("runpod", "8x_H100_SECURE", "H100"), "");  // PCIe H100
  EXPECT_EQ(demo_gpu_model("runpod", "1x_H200-SXM_SECURE", "H200-SXM"), "h200-sxm-141gb");
  EXPECT_EQ(demo_gpu_model("runpod", "1x_L40S_SECURE", "L40S"), "l40s-48gb");
  EXPECT_EQ(demo_gpu_model("aws", "p5.48xlarge", "H100"), "");
}

// --- reading a list ----------------------------------------------------------------------------

TEST(ReadPriceList, ColumnsByNameAndOnlyDemoRows) {
  // Columns in an order of their own; a malformed row of a model the demo does not use is ignored.
  const std::string text =
      "AvailabilityZone,Price,SpotPrice,Region,AcceleratorCount,AcceleratorName,InstanceType\r\n"
      "US-TX-3,31.92,28.72,US,8.0,H200-SXM,8x_H200-SXM_SECURE\r\n"
      ",3.99,,US,1,H200-SXM,1x_H200-SXM_SECURE\r\n"
      "US-TX-3,not-a-price,,US,2.5,RTX4090,2x_RTX4090_SECURE\r\n";
  auto rows = read_price_list("runpod", text, "r.csv");
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 2u);
  const InstancePrice& a = (*rows)[0];
  EXPECT_EQ(a.gpu_model, "h200-sxm-141gb");
  EXPECT_EQ(a.gpu_count, 8);
  EXPECT_EQ(a.zone, "US-TX-3");
  EXPECT_EQ(a.price_per_gpu.amount_string(), "3.99");
  ASSERT_TRUE(a.spot_per_gpu);
  EXPECT_EQ(a.spot_per_gpu->amount_string(), "3.59");
  EXPECT_EQ(a.line, 2u);
  EXPECT_EQ((*rows)[1].zone, "US");  // no zone: the region stands in
  EXPECT_FALSE((*rows)[1].spot_per_gpu);
}

TEST(ReadPriceList, ErrorsNameFileLineAndColumn) {
  const std::string header = "InstanceType,AcceleratorName,AcceleratorCount,Price,SpotPrice,Region\r\n";
  auto bad_price = read_price_list("lambda", header + "gpu_8x_h100_sxm5,H100,8.0,23,92,,us-east-1\r\n", "l.csv");
  EXPECT_FALSE(bad_price);  // one field too many: the row, not the price, is reported
  auto bad_count = read_price_list("lambda", header + "gpu_8x_h100_sxm5,H100,8.5,23.92,,us-east-1\r\n", "l.csv");
  ASSERT_FALSE(bad_count);
  EXPECT_EQ(bad_count.error().message, "l.csv line 2: AcceleratorCount: '8.5' is not a whole GPU count");
  auto bad_spot = read_price_list("lambda", header + "gpu_8x_h100_sxm5,H100,8,23.92,cheap,us-east-1\r\n", "l.csv");
  ASSERT_FALSE(bad_spot);
  EXPECT_NE(bad_spot.error().message.find("l.csv line 2: SpotPrice:"), std::string::npos);
  auto no_column = read_price_list("lambda", "InstanceType,AcceleratorName,AcceleratorCount,Price,Region\r\n", "l.csv");
  ASSERT_FALSE(no_column);
  EXPECT_EQ(no_column.error().message, "l.csv: no column 'SpotPrice' in the header");
  EXPECT_FALSE(read_price_list("aws", header, "a.csv"));
}

// --- the representative-price rule --------------------------------------------------------------

InstancePrice row(const std::string& type, const std::string& model, int64_t n, const std::string& zone,
                  int64_t od_micros, std::optional<int64_t> spot_micros) {
  InstancePrice p;
  p.provider = "runpod";
  p.instance_type = type;
  p.gpu_model = model;
  p.gpu_count = n;
  p.zone = zone;
  p.price_per_gpu = usd_micros(od_micros);
  if (spot_micros) p.spot_per_gpu = usd_micros(*spot_micros);
  return p;
}

TEST(RepresentativePrices, EightGpuMinimumAcrossZones) {
  std::vector<InstancePrice> rows = {
      row("1x_X", "h200-sxm-141gb", 1, "A-1", 3'000'000, std::nullopt),  // cheaper, but not the 8-GPU size
      row("8x_X", "h200-sxm-141gb", 8, "B-2", 4'100'000, 3'700'000),
      row("8x_X", "h200-sxm-141gb", 8, "B-1", 3'990'000, 3'590'000),
      row("8x_X", "h200-sxm-141gb", 8, "A-9", 3'990'000, 3'800'000),  // tie on price: first zone wins
      row("8x_X", "h200-sxm-141gb", 8, "A-9", 3'990'000, 3'800'000),  // duplicate row
      row("2x_Y", "l40s-48gb", 2, "C-1", 500'000, std::nullopt),
      row("4x_Y", "l40s-48gb", 4, "C-1", 450'000, std::nullopt),  // no 8-GPU size: the largest
  };
  auto v = representative_prices(rows);
  ASSERT_EQ(v.size(), 2u);
  const GpuPrice* h200 = find_price(v, "runpod", "h200-sxm-141gb");
  ASSERT_TRUE(h200);
  EXPECT_EQ(h200->gpu_count, 8);
  EXPECT_EQ(h200->zone, "A-9");
  EXPECT_EQ(h200->on_demand, usd_micros(3'990'000));
  ASSERT_TRUE(h200->spot);
  EXPECT_EQ(*h200->spot, usd_micros(3'590'000));  // the minimum spot over every zone of the size
  EXPECT_TRUE(h200->notes.empty());
  const GpuPrice* l40s = find_price(v, "runpod", "l40s-48gb");
  ASSERT_TRUE(l40s);
  EXPECT_EQ(l40s->gpu_count, 4);
  EXPECT_EQ(l40s->on_demand, usd_micros(450'000));
  EXPECT_FALSE(l40s->spot);
  ASSERT_EQ(l40s->notes.size(), 1u);
  EXPECT_EQ(l40s->notes[0], "no spot price in the list for 4-GPU instances");
}

TEST(RepresentativePrices, SpotAboveOnDemandIsSkippedWithANote) {
  std::vector<InstancePrice> rows = {
      row("8x_L40S_SECURE", "l40s-48gb", 8, "CA-MTL-1", 430'000, 860'000),
      row("8x_L40S_SECURE", "l40s-48gb", 8, "US-TX-3", 430'000, 860'000),
      row("8x_L40S_SECURE", "l40s-48gb", 8, "US-TX-3", 430'000, 860'000),  // repeated zone counts once
  };
  auto v = representative_prices(rows);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].on_demand.amount_string(), "0.43");
  EXPECT_FALSE(v[0].spot);
  ASSERT_EQ(v[0].notes.size(), 1u);
  EXPECT_EQ(v[0].notes[0].rfind("spot skipped: 8x_L40S_SECURE lists spot 0.86 above on-demand 0.43 USD per GPU-hour "
                                "in 2 zones",
                                0),
            0u)
      << v[0].notes[0];

  // A spot price under its own row's on-demand but above the cheapest on-demand elsewhere.
  rows = {row("8x_Z", "h100-sxm5-80gb", 8, "A", 2'000'000, std::nullopt),
          row("8x_Z", "h100-sxm5-80gb", 8, "B", 3'000'000, 2'500'000)};
  v = representative_prices(rows);
  EXPECT_EQ(v[0].on_demand.amount_string(), "2.00");
  EXPECT_FALSE(v[0].spot);
  ASSERT_EQ(v[0].notes.size(), 1u);
  EXPECT_NE(v[0].notes[0].find("exceeds the cheapest on-demand price 2.00"), std::string::npos);
}

// --- the real lists (../shared/data/prices) -----------------------------------------------------

TEST(RealPriceLists, HandCheckedRows) {
  const std::string dir = shared_prices_dir();
  if (dir.empty()) GTEST_SKIP() << "../shared/data/prices is absent (set GPURENT_DATA_DIR to a folder holding prices/)";
  const std::string lambda_text = slurp(dir + "/lambda_vms.csv");
  ASSERT_NE(lambda_text.find("\r\n"), std::string::npos) << "SOURCE.md says the lists use CRLF";
  auto lambda = read_price_list("lambda", lambda_text, "lambda_vms.csv");
  ASSERT_TRUE(lambda) << lambda.error().message;
  auto runpod = read_price_list("runpod", slurp(dir + "/runpod_vms.csv"), "runpod_vms.csv");
  ASSERT_TRUE(runpod) << runpod.error().message;

  // lambda_vms.csv: gpu_8x_h100_sxm5,H100,8.0,208.0,1800.0,23.92,<region>,...: 23.92 / 8 = 2.99.
  const auto lp = representative_prices(*lambda);
  const GpuPrice* h100 = find_price(lp, "lambda", "h100-sxm5-80gb");
  ASSERT_TRUE(h100);
  EXPECT_EQ(h100->instance_type, "gpu_8x_h100_sxm5");
  EXPECT_EQ(h100->on_demand, usd_micros(2'990'000));
  EXPECT_FALSE(h100->spot);  // Lambda has no spot prices
  const GpuPrice* a100 = find_price(lp, "lambda", "a100-sxm4-80gb");
  ASSERT_TRUE(a100);
  EXPECT_EQ(a100->on_demand.amount_string(), "1.79");        // 14.32 / 8
  EXPECT_FALSE(find_price(lp, "lambda", "h200-sxm-141gb"));  // Lambda has no H200

  // runpod_vms.csv: 8x_H200-SXM_SECURE ... SpotPrice 28.72, Price 31.92.
  const auto rp = representative_prices(*runpod);
  const GpuPrice* h200 = find_price(rp, "runpod", "h200-sxm-141gb");
  ASSERT_TRUE(h200);
  EXPECT_EQ(h200->on_demand.amount_string(), "3.99");
  ASSERT_TRUE(h200->spot);
  EXPECT_EQ(h200->spot->amount_string(), "3.59");
  // 8x_L40S_SECURE: SpotPrice 6.88 above Price 3.44 -> spot skipped.
  const GpuPrice* l40s = find_price(rp, "runpod", "l40s-48gb");
  ASSERT_TRUE(l40s);
  EXPECT_EQ(l40s->on_demand.amount_string(), "0.43");
  EXPECT_FALSE(l40s->spot);
  ASSERT_FALSE(l40s->notes.empty());
  EXPECT_NE(l40s->notes[0].find("lists spot 0.86 above on-demand 0.43"), std::string::npos) << l40s->notes[0];
}

TEST(RealPriceLists, BuiltInExcerptPricesLikeTheFullLists) {
  const std::string dir = shared_prices_dir();
  if (dir.empty()) GTEST_SKIP() << "../shared/data/prices is absent (set GPURENT_DATA_DIR to a folder holding prices/)";
  for (const char* provider : {"lambda", "runpod"}) {
    auto full = read_price_list(provider, slurp(dir + "/" + provider + "_vms.csv"), provider);
    auto excerpt = read_price_list(provider, builtin_price_list(provider), provider);
    ASSERT_TRUE(full && excerpt);
    const auto from_full = representative_prices(*full);
    const auto from_excerpt = representative_prices(*excerpt);
    ASSERT_EQ(from_full.size(), from_excerpt.size()) << provider;
    for (size_t i = 0; i < from_full.size(); ++i) {
      SCOPED_TRACE(from_full[i].provider + " " + from_full[i].gpu_model);
      EXPECT_EQ(from_excerpt[i].gpu_model, from_full[i].gpu_model);
      EXPECT_EQ(from_excerpt[i].instance_type, from_full[i].instance_type);
      EXPECT_EQ(from_excerpt[i].zone, from_full[i].zone);
      EXPECT_EQ(from_excerpt[i].on_demand, from_full[i].on_demand);
      EXPECT_EQ(from_excerpt[i].spot, from_full[i].spot);
      EXPECT_EQ(from_excerpt[i].notes.size(), from_full[i].notes.size());
    }
  }
}

TEST(ListOfferPrices, ReservedByTheStatedDiscountRule) {
  GpuPrice g;
  g.on_demand = usd_micros(2'990'000);
  g.spot = usd_micros(2'690'000);
  auto p = list_offer_prices(g);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->on_demand.amount_string(), "2.99");
  EXPECT_EQ(p->reserved_1m->amount_string(), "2.84");   // 2.8405 -> cents, half to even
  EXPECT_EQ(p->reserved_12m->amount_string(), "2.39");  // 2.392
  EXPECT_EQ(p->reserved_36m->amount_string(), "1.94");  // 1.9435
  EXPECT_EQ(p->spot->amount_string(), "2.69");
  g.on_demand = usd_micros(430'000);
  g.spot.reset();
  p = list_offer_prices(g);
  EXPECT_EQ(p->reserved_1m->amount_string(), "0.41");   // 0.4085
  EXPECT_EQ(p->reserved_36m->amount_string(), "0.28");  // 0.2795
  EXPECT_FALSE(p->spot);
}

}  // namespace
}  // namespace gpurent
