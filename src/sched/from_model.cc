#include "sched/from_model.h"

namespace gpurent {

SchedNode to_sched_node(const Node& n, const std::string& id, const GpuCatalog& catalog) {
  SchedNode s;
  s.id = id;
  s.name = n.name;
  s.gpu_model = n.gpu_model;
  if (const GpuModel* m = catalog.find(n.gpu_model)) {
    s.form_factor = m->form_factor;
    s.gpu_memory_gib = m->memory_gib;
  }
  for (const Nic& nic : n.nics) {
    if (nic.rdma == RdmaType::kInfiniband) s.rdma |= kRdmaIb;
    if (nic.rdma == RdmaType::kRoceV2) s.rdma |= kRdmaRoce;
    if (nic.rdma != RdmaType::kNone && s.fabric.empty()) s.fabric = nic.fabric;
  }
  s.supplier = n.supplier_id;
  s.site = n.site;
  s.region = n.region;
  s.cpu_cores = n.cpu.cores;
  s.memory_gib = n.memory_gib;
  for (const NodeGpu& g : n.gpus) s.gpu_domains.push_back(g.nvlink_domain ? id + "/" + *g.nvlink_domain : "");
  return s;
}

SchedJob to_sched_job(const Job& j, const std::string& id, TimeMs submitted_at) {
  SchedJob s;
  s.id = id;
  s.tenant = j.tenant_id;
  s.project = j.project_id;
  s.kind = j.kind;
  s.priority = j.priority_class;
  s.workers = j.workers;
  s.gpus_per_worker = j.gpus_per_worker;
  s.gpu_milli = j.gpu_milli;
  s.cpu_cores = j.resources.cpu_cores;
  s.memory_gib = j.resources.memory_gib;
  s.gpu_models = j.constraints.gpu_models;
  s.form_factor = j.constraints.form_factor;
  s.min_gpu_memory_gib = j.constraints.min_gpu_memory_gib;
  s.rdma = j.constraints.rdma;
  s.placement = j.constraints.placement;
  s.nodes = j.constraints.nodes;
  s.spot = j.billing.mode == BillingMode::kSpot;
  s.reserved = j.billing.mode == BillingMode::kReserved;
  s.terms.regions = j.constraints.regions;
  s.terms.suppliers = j.constraints.suppliers;
  s.terms.span_sites = j.constraints.span_sites;
  if (j.billing.offer) s.terms.offers = {*j.billing.offer};
  if (const auto& cap = j.billing.max_price_per_gpu_hour) {
    s.terms.max_price = cap->micros();
    s.terms.currency = currency_code(cap->currency());
  }
  if (j.replicas) {
    s.replicas_min = j.replicas->min;
    s.replicas_max = j.replicas->max;
  }
  if (j.expected_duration_seconds) s.expected_duration_ms = *j.expected_duration_seconds * 1000;
  if (j.time_limit_seconds) s.time_limit_ms = *j.time_limit_seconds * 1000;
  s.submitted_at = submitted_at;
  return s;
}

SchedProject to_sched_project(const Project& p, const std::string& id) {
  return SchedProject{id, p.name, p.tenant_id, p.quota};
}

}  // namespace gpurent
