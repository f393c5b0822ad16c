// The demo world's suppliers, fleets and offers. Prices of "lambda" and "runpod" come from the
// public lists (price_lists.h); fleet sizes, sites, software, fees, contract terms and
// due-diligence answers are illustrative demo figures, not statements by those companies.
#include <set>

#include "demo/builtin_prices.h"
#include "demo/topology.h"
#include "demo/world_parts.h"
#include "meter/acceptance.h"
#include "model/supplier.h"

namespace gpurent {
namespace {

TimeMs day(int64_t y, unsigned m, unsigned d) { return days_from_civil(y, m, d) * kMsPerDay; }

// How one supplier sells: currency, billing granularity, fee rules, audit clause.
struct Terms {
  Currency currency = Currency::kUSD;
  int64_t min_increment_seconds = 60;
  OfferFees fees;
  bool audit_rights = false;
};

struct DemoSupplier {
  Supplier supplier;
  std::map<std::string, std::string> site_country;  // site name -> ISO country (data sovereignty)
  Terms terms;
  bool list_priced = true;  // prices from the public lists (ListPrices), else huadong_price_sheets()
};

// `count` nodes of one shape at one site; node `out_of_service` (1-based, 0 = none) is in
// `oos_state` for `oos_reason`.
struct Pool {
  std::string supplier;
  std::string site;
  std::string tag;  // in node names: "<supplier>-<site tag>-<tag>-NN"
  NodeShape shape;
  int count = 0;
  NodeSoftware software;
  std::vector<NodeImage> images;
  int out_of_service = 0;
  NodeState oos_state = NodeState::kAvailable;
  std::string oos_reason;
  // For the offer made from the region's first pool of this model: whether it sells only this
  // site's nodes (else every node of the model in the region), and the models it serves.
  bool offer_pins_site = false;
  std::vector<ServedModel> served_models;
};

Site site(const char* name, const char* region, const char* city, int64_t tier) {
  return Site{name, region, city, tier};
}

OfferFees fees(BillingStart start, IdleRule idle, std::optional<VolumeFee> storage_io,
               std::optional<VolumeFee> egress) {
  OfferFees f;
  f.billing_starts = start;
  f.idle = idle;
  f.storage_io = std::move(storage_io);
  f.egress = std::move(egress);
  return f;
}

// Due-diligence answers (supplier.h): supply days, 8-GPU 1 GB all-reduce ms, fault-locate
// minutes, restore hours, CUDA-update days, exit rehearsed, monthly failures in basis points.
DueDiligence answers(int64_t supply_days, int64_t allreduce_ms, int64_t locate_minutes, int64_t restore_hours,
                     int64_t cuda_days, bool exit_tested, int64_t failure_bp, std::string notes) {
  DueDiligence d;
  d.gpu_supply_days = supply_days;
  d.allreduce_8gpu_1gb_ms = allreduce_ms;
  d.fault_locate_minutes = locate_minutes;
  d.restore_hours = restore_hours;
  d.cuda_update_days = cuda_days;
  d.exit_path_tested = exit_tested;
  d.monthly_failure_rate_bp = failure_bp;
  d.notes = std::move(notes);
  return d;
}

DemoSupplier demo_supplier(std::string name, std::string display_name, std::string region, std::string country,
                           std::vector<std::pair<Site, std::string>> sites, std::vector<Certification> certs,
                           DueDiligence dd, std::string email, Terms terms, bool list_priced) {
  DemoSupplier d;
  d.supplier.name = std::move(name);
  d.supplier.display_name = std::move(display_name);
  d.supplier.region = std::move(region);
  d.supplier.country = std::move(country);
  for (auto& [site, site_country] : sites) {
    if (site_country != d.supplier.country) site.country = site_country;  // RunPod's Bucharest, Montréal
    d.site_country[site.name] = std::move(site_country);
    d.supplier.sites.push_back(std::move(site));
  }
  d.supplier.certifications = std::move(certs);
  d.supplier.due_diligence = std::move(dd);
  d.supplier.contact_email = std::move(email);
  d.terms = std::move(terms);
  d.list_priced = list_priced;
  return d;
}

std::vector<DemoSupplier> suppliers() {
  const Money usd0(0, Currency::kUSD);
  std::vector<DemoSupplier> out;
  // Lambda and RunPod advertise no ingress/egress fees; the demo states that as an explicit 0.
  out.push_back(demo_supplier(
      "lambda", "Lambda", "us-west-1", "US",
      {{site("us-east-1", "us-east-1", "Ashburn", 3), "US"}, {site("us-south-1", "us-south-1", "Dallas", 3), "US"}},
      {Certification::kSoc2},
      answers(14, 5, 30, 4, 30, true, 40,
              "Illustrative demo answers, not statements by Lambda; prices from its public list."),
      "supply@lambda.example",
      Terms{Currency::kUSD, 60,
            fees(BillingStart::kRunning, {5, 10, IdleAction::kCharge, std::nullopt}, std::nullopt, VolumeFee{usd0, 0}),
            false},
      true));
  out.push_back(demo_supplier(
      "runpod", "RunPod", "us-tx", "US",
      {{site("us-tx-3", "us-tx", "Dallas", 3), "US"},
       {site("eu-ro-1", "eu-ro", "Bucharest", 3), "RO"},
       {site("ca-mtl-1", "ca-mtl", "Montréal", 3), "CA"}},
      {Certification::kSoc2},
      answers(7, 5, 45, 8, 14, false, 60,
              "Illustrative demo answers, not statements by RunPod; prices from its public list."),
      "supply@runpod.example",
      Terms{Currency::kUSD, 1,
            fees(BillingStart::kRunning, {5, 30, IdleAction::kCharge, std::nullopt}, std::nullopt, VolumeFee{usd0, 0}),
            false},
      true));
  // Billed per started hour from the health check; idle cards at half price; storage I/O and
  // egress charged beyond monthly free allowances.
  out.push_back(demo_supplier(
      "huadong-aidc", "华东智算中心", "cn-east", "CN",
      {{site("shanghai-lingang", "cn-east", "上海临港", 4), "CN"}, {site("wuhu", "cn-east", "芜湖", 3), "CN"}},
      {Certification::kIso27001, Certification::kMlps3},
      answers(45, 12, 20, 2, 60, true, 80,
              "A fictional AI computing centre (智算中心) for the demo; 等保三级 (MLPS 2.0 level 3)."),
      "ops@huadong-aidc.example",
      Terms{Currency::kCNY, 3600,
            fees(BillingStart::kReady, {5, 10, IdleAction::kDiscount, 50},
                 VolumeFee{Money(120'000, Currency::kCNY), 1000}, VolumeFee{Money(500'000, Currency::kCNY), 500}),
            true},
      false));
  return out;
}

// Served models of the 910B pool, CNY: illustrative per-token and per-QPS prices of the kind
// Chinese model-API platforms list (per million tokens, input and output priced apart).
std::vector<ServedModel> huadong_served_models() {
  auto cny = [](int64_t fen) { return Money(fen * 10'000, Currency::kCNY); };
  return {
      {"qwen2.5-72b-instruct", cny(400), cny(1200), std::nullopt},
      {"deepseek-r1-distill-qwen-32b", cny(200), cny(800), std::nullopt},
      {"bge-m3", std::nullopt, std::nullopt, cny(12000)},
  };
}

std::vector<Pool> fleet() {
  const NodeSoftware lambda_sw{"550.127.05", "12.4", "9.1.0", "2.21.5"};
  const std::vector<NodeImage> lambda_images = {{"nvcr.io/nvidia/pytorch:24.10-py3", day(2026, 11, 10)},
                                                {"nvcr.io/nvidia/tritonserver:24.10-py3", day(2026, 9, 15)}};
  const NodeSoftware runpod_sw{"570.124.06", "12.8", "9.8.0", "2.26.2"};
  const std::vector<NodeImage> runpod_images = {
      {"nvcr.io/nvidia/pytorch:25.01-py3", day(2026, 11, 18)},
      {"runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04", day(2026, 5, 20)}};
  const NodeSoftware huadong_nv_sw{"535.183.06", "12.2", "8.9.7", "2.19.3"};
  const std::vector<NodeImage> huadong_nv_images = {{"nvcr.io/nvidia/pytorch:23.10-py3", day(2026, 8, 1)}};
  // Ascend: the driver slot holds the Ascend HDK driver version, the CUDA slot the CANN toolkit
  // version (HCCL, Ascend's NCCL, ships inside CANN, so no separate NCCL version).
  const NodeSoftware ascend_sw{"24.1.0", "8.0.0", std::nullopt, std::nullopt};
  const std::vector<NodeImage> ascend_images = {
      {"quay.io/ascend/cann:8.0.0-910b-ubuntu22.04-py3.10", day(2026, 10, 20)},
      {"quay.io/ascend/vllm-ascend:v0.7.3", day(2026, 10, 20)}};

  std::vector<Pool> p;
  p.push_back({"lambda", "us-east-1", "h100", hgx_hopper("h100-sxm5-80gb", RdmaType::kInfiniband), 6, lambda_sw,
               lambda_images});
  p.push_back({"lambda", "us-south-1", "h100", hgx_hopper("h100-sxm5-80gb", RdmaType::kInfiniband), 6, lambda_sw,
               lambda_images, 6, NodeState::kUnavailable,
               "GPU 5 reported Xid 79 (fallen off the bus); RMA opened, node out of service"});
  p.push_back({"lambda", "us-south-1", "a100", hgx_a100(RdmaType::kInfiniband), 6, lambda_sw, lambda_images});
  p.push_back(
      {"runpod", "us-tx-3", "h100", hgx_hopper("h100-sxm5-80gb", RdmaType::kRoceV2), 4, runpod_sw, runpod_images});
  p.push_back(
      {"runpod", "us-tx-3", "h200", hgx_hopper("h200-sxm-141gb", RdmaType::kRoceV2), 3, runpod_sw, runpod_images});
  p.push_back({"runpod", "eu-ro-1", "h200", hgx_hopper("h200-sxm-141gb", RdmaType::kRoceV2), 3, runpod_sw,
               runpod_images, 3, NodeState::kDrained, "draining for a BIOS and NVSwitch firmware update"});
  p.push_back({"runpod", "eu-ro-1", "a100pcie", pcie_a100(), 6, runpod_sw, runpod_images});
  p.push_back({"runpod", "ca-mtl-1", "l40s", pcie_l40s(), 4, runpod_sw, runpod_images});
  p.push_back({"huadong-aidc", "shanghai-lingang", "910b", atlas_910b(), 6, ascend_sw, ascend_images});
  p.back().served_models = huadong_served_models();
  p.push_back({"huadong-aidc", "wuhu", "910b", atlas_910b(), 4, ascend_sw, ascend_images});
  p.push_back(
      {"huadong-aidc", "shanghai-lingang", "a100", hgx_a100(RdmaType::kRoceV2), 4, huadong_nv_sw, huadong_nv_images});
  p.back().offer_pins_site = true;
  return p;
}

// Site names shortened for node names ("us-south-1" -> "ussouth1", "shanghai-lingang" -> "sh").
std::string site_tag(const std::string& s) {
  if (s == "shanghai-lingang") return "sh";
  std::string out;
  for (char c : s)
    if (c != '-') out += c;
  return out;
}

std::string two_digits(int i) { return (i < 10 ? "0" : "") + std::to_string(i); }

// Minimum NCCL all_reduce bus bandwidth promised for an 8-GPU node, GB/s: below the typical
// nccl-tests figures (~370 for 8x H100 SXM over NVLink, ../shared/data/gpu-specs.md; A100's
// NVLink 3 has 2/3 of H100's bandwidth). None for PCIe nodes, nor for Ascend (no published
// HCCL figure to promise against).
std::optional<int64_t> busbw_floor(const std::string& model) {
  if (model == "h100-sxm5-80gb" || model == "h200-sxm-141gb") return 350;
  if (model == "a100-sxm4-80gb") return 200;
  return std::nullopt;
}

ContractTemplate contract_for(const GpuModel& m, const std::string& country, bool audit) {
  ContractTemplate t;
  t.model_lock = true;
  // 90% of the datasheet's dense FP16 figure, in whole TFLOPS (rounded down).
  if (m.fp16_tflops_x10) t.min_fp16_tflops_x10 = *m.fp16_tflops_x10 * 9 / 10 / 10 * 10;
  t.min_nccl_busbw_gbps = busbw_floor(m.id);
  t.outage_compensation_pct = 200;
  t.exit_notice_days = 30;
  t.exit_refund_prepaid = true;
  // Data localisation is the rule for China's computing centres (PIPL, MLPS); the demo's US clouds
  // promise none, so a tenant signing with them may still run elsewhere (docs/scheduler.md#terms).
  if (country == "CN") t.data_sovereignty = country;
  t.audit_rights = audit;
  t.penalty = Penalty{5, 10};
  return t;
}

Result<OfferPrices> stated_prices(const StatedPriceSheet& s) {
  OfferPrices p;
  auto on_demand = Money::parse(s.on_demand, s.currency);
  if (!on_demand) return on_demand.error();
  p.on_demand = *on_demand;
  std::optional<Money>* slots[] = {&p.reserved_1m, &p.reserved_12m, &p.reserved_36m, &p.spot};
  const std::string* texts[] = {&s.reserved_1m, &s.reserved_12m, &s.reserved_36m, &s.spot};
  for (size_t i = 0; i < 4; ++i) {
    if (texts[i]->empty()) continue;
    auto m = Money::parse(*texts[i], s.currency);
    if (!m) return m.error();
    *slots[i] = *m;
  }
  return p;
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& listed_offer_models() {
  static const std::vector<std::pair<std::string, std::string>> kPairs = {
      {"lambda", "a100-sxm4-80gb"}, {"lambda", "h100-sxm5-80gb"}, {"runpod", "a100-pcie-80gb"},
      {"runpod", "h100-sxm5-80gb"}, {"runpod", "h200-sxm-141gb"}, {"runpod", "l40s-48gb"}};
  return kPairs;
}

Result<OfferPrices> list_offer_prices(const GpuPrice& p) {
  OfferPrices out;
  out.on_demand = p.on_demand;
  out.spot = p.spot;
  const std::pair<std::optional<Money>*, int64_t> reserved[] = {
      {&out.reserved_1m, 95}, {&out.reserved_12m, 80}, {&out.reserved_36m, 65}};
  for (const auto& [slot, pct] : reserved) {
    auto m = p.on_demand.mul_ratio(pct, 100);
    if (!m) return m.error();
    *slot = m->round_to_cents();
  }
  return out;
}

Result<std::vector<DemoObject>> supply_objects(const ListPrices& prices, const GpuCatalog& catalog) {
  const std::vector<DemoSupplier> sups = suppliers();
  std::map<std::string, const DemoSupplier*> by_name;
  for (const DemoSupplier& d : sups) by_name[d.supplier.name] = &d;
  auto site_of = [&](const Pool& pool) -> const Site* {
    if (!by_name.count(pool.supplier)) return nullptr;
    for (const Site& s : by_name.at(pool.supplier)->supplier.sites)
      if (s.name == pool.site) return &s;
    return nullptr;
  };
  const std::vector<Pool> pools = fleet();

  std::vector<DemoObject> out;
  for (const DemoSupplier& d : sups) out.push_back({"suppliers", to_json(d.supplier), ""});

  for (const Pool& pool : pools) {
    if (!catalog.find(pool.shape.gpu_model))
      return Error::make(Code::kInternal, "demo world: the GPU catalog has no model '" + pool.shape.gpu_model + "'");
    if (!site_of(pool))
      return Error::make(Code::kInternal, "demo world: no supplier " + pool.supplier + " with a site " + pool.site);
    for (int i = 1; i <= pool.count; ++i) {
      const bool oos = i == pool.out_of_service;
      Node n = make_node(pool.shape, pool.supplier + "-" + site_tag(pool.site) + "-" + pool.tag + "-" + two_digits(i),
                         pool.supplier, pool.site, site_of(pool)->region, pool.software, pool.images,
                         oos ? pool.oos_state : NodeState::kAvailable,
                         oos ? std::optional<std::string>(pool.oos_reason) : std::nullopt);
      out.push_back({"nodes", to_json(n), ""});
    }
  }

  // One offer per (supplier, GPU model, region), made from the first pool of each, in fleet order.
  std::set<std::string> made;
  for (const Pool& pool : pools) {
    const DemoSupplier& d = *by_name.at(pool.supplier);
    const std::string& model_id = pool.shape.gpu_model;
    Offer o;
    o.name = pool.supplier + "-" + model_id + "-" + site_of(pool)->region;
    if (!made.insert(o.name).second) continue;
    o.supplier = pool.supplier;
    o.region = site_of(pool)->region;
    o.gpu_model = model_id;
    if (pool.offer_pins_site) o.node_selector.site = pool.site;
    o.currency = d.terms.currency;
    if (d.list_priced) {
      auto it = prices.find({pool.supplier, model_id});
      if (it == prices.end())
        return Error::make(Code::kInternal, "demo world: no list price for " + pool.supplier + " " + model_id);
      auto p = list_offer_prices(it->second);
      if (!p) return p.error();
      o.prices = *p;
    } else {
      const StatedPriceSheet* sheet = nullptr;
      for (const StatedPriceSheet& s : huadong_price_sheets())
        if (s.gpu_model == model_id && s.currency == d.terms.currency) sheet = &s;
      if (!sheet)
        return Error::make(Code::kInternal, "demo world: no stated price for " + pool.supplier + " " + model_id);
      auto p = stated_prices(*sheet);
      if (!p) return p.error();
      o.prices = *p;
      // The data centre also rents its nodes' CPUs without GPUs (无卡模式), to set up environments
      // and reach data cheaply; the public lists state no such price.
      o.prices.cpu_core_hour = Money(80'000, d.terms.currency);    // 0.08 per core-hour
      o.prices.memory_gib_hour = Money(10'000, d.terms.currency);  // 0.01 per GiB-hour
    }
    o.served_models = pool.served_models;
    o.min_increment_seconds = d.terms.min_increment_seconds;
    o.fees = d.terms.fees;
    o.contract_template = contract_for(*catalog.find(model_id), d.site_country.at(pool.site), d.terms.audit_rights);
    out.push_back({"offers", to_json(o), ""});
  }

  // Measurements the suppliers recorded (contract clauses turn them into credits).
  out.push_back({"measurements",
                 {{"kind", "fp16_tflops"},
                  {"node", "lambda-ussouth1-h100-05"},
                  {"gpu", 3},
                  {"at", "2026-11-20T09:00:00Z"},
                  {"fp16_tflops", "871.4"},
                  {"note", "nvbench-style dense FP16 GEMM, 8192^3, 50 iterations"}},
                 ""});
  out.push_back({"measurements",
                 {{"kind", "nccl_busbw"},
                  {"node", "lambda-ussouth1-h100-05"},
                  {"from", "2026-11-20T00:00:00Z"},
                  {"to", "2026-11-20T06:00:00Z"},
                  {"busbw_gbps", 312},
                  {"note", "nccl-tests all_reduce_perf -b 1G -e 1G -g 8"}},
                 ""});
  out.push_back({"measurements",
                 {{"kind", "incident"},
                  {"node", "huadong-aidc-sh-910b-05"},
                  {"from", "2026-11-12T08:00:00Z"},
                  {"to", "2026-11-12T11:00:00Z"},
                  {"note", "PSU failure; node replaced"}},
                 ""});
  // An acceptance run of the same node from the simulated GPU source (the demo has no GPUs): it
  // is recorded and shown, and, the source being simulated, makes no measurement.
  std::vector<SimulatedGpu> cards;
  for (int64_t i = 0; i < 8; ++i) cards.push_back({i, "", "NVIDIA H100 80GB HBM3 (simulated)", 8714 - 37 * i, 8650 - 31 * i, 0, 301250, 5210, 5075});
  auto stage = [](const char* kind, const char* tool, const char* from, const char* to, std::string output) {
    return json{{"stage", kind}, {"tool", tool}, {"tool_version", "1"}, {"status", "ok"},
                {"started_at", from}, {"finished_at", to}, {"output", std::move(output)}};
  };
  json skipped_storage = {{"stage", "storage"}, {"tool", "fio"}, {"status", "skipped"},
                          {"reason", "the demo has no node to run fio on"},
                          {"started_at", "2026-11-20T08:07:00Z"}, {"finished_at", "2026-11-20T08:07:00Z"}};
  json gpus = json::array();
  for (const SimulatedGpu& c : cards) gpus.push_back({{"index", c.index}, {"name", c.name}});
  out.push_back({"acceptance-runs",
                 {{"report",
                   {{"format", kAcceptanceFormat},
                    {"node", "lambda-ussouth1-h100-05"},
                    {"hostname", "lambda-ussouth1-h100-05"},
                    {"tool_version", "1"},
                    {"started_at", "2026-11-20T08:00:00Z"},
                    {"finished_at", "2026-11-20T08:07:00Z"},
                    {"gpus", gpus},
                    {"stages",
                     {stage("gpu", "gpurent-gpu-sim", "2026-11-20T08:00:00Z", "2026-11-20T08:05:00Z", simulated_gpu_bench(cards)),
                      stage("nccl", "nccl-sim", "2026-11-20T08:05:00Z", "2026-11-20T08:07:00Z", simulated_nccl_tests(31250, 8)),
                      skipped_storage}}}},
                  {"note", "burn-in before the node was listed (simulated GPU source)"}},
                 ""});
  return out;
}

}  // namespace gpurent
