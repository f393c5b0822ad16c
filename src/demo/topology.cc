#include "demo/topology.h"

#include "core/ids.h"

namespace gpurent {
namespace {

// `count` ports named prefix0..prefix{count-1}.
void add_ports(std::vector<Nic>& nics, const std::string& prefix, int count, RdmaType rdma, int64_t gbps) {
  for (int i = 0; i < count; ++i) nics.push_back(Nic{prefix + std::to_string(i), rdma, gbps});
}

}  // namespace

NodeShape hgx_hopper(const std::string& gpu_model, RdmaType rdma) {
  NodeShape s;
  s.gpu_model = gpu_model;
  s.gpu_count = 8;
  s.fabric = "nvswitch";
  s.pcie_gen = 5;
  s.cpu = NodeCpu{"Intel Xeon Platinum 8480+", 112, 2};
  s.memory_gib = 2048;
  s.numa_nodes = 2;
  add_ports(s.nics, "mlx5_", 8, rdma, 400);
  s.nics.push_back(Nic{"eth0", RdmaType::kNone, 200});
  return s;
}

NodeShape hgx_a100(RdmaType rdma) {
  NodeShape s;
  s.gpu_model = "a100-sxm4-80gb";
  s.gpu_count = 8;
  s.fabric = "nvswitch";
  s.pcie_gen = 4;
  s.cpu = NodeCpu{"AMD EPYC 7763", 128, 2};
  s.memory_gib = 2048;
  s.numa_nodes = 2;
  add_ports(s.nics, "mlx5_", 8, rdma, 200);
  s.nics.push_back(Nic{"eth0", RdmaType::kNone, 100});
  return s;
}

NodeShape pcie_l40s() {
  NodeShape s;
  s.gpu_model = "l40s-48gb";
  s.gpu_count = 8;
  s.pcie_gen = 4;
  s.cpu = NodeCpu{"AMD EPYC 9354", 64, 2};
  s.memory_gib = 1024;
  s.numa_nodes = 2;
  s.nics.push_back(Nic{"eth0", RdmaType::kNone, 100});
  return s;
}

NodeShape pcie_a100() {
  NodeShape s;
  s.gpu_model = "a100-pcie-80gb";
  s.gpu_count = 4;
  s.pcie_gen = 4;
  s.cpu = NodeCpu{"Intel Xeon Gold 6338", 64, 2};
  s.memory_gib = 1024;
  s.numa_nodes = 2;
  add_ports(s.nics, "mlx5_", 2, RdmaType::kRoceV2, 100);
  s.nics.push_back(Nic{"eth0", RdmaType::kNone, 25});
  return s;
}

NodeShape atlas_910b() {
  NodeShape s;
  s.gpu_model = "ascend-910b-64gb";
  s.gpu_count = 8;
  s.fabric = "hccs";
  s.pcie_gen = 4;
  s.cpu = NodeCpu{"Huawei Kunpeng 920 (48-core)", 192, 4};
  s.memory_gib = 1024;
  s.numa_nodes = 4;
  add_ports(s.nics, "roce", 8, RdmaType::kRoceV2, 200);
  s.nics.push_back(Nic{"eth0", RdmaType::kNone, 25});
  s.nvidia_uuids = false;
  return s;
}

std::string derived_gpu_uuid(const std::string& seed) {
  const std::string h = sha256_hex(seed);
  return "GPU-" + h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" +
         h.substr(20, 12);
}

Node make_node(const NodeShape& shape, const std::string& name, const std::string& supplier, const std::string& site,
               const std::string& region, const NodeSoftware& software, const std::vector<NodeImage>& images,
               NodeState state, std::optional<std::string> state_reason) {
  Node n;
  n.name = name;
  n.supplier = supplier;
  n.site = site;
  n.region = region;
  n.gpu_model = shape.gpu_model;
  for (int64_t i = 0; i < shape.gpu_count; ++i) {
    NodeGpu g;
    g.index = i;
    if (shape.nvidia_uuids) g.uuid = derived_gpu_uuid(supplier + "/" + name + "/" + std::to_string(i));
    if (shape.fabric) g.nvlink_domain = name + "-" + *shape.fabric;
    g.numa_node = i * shape.numa_nodes / shape.gpu_count;
    g.pcie_gen = shape.pcie_gen;
    n.gpus.push_back(std::move(g));
  }
  n.cpu = shape.cpu;
  n.memory_gib = shape.memory_gib;
  n.numa_nodes = shape.numa_nodes;
  n.nics = shape.nics;
  n.software = software;
  n.images = images;
  n.state = state;
  n.state_reason = std::move(state_reason);
  return n;
}

}  // namespace gpurent
