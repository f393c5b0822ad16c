#include "demo/demo_world.h"
#include "meter/acceptance.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>

#include "io/files.h"
#include "model/job.h"
#include "model/contract.h"
#include "model/measurement.h"
#include "model/reservation.h"
#include "model/node.h"
#include "model/offer.h"
#include "model/project.h"
#include "model/reservation.h"
#include "model/supplier.h"
#include "model/tenant.h"
#include "model/user.h"
#include "model/instance.h"
#include "model/volume.h"

namespace gpurent {
namespace {

namespace fs = std::filesystem;

std::string reason(const Error& e) {
  std::string s = e.message;
  for (const auto& f : e.fields) s += "\n  " + f.field + ": " + f.reason;
  return s;
}

// A scratch folder removed at the end of the test.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& tag)
      : path(fs::temp_directory_path() / ("gpurent-demo-" + tag + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path / "prices");
  }
  ~TempDir() { fs::remove_all(path); }
  void write(const std::string& rel, const std::string& text) const {
    std::ofstream(path / rel, std::ios::binary) << text;
  }
};

// What the checks learn while walking a world in creation order.
struct Seen {
  std::map<std::string, Supplier> suppliers;
  std::map<std::string, std::vector<Node>> nodes_by_supplier;
  std::map<std::string, Tenant> tenants;
  std::map<std::string, std::string> admin_of;  // tenant -> its tenant_admin user (created by the operator)
  std::map<std::string, std::pair<std::string, Project>> projects;  // name -> (tenant, project)
  std::vector<Offer> offers;
  std::vector<std::pair<std::string, Job>> jobs;  // (tenant, job)
  std::vector<User> users;
  std::set<std::string> volumes;  // "<tenant>/<name>"
};

class DemoWorldTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto c = load_catalog_file(default_catalog_path());
    ASSERT_TRUE(c) << reason(c.error());
    catalog_ = std::make_unique<GpuCatalog>(std::move(*c));
  }
  static void TearDownTestSuite() { catalog_.reset(); }

  // Runs every object through its kind's parse function (the server's POST validation) and checks
  // the references the server resolves: each must name an object created before it.
  static void validate(const DemoWorld& w, Seen& s) {
    const std::vector<std::string> order = {"suppliers", "nodes", "offers", "measurements", "acceptance-runs", "tenants", "users", "projects",
                                            "volumes", "reservations", "contracts", "poc-runs", "jobs", "instances"};
    size_t rank = 0;
    std::map<std::string, std::set<std::string>> names;  // kind -> names (unique across scopes: no ambiguity)
    for (const DemoObject& o : w.objects) {
      const std::string name = o.body.value("name", "");
      SCOPED_TRACE(o.kind + " " + name);
      auto pos = std::find(order.begin(), order.end(), o.kind);
      EXPECT_NE(pos, order.end()) << "unknown kind";
      if (pos == order.end()) continue;
      EXPECT_GE(static_cast<size_t>(pos - order.begin()), rank) << "out of creation order";
      rank = std::max(rank, static_cast<size_t>(pos - order.begin()));
      if (o.kind != "measurements" && o.kind != "acceptance-runs") {  // measurements and runs have no name
        EXPECT_TRUE(names[o.kind].insert(name).second) << "duplicate name";
      }
      if (!o.as_tenant.empty()) {
        EXPECT_TRUE(s.admin_of.count(o.as_tenant)) << "as_tenant before that tenant has an admin user";
        EXPECT_NE(o.kind, "suppliers");
        EXPECT_NE(o.kind, "tenants");
      }

      if (o.kind == "suppliers") {
        auto r = parse_supplier(o.body);
        ASSERT_TRUE(r) << reason(r.error());
        s.suppliers[r->name] = *r;
      } else if (o.kind == "nodes") {
        auto r = parse_node(o.body, *catalog_);
        ASSERT_TRUE(r) << reason(r.error());
        ASSERT_TRUE(s.suppliers.count(r->supplier)) << "unknown supplier";
        bool site_ok = false;
        for (const Site& site : s.suppliers[r->supplier].sites)
          site_ok = site_ok || (site.name == r->site && site.region == r->region);
        EXPECT_TRUE(site_ok) << "site/region not among the supplier's sites";
        s.nodes_by_supplier[r->supplier].push_back(*r);
      } else if (o.kind == "offers") {
        auto r = parse_offer(o.body, *catalog_);
        ASSERT_TRUE(r) << reason(r.error());
        ASSERT_TRUE(s.suppliers.count(r->supplier)) << "unknown supplier";
        int pool = 0;
        for (const Node& n : s.nodes_by_supplier[r->supplier])
          if (n.gpu_model == r->gpu_model && n.region == r->region &&
              (!r->node_selector.site || *r->node_selector.site == n.site))
            ++pool;
        EXPECT_GT(pool, 0) << "the offer sells no node";
        s.offers.push_back(*r);
      } else if (o.kind == "tenants") {
        auto r = parse_tenant(o.body);
        ASSERT_TRUE(r) << reason(r.error());
        s.tenants[r->name] = *r;
      } else if (o.kind == "users") {
        auto r = parse_user(o.body);
        ASSERT_TRUE(r) << reason(r.error());
        if (!r->tenant.empty()) {
          EXPECT_TRUE(s.tenants.count(r->tenant)) << "unknown tenant";
        }
        if (!r->supplier.empty()) {
          EXPECT_TRUE(s.suppliers.count(r->supplier)) << "unknown supplier";
        }
        if (!o.as_tenant.empty()) {
          EXPECT_EQ(r->tenant, o.as_tenant);
          EXPECT_NE(r->role, Role::kTenantAdmin) << "first admins are the operator's to create";
        }
        if (o.as_tenant.empty() && r->role == Role::kTenantAdmin && !s.admin_of.count(r->tenant))
          s.admin_of[r->tenant] = r->name;
        s.users.push_back(*r);
      } else if (o.kind == "projects") {
        EXPECT_FALSE(o.as_tenant.empty()) << "projects are the tenant admin's to create";
        ASSERT_TRUE(s.tenants.count(o.as_tenant));
        auto r = parse_project(o.body, s.tenants[o.as_tenant].currency);
        ASSERT_TRUE(r) << reason(r.error());
        EXPECT_EQ(r->tenant, o.as_tenant);
        s.projects[r->name] = {o.as_tenant, *r};
      } else if (o.kind == "measurements") {
        EXPECT_TRUE(o.as_tenant.empty()) << "measurements are recorded by the operator or the supplier";
        auto r = parse_measurement(o.body);
        ASSERT_TRUE(r) << reason(r.error());
        bool known = false;
        for (const auto& [sup, nodes] : s.nodes_by_supplier)
          for (const Node& n : nodes) known = known || n.name == r->node;
        EXPECT_TRUE(known) << "unknown node " << r->node;
      } else if (o.kind == "acceptance-runs") {
        EXPECT_TRUE(o.as_tenant.empty()) << "acceptance runs are recorded by the operator or the supplier";
        auto r = parse_acceptance_report(o.body.at("report"));
        ASSERT_TRUE(r) << reason(r.error());
        bool known = false;
        for (const auto& [sup, nodes] : s.nodes_by_supplier)
          for (const Node& n : nodes) known = known || n.name == r->node;
        EXPECT_TRUE(known) << "unknown node " << r->node;
      } else if (o.kind == "poc-runs") {
        EXPECT_FALSE(o.as_tenant.empty()) << "a POC is its tenant's";
        EXPECT_TRUE(s.suppliers.count(o.body.value("supplier", ""))) << "unknown supplier";
      } else if (o.kind == "contracts") {
        EXPECT_TRUE(o.as_tenant.empty()) << "contracts are the operator's to create";
        auto r = parse_contract(o.body);
        ASSERT_TRUE(r) << reason(r.error());
        EXPECT_TRUE(s.tenants.count(r->tenant)) << "unknown tenant";
        EXPECT_TRUE(s.suppliers.count(r->supplier)) << "unknown supplier";
        for (const std::string& name : r->offers) {
          bool known = false;
          for (const Offer& off : s.offers)
            known = known || (off.name == name && off.supplier == r->supplier && off.currency == r->currency);
          EXPECT_TRUE(known) << "offer " << name << " is not the supplier's, or not in the contract currency";
        }
      } else if (o.kind == "volumes") {
        auto v = parse_volume(o.body);
        ASSERT_TRUE(v) << reason(v.error());
        EXPECT_TRUE(s.tenants.count(o.as_tenant)) << "a volume is created by a user of its tenant";
        s.volumes.insert(o.as_tenant + "/" + v->name);
      } else if (o.kind == "instances") {
        auto i = parse_instance(o.body);
        ASSERT_TRUE(i) << reason(i.error());
        ASSERT_TRUE(s.tenants.count(o.as_tenant));
        auto body = instance_job(*i, 1, 0);
        ASSERT_TRUE(body) << reason(body.error());
        auto j = parse_job(*body, s.tenants[o.as_tenant].currency);
        ASSERT_TRUE(j) << reason(j.error());
        ASSERT_TRUE(s.projects.count(i->project)) << "unknown project";
        EXPECT_EQ(s.projects[i->project].first, o.as_tenant) << "project of another tenant";
        if (i->volume) {
          EXPECT_TRUE(s.volumes.count(o.as_tenant + "/" + i->volume->name));
        }
        if (i->gpu_model) {
          EXPECT_GT(s.projects[i->project].second.quota.gpu_limit(*i->gpu_model), 0) << "quota grants no " << *i->gpu_model;
        }
      } else if (o.kind == "reservations") {
        EXPECT_TRUE(o.as_tenant.empty()) << "reservations are the operator's to create";
        auto r = parse_reservation(o.body);
        ASSERT_TRUE(r) << reason(r.error());
        EXPECT_TRUE(s.tenants.count(r->tenant)) << "unknown tenant";
        for (const std::string& node : r->nodes) {
          bool known = false;
          for (const auto& [sup, nodes] : s.nodes_by_supplier)
            for (const Node& n : nodes) known = known || n.name == node;
          EXPECT_TRUE(known) << "unknown node " << node;
        }
      } else if (o.kind == "jobs") {
        EXPECT_FALSE(o.as_tenant.empty()) << "jobs are submitted by a tenant user";
        ASSERT_TRUE(s.tenants.count(o.as_tenant));
        auto r = parse_job(o.body, s.tenants[o.as_tenant].currency);
        ASSERT_TRUE(r) << reason(r.error());
        ASSERT_TRUE(s.projects.count(r->project)) << "unknown project";
        const auto& [tenant, project] = s.projects[r->project];
        EXPECT_EQ(tenant, o.as_tenant) << "project of another tenant";
        for (const std::string& m : r->constraints.gpu_models) {
          EXPECT_TRUE(catalog_->find(m)) << m;
          EXPECT_GT(project.quota.gpu_limit(m), 0) << "quota grants no " << m;
        }
        // The server's submission check (server/api/jobs.cc): GPUs of one job (inference at its maximum
        // replicas) within max_gpus_per_job.
        const int64_t milli = r->workers * r->gpu_milli_per_worker() * (r->replicas ? r->replicas->max : 1);
        if (project.quota.max_gpus_per_job) {
          EXPECT_LE(milli, *project.quota.max_gpus_per_job * 1000);
        }
        for (const VolumeMount& m : r->volumes)
          EXPECT_TRUE(s.volumes.count(o.as_tenant + "/" + m.name)) << "volume " << m.name << " is not the tenant's";
        s.jobs.push_back({o.as_tenant, *r});
      }
    }
  }

  static std::unique_ptr<GpuCatalog> catalog_;
};

std::unique_ptr<GpuCatalog> DemoWorldTest::catalog_;

std::map<std::string, int64_t> gpus_per_model(const Seen& s) {
  std::map<std::string, int64_t> out;
  for (const auto& [sup, nodes] : s.nodes_by_supplier)
    for (const Node& n : nodes) out[n.gpu_model] += static_cast<int64_t>(n.gpus.size());
  return out;
}

const Offer* offer_of(const Seen& s, const std::string& supplier, const std::string& model) {
  for (const Offer& o : s.offers)
    if (o.supplier == supplier && o.gpu_model == model) return &o;
  return nullptr;
}

// The price lists of a data folder, read as the server reads them (io/files.h).
DemoPriceFiles price_files(const std::string& data_dir) {
  auto files = read_demo_price_files(data_dir);
  EXPECT_TRUE(files.ok()) << (files.ok() ? "" : files.error().message);
  return files.ok() ? std::move(*files) : DemoPriceFiles{};
}

std::string shared_data_dir() {
  const std::string dir = default_data_dir();
  if (dir.empty() || !fs::is_regular_file(fs::path(dir) / "prices" / "lambda_vms.csv") ||
      !fs::is_regular_file(fs::path(dir) / "prices" / "runpod_vms.csv"))
    return "";
  return dir;
}

TEST_F(DemoWorldTest, BuiltInWorldPassesEveryValidator) {
  for (const char* dir : {"", "/nonexistent/gpurent-data"}) {
    auto w = build_demo_world(price_files(dir), *catalog_);
    ASSERT_TRUE(w) << reason(w.error());
    EXPECT_EQ(w->price_source.rfind("built-in", 0), 0u) << w->price_source;
    Seen s;
    validate(*w, s);
  }
  TempDir empty("empty");
  auto w = build_demo_world(price_files(empty.path.string()), *catalog_);
  ASSERT_TRUE(w) << reason(w.error());
  EXPECT_EQ(w->price_source.rfind("built-in", 0), 0u) << w->price_source;
}

TEST_F(DemoWorldTest, SharedDataWorldPassesEveryValidator) {
  const std::string dir = shared_data_dir();
  if (dir.empty()) GTEST_SKIP() << "../shared/data/prices is absent (set GPURENT_DATA_DIR to a folder holding prices/)";
  auto w = build_demo_world(price_files(dir), *catalog_);
  ASSERT_TRUE(w) << reason(w.error());
  EXPECT_NE(w->price_source.find("prices (lambda_vms.csv, runpod_vms.csv)"), std::string::npos) << w->price_source;
  EXPECT_EQ(w->price_source.find("built-in for"), std::string::npos) << w->price_source;
  EXPECT_NE(
      w->price_source.find("; runpod l40s-48gb spot skipped: 8x_L40S_SECURE lists spot 0.86 above on-demand 0.43"),
      std::string::npos)
      << w->price_source;
  Seen s;
  validate(*w, s);

  // Offer prices as derived by hand from the lists (per GPU-hour = instance price / 8).
  const Offer* lambda_h100 = offer_of(s, "lambda", "h100-sxm5-80gb");
  ASSERT_TRUE(lambda_h100);
  EXPECT_EQ(lambda_h100->prices.on_demand.amount_string(), "2.99");  // 23.92 / 8
  EXPECT_EQ(lambda_h100->prices.reserved_12m->amount_string(), "2.39");
  EXPECT_FALSE(lambda_h100->prices.spot);
  const Offer* runpod_l40s = offer_of(s, "runpod", "l40s-48gb");
  ASSERT_TRUE(runpod_l40s);
  EXPECT_EQ(runpod_l40s->prices.on_demand.amount_string(), "0.43");  // 3.44 / 8
  EXPECT_FALSE(runpod_l40s->prices.spot);                            // listed spot 0.86 is above on-demand
  const Offer* runpod_h100 = offer_of(s, "runpod", "h100-sxm5-80gb");
  ASSERT_TRUE(runpod_h100 && runpod_h100->prices.spot);
  EXPECT_EQ(runpod_h100->prices.on_demand.amount_string(), "2.99");  // 23.92 / 8
  EXPECT_EQ(runpod_h100->prices.spot->amount_string(), "2.69");      // 21.52 / 8

  // The built-in world prices every offer exactly as the full lists do.
  auto builtin = build_demo_world(price_files(""), *catalog_);
  ASSERT_TRUE(builtin);
  ASSERT_EQ(builtin->objects.size(), w->objects.size());
  for (size_t i = 0; i < w->objects.size(); ++i)
    EXPECT_EQ(builtin->objects[i].body, w->objects[i].body)
        << w->objects[i].kind << " " << w->objects[i].body.value("name", "");
}

TEST_F(DemoWorldTest, LooksLikeAGpuMarket) {
  auto w = build_demo_world(price_files(""), *catalog_);
  ASSERT_TRUE(w);
  Seen s;
  validate(*w, s);
  EXPECT_EQ(gpus_per_model(s), (std::map<std::string, int64_t>{{"a100-pcie-80gb", 24},
                                                               {"a100-sxm4-80gb", 80},
                                                               {"ascend-910b-64gb", 80},
                                                               {"h100-sxm5-80gb", 128},
                                                               {"h200-sxm-141gb", 48},
                                                               {"l40s-48gb", 32}}));
  size_t nodes = 0;
  for (const auto& [sup, list] : s.nodes_by_supplier) nodes += list.size();
  EXPECT_EQ(nodes, 52u);
  EXPECT_EQ(s.suppliers.size(), 3u);
  EXPECT_EQ(s.offers.size(), 10u);
  EXPECT_EQ(s.tenants.size(), 2u);
  // Cost-firewall thresholds: the USD tenant keeps the defaults; the CNY tenant sets its own, so a
  // card running all day at any CNY on-demand price does not alert.
  EXPECT_TRUE(s.tenants.at("aurora-ai").cost_firewall.empty());
  const CostFirewallSettings& qingyun_fw = s.tenants.at("qingyun-tech").cost_firewall;
  ASSERT_TRUE(qingyun_fw.card_daily_cost && qingyun_fw.egress_daily_cost);
  EXPECT_EQ(qingyun_fw.card_daily_cost->amount_string(), "800.00");
  EXPECT_EQ(qingyun_fw.egress_daily_cost->amount_string(), "3500.00");
  EXPECT_FALSE(qingyun_fw.storage_io_share_pct);
  for (const Offer& o : s.offers)
    if (o.prices.on_demand.currency() == Currency::kCNY) {
      EXPECT_LT(o.prices.on_demand.micros() * 24, qingyun_fw.card_daily_cost->micros()) << o.name;
    }
  EXPECT_EQ(s.users.size(), 7u);
  EXPECT_EQ(s.projects.size(), 4u);
  EXPECT_EQ(s.jobs.size(), 10u);

  // Topology: fabric domains, NUMA binding, PCIe generation, RDMA.
  for (const auto& [sup, list] : s.nodes_by_supplier) {
    for (const Node& n : list) {
      SCOPED_TRACE(n.name);
      const GpuModel* m = catalog_->find(n.gpu_model);
      ASSERT_TRUE(m);
      std::set<std::string> domains;
      for (const NodeGpu& g : n.gpus) {
        if (g.nvlink_domain) domains.insert(*g.nvlink_domain);
        EXPECT_EQ(g.numa_node, g.index * n.numa_nodes / static_cast<int64_t>(n.gpus.size()));
        EXPECT_EQ(g.pcie_gen, n.gpu_model.rfind("h", 0) == 0 ? 5 : 4);
        EXPECT_EQ(g.uuid.has_value(), m->vendor == Vendor::kNvidia);
      }
      if (m->form_factor == FormFactor::kPcie) {
        EXPECT_TRUE(domains.empty());
        EXPECT_TRUE(n.gpus.size() == 4 || n.gpus.size() == 8);
      } else {
        EXPECT_EQ(domains.size(), 1u) << "an 8-GPU board is one NVLink/HCCS domain";
        EXPECT_EQ(n.gpus.size(), 8u);
      }
      if (n.gpu_model == "h100-sxm5-80gb" || n.gpu_model == "h200-sxm-141gb") {
        EXPECT_EQ(n.numa_nodes, 2);
        int fabric_ports = 0;
        for (const Nic& nic : n.nics)
          if (nic.rdma != RdmaType::kNone && nic.gbps == 400) ++fabric_ports;
        EXPECT_EQ(fabric_ports, 8);
      }
    }
  }
  std::set<RdmaType> rdma;
  for (const auto& [sup, list] : s.nodes_by_supplier)
    for (const Node& n : list)
      for (const Nic& nic : n.nics) rdma.insert(nic.rdma);
  EXPECT_EQ(rdma, (std::set<RdmaType>{RdmaType::kInfiniband, RdmaType::kRoceV2, RdmaType::kNone}));

  // The Chinese supplier: CNY, 等保三级, Ascend in an HCCS domain.
  const Supplier& hd = s.suppliers.at("huadong-aidc");
  EXPECT_EQ(hd.display_name, "华东智算中心");
  EXPECT_EQ(hd.certifications, (std::vector<Certification>{Certification::kIso27001, Certification::kMlps3}));
  const Offer* ascend = offer_of(s, "huadong-aidc", "ascend-910b-64gb");
  ASSERT_TRUE(ascend);
  EXPECT_EQ(ascend->currency, Currency::kCNY);
  EXPECT_EQ(ascend->contract_template.data_sovereignty, std::optional<std::string>("CN"));

  // Every offer: all three commitments below on-demand, explicit fee rules, a contract template.
  bool per_token = false, per_qps = false, spot = false;
  for (const Offer& o : s.offers) {
    SCOPED_TRACE(o.name);
    ASSERT_TRUE(o.prices.reserved_1m && o.prices.reserved_12m && o.prices.reserved_36m);
    EXPECT_LT(o.prices.reserved_36m->micros(), o.prices.reserved_12m->micros());
    EXPECT_LT(o.prices.reserved_12m->micros(), o.prices.reserved_1m->micros());
    EXPECT_LT(o.prices.reserved_1m->micros(), o.prices.on_demand.micros());
    spot = spot || o.prices.spot.has_value();
    EXPECT_TRUE(o.fees.idle.has_value());
    EXPECT_TRUE(o.fees.egress.has_value());
    EXPECT_TRUE(o.contract_template.model_lock);
    EXPECT_TRUE(o.contract_template.min_fp16_tflops_x10.has_value());
    EXPECT_EQ(o.contract_template.outage_compensation_pct, 200);
    EXPECT_EQ(o.contract_template.exit_notice_days, 30);
    for (const ServedModel& m : o.served_models) {
      per_token = per_token || m.per_million_output_tokens.has_value();
      per_qps = per_qps || m.per_qps_month.has_value();
    }
  }
  EXPECT_TRUE(spot && per_token && per_qps);

  // Users: each tenant has an admin, a member and a viewer; one supplier user.
  std::map<std::string, std::multiset<Role>> roles;
  for (const User& u : s.users) roles[u.tenant.empty() ? "supplier:" + u.supplier : u.tenant].insert(u.role);
  const std::multiset<Role> trio = {Role::kTenantAdmin, Role::kTenantMember, Role::kViewer};
  EXPECT_EQ(roles["aurora-ai"], trio);
  EXPECT_EQ(roles["qingyun-tech"], trio);
  EXPECT_EQ(roles["supplier:huadong-aidc"], std::multiset<Role>{Role::kSupplier});

  // Jobs of every kind, gangs, replicas, fractional GPUs.
  std::set<JobKind> kinds;
  bool gang = false, replicas = false, milli = false, cpu_only = false;
  for (const auto& [tenant, j] : s.jobs) {
    kinds.insert(j.kind);
    gang = gang || j.workers > 1;
    replicas = replicas || (j.replicas && j.replicas->max > 1);
    milli = milli || j.gpu_milli.has_value();
    cpu_only = cpu_only || j.cpu_only();
  }
  EXPECT_EQ(kinds.size(), 4u);
  EXPECT_TRUE(gang && replicas && milli && cpu_only);
}

TEST_F(DemoWorldTest, Deterministic) {
  auto a = build_demo_world(price_files(""), *catalog_);
  auto b = build_demo_world(price_files(""), *catalog_);
  ASSERT_TRUE(a && b);
  ASSERT_EQ(a->objects.size(), b->objects.size());
  for (size_t i = 0; i < a->objects.size(); ++i) {
    EXPECT_EQ(a->objects[i].kind, b->objects[i].kind);
    EXPECT_EQ(a->objects[i].body.dump(), b->objects[i].body.dump());
    EXPECT_EQ(a->objects[i].as_tenant, b->objects[i].as_tenant);
  }
}

TEST_F(DemoWorldTest, BrokenListIsAnErrorNotASilentFallback) {
  TempDir d("broken");
  d.write("prices/lambda_vms.csv",
          "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice\r\n"
          "gpu_8x_h100_sxm5,H100,8.0,208.0,1800.0,twenty,us-east-1,,\r\n");
  auto w = build_demo_world(price_files(d.path.string()), *catalog_);
  ASSERT_FALSE(w);
  EXPECT_NE(w.error().message.find("lambda_vms.csv line 2: Price:"), std::string::npos) << w.error().message;
}

TEST_F(DemoWorldTest, ModelsMissingFromAListComeFromTheBuiltInSet) {
  TempDir d("partial");
  // Lambda's list with a different H100 price and no A100; no RunPod list at all.
  d.write("prices/lambda_vms.csv",
          "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice\n"
          "gpu_8x_h100_sxm5,H100,8.0,208.0,1800.0,20.00,us-east-1,,\n");
  auto w = build_demo_world(price_files(d.path.string()), *catalog_);
  ASSERT_TRUE(w) << reason(w.error());
  EXPECT_NE(w->price_source.find("prices (lambda_vms.csv); built-in for lambda a100-sxm4-80gb, runpod "),
            std::string::npos)
      << w->price_source;
  Seen s;
  validate(*w, s);
  EXPECT_EQ(offer_of(s, "lambda", "h100-sxm5-80gb")->prices.on_demand.amount_string(), "2.50");  // 20.00 / 8
  EXPECT_EQ(offer_of(s, "lambda", "a100-sxm4-80gb")->prices.on_demand.amount_string(), "1.79");  // built-in
}

}  // namespace
}  // namespace gpurent
