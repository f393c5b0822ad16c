// The demo world's customers: two tenants (one paying in USD, one in CNY), their users and
// projects with quotas, the supplier user of 华东智算中心, and ten sample jobs of every kind.
// Names and people are fictional; addresses use the reserved .example domain.
#include "demo/world_parts.h"
#include "model/job.h"
#include "model/project.h"
#include "model/tenant.h"
#include "model/user.h"

namespace gpurent {
namespace {


Money usd(int64_t units) { return Money(units * Money::kMicrosPerUnit, Currency::kUSD); }
Money cny(int64_t units) { return Money(units * Money::kMicrosPerUnit, Currency::kCNY); }
Money cents_money(int64_t c, Currency cur) { return Money(c * 10'000, cur); }

Tenant tenant(const std::string& name, const char* display, Currency currency, const char* segment,
              const char* home_region) {
  Tenant t;
  t.name = name;
  t.display_name = display;
  t.currency = currency;
  t.contact_email = "ops@" + name + ".example";
  t.labels = {{"segment", segment}, {"home-region", home_region}};
  return t;
}

User user(const char* name, const char* display, const char* email, Role role, const char* tenant,
          const char* supplier = "") {
  User u;
  u.name = name;
  u.display_name = display;
  u.email = email;
  u.role = role;
  u.tenant = tenant;
  u.supplier = supplier;
  return u;
}

Quota quota(std::map<std::string, int64_t> gpus_per_model, int64_t max_gpus_per_job, int64_t max_concurrent_jobs,
            Money monthly_budget, BudgetAction action) {
  Quota q;
  q.gpus_per_model = std::move(gpus_per_model);
  q.max_gpus_per_job = max_gpus_per_job;
  q.max_concurrent_jobs = max_concurrent_jobs;
  q.monthly_budget = monthly_budget;
  q.budget_action = action;
  return q;
}

Project project(const char* name, const char* tenant, const char* display, Quota q) {
  Project p;
  p.name = name;
  p.tenant = tenant;
  p.display_name = display;
  p.quota = std::move(q);
  return p;
}

// A job's POST body: the canonical document without the server's status.
json job_body(const Job& j) {
  json b = to_json(j);
  b.erase("status");
  return b;
}

Job base_job(const char* name, const char* project, JobKind kind) {
  Job j;
  j.name = name;
  j.project = project;
  j.kind = kind;
  j.priority_class = default_priority(kind);
  return j;
}

std::vector<Job> aurora_jobs() {
  std::vector<Job> jobs;
  {  // A 32-GPU training gang across four HGX H100 nodes over InfiniBand, inside a reservation.
    Job j = base_job("vit-h-pretrain", "vision", JobKind::kTraining);
    j.workers = 4;
    j.gpus_per_worker = 8;
    j.constraints.gpu_models = {"h100-sxm5-80gb"};
    j.constraints.rdma = RdmaRequirement::kInfiniband;
    j.billing.mode = BillingMode::kReserved;
    j.image = "nvcr.io/nvidia/pytorch:24.10-py3";
    j.command = {"torchrun", "--nnodes=4", "--nproc-per-node=8", "train.py", "--config", "configs/vit_h14.yaml"};
    j.env = {{"NCCL_IB_HCA", "mlx5"}, {"NCCL_DEBUG", "WARN"}};
    j.expected_duration_seconds = 3 * kSecondsPerDay;
    j.labels = {{"team", "vision"}, {"experiment", "vit-h14"}};
    jobs.push_back(std::move(j));
  }
  {  // One 8-GPU board, H100 or A100, all GPUs on one NVSwitch; on-demand with a price cap.
    Job j = base_job("detr-finetune", "vision", JobKind::kTraining);
    j.gpus_per_worker = 8;
    j.constraints.gpu_models = {"h100-sxm5-80gb", "a100-sxm4-80gb"};
    j.constraints.form_factor = FormFactor::kSxm;
    j.constraints.placement = PlacementRule::kSameNvlinkDomain;
    j.billing.max_price_per_gpu_hour = usd(3);
    j.image = "nvcr.io/nvidia/pytorch:24.10-py3";
    j.command = {"torchrun", "--nproc-per-node=8", "finetune.py", "--dataset", "coco-2017"};
    j.expected_duration_seconds = 8 * kSecondsPerHour;
    j.labels = {{"team", "vision"}};
    jobs.push_back(std::move(j));
  }
  {  // Interruptible batch labelling on any 80 GB card, spot only under 2 USD per GPU-hour.
    Job j = base_job("label-backfill", "vision", JobKind::kBatch);
    j.workers = 4;
    j.gpus_per_worker = 1;
    j.constraints.min_gpu_memory_gib = 80;
    j.billing.mode = BillingMode::kSpot;
    j.billing.max_price_per_gpu_hour = usd(2);
    j.image = "nvcr.io/nvidia/pytorch:24.10-py3";
    j.command = {"python", "label.py", "--input", "s3://aurora-datasets/unlabelled/", "--resume"};
    j.expected_duration_seconds = 12 * kSecondsPerHour;
    jobs.push_back(std::move(j));
  }
  {  // A notebook on half a PCIe card.
    Job j = base_job("notebook-maya", "vision", JobKind::kDebug);
    j.gpus_per_worker = 0;
    j.gpu_milli = 500;
    j.resources = {.cpu_cores = 8, .memory_gib = 64};
    j.constraints.gpu_models = {"a100-pcie-80gb", "l40s-48gb"};
    j.image = "quay.io/jupyter/pytorch-notebook:cuda12-python-3.11";
    j.command = {"jupyter", "lab", "--ip=0.0.0.0", "--no-browser"};
    j.expected_duration_seconds = 4 * kSecondsPerHour;
    jobs.push_back(std::move(j));
  }
  {  // A 70B chat model, tensor-parallel over 4 H200 of one node, 2 to 6 replicas.
    Job j = base_job("chat-70b", "llm-serving", JobKind::kInference);
    j.gpus_per_worker = 4;
    j.constraints.gpu_models = {"h200-sxm-141gb"};
    j.constraints.placement = PlacementRule::kSameNode;
    j.replicas = Replicas{2, 6};
    j.image = "vllm/vllm-openai:v0.6.3";
    j.command = {"python3",
                 "-m",
                 "vllm.entrypoints.openai.api_server",
                 "--model",
                 "meta-llama/Llama-3.1-70B-Instruct",
                 "--tensor-parallel-size",
                 "4"};
    j.env = {{"HF_HOME", "/models"}};
    j.labels = {{"service", "chat"}};
    jobs.push_back(std::move(j));
  }
  {  // An embedding endpoint on a quarter of an L40S per replica.
    Job j = base_job("embed-small", "llm-serving", JobKind::kInference);
    j.gpus_per_worker = 0;
    j.gpu_milli = 250;
    j.constraints.gpu_models = {"l40s-48gb"};
    j.replicas = Replicas{1, 4};
    j.image = "ghcr.io/huggingface/text-embeddings-inference:1.5";
    j.command = {"text-embeddings-router", "--model-id", "BAAI/bge-base-en-v1.5", "--port", "8080"};
    j.labels = {{"service", "embeddings"}};
    jobs.push_back(std::move(j));
  }
  return jobs;
}

std::vector<Job> qingyun_jobs() {
  const std::string cann = "quay.io/ascend/cann:8.0.0-910b-ubuntu22.04-py3.10";
  std::vector<Job> jobs;
  {  // 64 Ascend 910B over RoCE: eight Atlas nodes, inside the tenant's reservation.
    Job j = base_job("qwen-sft-72b", "pretrain", JobKind::kTraining);
    j.workers = 4;  // 32 NPUs of one site: a gang stays on one site (Lingang has six nodes, Wuhu four)
    j.gpus_per_worker = 8;
    j.constraints.gpu_models = {"ascend-910b-64gb"};
    j.constraints.rdma = RdmaRequirement::kRoceV2;
    j.billing.mode = BillingMode::kReserved;
    j.image = cann;
    j.command = {"torchrun", "--nnodes=4", "--nproc-per-node=8", "sft.py", "--model", "Qwen2.5-72B"};
    j.env = {{"HCCL_CONNECT_TIMEOUT", "1200"}};
    j.volumes = {{"pretrain-corpus", "/data", true}};  // the tenant's volume (below)
    j.expected_duration_seconds = 5 * kSecondsPerDay;
    j.labels = {{"team", "llm"}};
    jobs.push_back(std::move(j));
  }
  {  // CPU-only preprocessing: no GPU, so the worker's CPU and memory are stated.
    Job j = base_job("tokenize-corpus", "pretrain", JobKind::kBatch);
    j.workers = 4;
    j.gpus_per_worker = 0;
    j.resources = {.cpu_cores = 32, .memory_gib = 128};
    j.image = "docker.io/library/python:3.11-slim";
    j.command = {"python", "tokenize_corpus.py", "--input", "s3://qingyun-corpus/zh-web/", "--workers", "32"};
    j.expected_duration_seconds = 6 * kSecondsPerHour;
    jobs.push_back(std::move(j));
  }
  {  // A code assistant on two 910B per replica, capped at 12 CNY per card-hour.
    Job j = base_job("code-assist", "copilot", JobKind::kInference);
    j.gpus_per_worker = 2;
    j.constraints.gpu_models = {"ascend-910b-64gb"};
    j.constraints.placement = PlacementRule::kSameNode;
    j.billing.max_price_per_gpu_hour = cny(12);
    j.replicas = Replicas{1, 3};
    j.image = "quay.io/ascend/vllm-ascend:v0.7.3";
    j.command = {"vllm", "serve", "Qwen/Qwen2.5-Coder-32B-Instruct", "--tensor-parallel-size", "2"};
    j.labels = {{"service", "copilot"}};
    jobs.push_back(std::move(j));
  }
  {  // Nightly evaluation on spare capacity: spot, 910B or A100.
    Job j = base_job("eval-nightly", "copilot", JobKind::kBatch);
    j.gpus_per_worker = 1;
    j.constraints.gpu_models = {"ascend-910b-64gb", "a100-sxm4-80gb"};
    j.billing.mode = BillingMode::kSpot;
    j.billing.max_price_per_gpu_hour = cents_money(600, Currency::kCNY);
    j.image = cann;
    j.command = {"python", "eval.py", "--suite", "humaneval"};
    j.expected_duration_seconds = 2 * kSecondsPerHour;
    jobs.push_back(std::move(j));
  }
  return jobs;
}

}  // namespace

std::vector<DemoObject> demand_objects() {
  std::vector<DemoObject> out;
  // An enterprise pays after the month on credit (invoices, a limit); a startup prepays (充值), as
  // developer GPU clouds' users do, and is warned two days before its balance runs out.
  Tenant aurora = tenant("aurora-ai", "Aurora AI", Currency::kUSD, "enterprise", "us");
  aurora.billing.credit_limit = usd(250'000);
  out.push_back({"tenants", to_json(aurora), ""});
  // An Ascend 910B card at ¥11/h costs ¥264 a day: the default 100.00 threshold, meant for dollars,
  // would alert on every card every day, so the CNY tenant sets thresholds of its own.
  Tenant qingyun = tenant("qingyun-tech", "青云科技", Currency::kCNY, "startup", "cn");
  qingyun.cost_firewall.card_daily_cost = cny(800);
  qingyun.cost_firewall.egress_daily_cost = cny(3500);
  qingyun.billing.payment = Payment::kPrepaid;
  qingyun.billing.runway_alert_minutes = 2 * 24 * 60;
  out.push_back({"tenants", to_json(qingyun), ""});

  // The operator creates each tenant's first admin (the seed acts as that admin for as_tenant
  // objects) and the supplier's user; the admins create the rest of their tenant.
  struct UserRow {
    const char* name;
    const char* display_name;
    const char* email;
    Role role;
    const char* tenant;
    const char* supplier;
    const char* created_by_admin_of;
  };
  const UserRow users[] = {
      {"aurora-admin", "Maya Chen", "maya.chen@aurora-ai.example", Role::kTenantAdmin, "aurora-ai", "", ""},
      {"qingyun-admin", "王磊", "wang.lei@qingyun-tech.example", Role::kTenantAdmin, "qingyun-tech", "", ""},
      {"huadong-ops", "华东智算中心 运维", "noc@huadong-aidc.example", Role::kSupplier, "", "huadong-aidc", ""},
      {"aurora-dev", "Sam Okafor", "sam.okafor@aurora-ai.example", Role::kTenantMember, "aurora-ai", "", "aurora-ai"},
      {"aurora-finance", "Priya Nair", "priya.nair@aurora-ai.example", Role::kViewer, "aurora-ai", "", "aurora-ai"},
      {"qingyun-dev", "李娜", "li.na@qingyun-tech.example", Role::kTenantMember, "qingyun-tech", "", "qingyun-tech"},
      {"qingyun-audit", "赵敏", "zhao.min@qingyun-tech.example", Role::kViewer, "qingyun-tech", "", "qingyun-tech"},
  };
  for (const UserRow& u : users)
    out.push_back(
        {"users", to_json(user(u.name, u.display_name, u.email, u.role, u.tenant, u.supplier)), u.created_by_admin_of});

  // Quotas: the resource firewall (GPUs per model, per job, concurrent jobs) and the cost
  // firewall (monthly budget; hold stops admitting, alert only warns). A 64-card pool for a
  // month is about 138,000 USD of H100 at 2.99 or 507,000 CNY of 910B at 11.00.
  out.push_back({"projects",
                 to_json(project("vision", "aurora-ai", "Vision research",
                                 quota({{"h100-sxm5-80gb", 64},
                                        {"a100-sxm4-80gb", 32},
                                        {"h200-sxm-141gb", 16},
                                        {"a100-pcie-80gb", 4},
                                        {"l40s-48gb", 4}},
                                       32, 8, usd(150'000), BudgetAction::kHold))),
                 "aurora-ai"});
  out.push_back({"projects",
                 to_json(project("llm-serving", "aurora-ai", "LLM serving",
                                 quota({{"h200-sxm-141gb", 24}, {"l40s-48gb", 16}, {"a100-pcie-80gb", 8}}, 24, 20,
                                       usd(60'000), BudgetAction::kAlert))),
                 "aurora-ai"});
  out.push_back({"projects",
                 to_json(project("pretrain", "qingyun-tech", "大模型训练",
                                 quota({{"ascend-910b-64gb", 64}, {"a100-sxm4-80gb", 16}}, 64, 4, cny(600'000),
                                       BudgetAction::kHold))),
                 "qingyun-tech"});
  out.push_back(
      {"projects",
       to_json(project("copilot", "qingyun-tech", "代码助手",
                       quota({{"ascend-910b-64gb", 16}, {kAnyGpuModel, 4}}, 8, 10, cny(80'000), BudgetAction::kAlert))),
       "qingyun-tech"});

  // 青云科技's tokenised corpus, which its SFT job reads: a volume of the tenant, created by its admin.
  out.push_back({"volumes",
                 {{"name", "pretrain-corpus"},
                  {"size_gb", 2000},
                  {"description", "清洗后的预训练语料 (deduplicated, tokenised pretraining corpus)"}},
                 "qingyun-tech"});
  // 青云科技's 12-month reserved commitment: eight Atlas 910B nodes the scheduler holds for it.
  {
    nlohmann::json nodes = nlohmann::json::array();
    for (int i = 1; i <= 6; ++i) nodes.push_back("huadong-aidc-sh-910b-0" + std::to_string(i));
    for (int i = 1; i <= 2; ++i) nodes.push_back("huadong-aidc-wuhu-910b-0" + std::to_string(i));
    out.push_back({"reservations",
                   {{"name", "qingyun-910b-2027"},
                    {"tenant", "qingyun-tech"},
                    {"nodes", nodes},
                    {"starts_at", "2026-11-01T00:00:00Z"},
                    {"ends_at", "2027-11-01T00:00:00Z"},
                    {"note", "12-month reserved commitment (包年), 64 Ascend 910B"}},
                   ""});
  }
  // Contracts: what the two tenants signed. The reserved commitments are billed whether used or
  // not; their runs are covered, the rest is rated on-demand (docs/billing.md).
  out.push_back({"contracts",
                 {{"name", "qingyun-huadong-2027"},
                  {"tenant", "qingyun-tech"},
                  {"supplier", "huadong-aidc"},
                  {"offers", {"huadong-aidc-ascend-910b-64gb-cn-east", "huadong-aidc-a100-sxm4-80gb-cn-east"}},
                  {"currency", "CNY"},
                  {"starts_at", "2026-11-01T00:00:00Z"},
                  {"commitments",
                   {{{"name", "910b-64-12m"},
                     {"offer", "huadong-aidc-ascend-910b-64gb-cn-east"},
                     {"gpus", 64},
                     {"term_months", 12},
                     {"starts_at", "2026-11-01T00:00:00Z"}}}}},
                 ""});
  out.push_back({"contracts",
                 {{"name", "aurora-lambda-h100"},
                  {"tenant", "aurora-ai"},
                  {"supplier", "lambda"},
                  {"offers", {"lambda-h100-sxm5-80gb-us-south-1"}},
                  {"currency", "USD"},
                  {"starts_at", "2026-11-01T00:00:00Z"},
                  {"commitments",
                   {{{"name", "h100-32-1m"},
                     {"offer", "lambda-h100-sxm5-80gb-us-south-1"},
                     {"gpus", 32},
                     {"term_months", 1},
                     {"starts_at", "2026-11-01T00:00:00Z"}}}}},
                 ""});
  // Aurora's POC of Lambda's H100s before it signed (docs/advisor/poc.md#poc-runs): the pass marks
  // from the contract's floors, no result recorded yet in the demo, so the verdict is pending.
  out.push_back({"poc-runs",
                 {{"name", "lambda-h100-poc"},
                  {"supplier", "lambda"},
                  {"contract", "aurora-lambda-h100"},
                  {"start", "2026-11-18T01:00:00Z"},
                  {"model",
                   {{"name", "aurora-vit-l"},
                    {"metric", "images/s"},
                    {"baseline_throughput", "4200"},
                    {"baseline", "8×A100 80GB, in-house"}}},
                  {"gpu_model", "h100-sxm5-80gb"},
                  {"gpus", 8},
                  {"thresholds", {{"storage_gbps", "2"}}}},
                 "aurora-ai"});
  for (const Job& j : aurora_jobs()) out.push_back({"jobs", job_body(j), "aurora-ai"});
  for (const Job& j : qingyun_jobs()) out.push_back({"jobs", job_body(j), "qingyun-tech"});
  // An engineer's interactive instance on one 910B with the corpus volume as its data disk.
  out.push_back({"instances",
                 {{"name", "dev-box"},
                  {"project", "copilot"},
                  {"gpus", 1},
                  {"gpu_model", "ascend-910b-64gb"},
                  {"image", "quay.io/ascend/cann:8.0.0-910b-ubuntu22.04-py3.10"},
                  {"command", {"sleep", "infinity"}},
                  {"volume", {{"name", "pretrain-corpus"}, {"mount", "/data"}}}},
                 "qingyun-tech"});
  return out;
}

}  // namespace gpurent
