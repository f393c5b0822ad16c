// Hardware shapes of the demo world's servers (HGX boards, PCIe servers, Ascend training servers)
// and the Node values built from them: the GPU fabric domain, CPU–GPU NUMA binding, PCIe
// generation, CPUs, memory and NICs a buyer checks. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/node.h"

namespace gpurent {

struct NodeShape {
  std::string gpu_model;  // catalog id
  int64_t gpu_count = 8;
  // Every GPU of the node sits in one fabric domain named "<node>-<fabric>" ("nvswitch" for an
  // HGX board's NVLink/NVSwitch, "hccs" for Ascend's HCCS); nullopt: PCIe only.
  std::optional<std::string> fabric;
  int64_t pcie_gen = 4;
  NodeCpu cpu;
  int64_t memory_gib = 0;
  int64_t numa_nodes = 2;  // GPU i is on NUMA node i * numa_nodes / gpu_count (0-3 -> 0, 4-7 -> 1)
  std::vector<Nic> nics;
  bool nvidia_uuids = true;  // give each GPU a UUID as nvidia-smi -L prints it
};

// 8-GPU HGX H100/H200 board: one NVSwitch domain, PCIe gen 5, 2x Xeon Platinum 8480+, 2 TiB, and
// eight 400 Gb/s ConnectX-7 ports (one per GPU) of `rdma` plus a 200 Gb/s front-end port.
NodeShape hgx_hopper(const std::string& gpu_model, RdmaType rdma);
// 8-GPU HGX A100 80GB board: one NVSwitch domain, PCIe gen 4, 2x EPYC 7763, 2 TiB, eight
// 200 Gb/s (HDR-generation) ports of `rdma` plus a 100 Gb/s front-end port.
NodeShape hgx_a100(RdmaType rdma);
// 8x L40S PCIe server: no GPU fabric, PCIe gen 4, 2x EPYC 9354, 1 TiB, one 100 Gb/s Ethernet
// port without RDMA.
NodeShape pcie_l40s();
// 4x A100 PCIe 80GB server: no GPU fabric, PCIe gen 4, 2x Xeon Gold 6338, 1 TiB, two 100 Gb/s
// RoCE v2 ports plus a 25 Gb/s front-end port.
NodeShape pcie_a100();
// Atlas 800T A2-style server: 8 Ascend 910B modules in one HCCS domain, 4x Kunpeng 920 (48 cores
// each) on 4 NUMA nodes, 1 TiB, each module's own 200 GbE RoCE v2 port plus a 25 Gb/s front-end
// port. The NUMA binding (two modules per node) is an assumption: Huawei publishes no figure.
NodeShape atlas_910b();

// A node of `shape`, available unless `state` says otherwise. GPU UUIDs (NVIDIA shapes) are
// derived from the node name, so the same name always gives the same UUIDs.
Node make_node(const NodeShape& shape, const std::string& name, const std::string& supplier, const std::string& site,
               const std::string& region, const NodeSoftware& software, const std::vector<NodeImage>& images,
               NodeState state = NodeState::kAvailable, std::optional<std::string> state_reason = std::nullopt);

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" from a SHA-256 of `seed`.
std::string derived_gpu_uuid(const std::string& seed);

}  // namespace gpurent
