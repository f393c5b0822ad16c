// Node: one server a supplier rents out, described down to the hardware truth a buyer checks —
// every GPU with its NVLink domain, NUMA affinity and PCIe generation; CPU, memory and NUMA layout;
// NICs and their RDMA type; driver/CUDA/cuDNN/NCCL versions; container images and the date of
// their last CVE patch. parse_node() checks the GPU model against the catalog and the cross-field
// rules of the topology. Schema: docs/resources/nodes.md. Value types; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "model/enums_supply.h"
#include "model/resource.h"

namespace gpurent {

class GpuCatalog;

inline constexpr int64_t kMaxGpusPerNode = 16;

struct NodeGpu {
  int64_t index = 0;                         // 0..n-1, as nvidia-smi numbers them
  std::optional<std::string> uuid;           // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
  std::optional<std::string> nvlink_domain;  // GPUs sharing a value talk over NVLink/NVSwitch; absent: PCIe only
  int64_t numa_node = 0;                     // NUMA node the GPU is attached to, < Node::numa_nodes
  int64_t pcie_gen = 0;                      // 3..6

  bool operator==(const NodeGpu&) const = default;
};

struct NodeCpu {
  std::string model;    // "Intel Xeon Platinum 8480+"
  int64_t cores = 0;    // physical cores, all sockets together
  int64_t sockets = 0;

  bool operator==(const NodeCpu&) const = default;
};

struct Nic {
  std::string name;  // device or interface name: "mlx5_0", "ib0", "eth0"
  RdmaType rdma = RdmaType::kNone;
  int64_t gbps = 0;  // line rate, gigabits per second
  std::string fabric;  // the RDMA fabric it is on ("" unknown): a gang stays on one (docs/scheduler.md)

  bool operator==(const Nic&) const = default;
};

struct NodeSoftware {
  std::string driver;                // NVIDIA driver, "550.54.15"
  std::string cuda;                  // "12.4"
  std::optional<std::string> cudnn;  // "9.1.0"
  std::optional<std::string> nccl;   // "2.21.5"

  bool operator==(const NodeSoftware&) const = default;
};

struct NodeImage {
  std::string name;           // container image reference, "nvcr.io/nvidia/pytorch:24.03-py3"
  TimeMs cve_patched_at = 0;  // last time the image was rebuilt with CVE fixes

  bool operator==(const NodeImage&) const = default;
};

struct Node {
  std::string name;         // slug, unique within the supplier
  std::string supplier;     // reference as given: supplier id or name (kRefPattern)
  std::string supplier_id;  // resolved by the server; never read from a body
  std::string site;         // slug of one of the supplier's sites
  std::string region;
  std::string gpu_model;    // canonical catalog id (aliases are resolved by parse_node)
  std::vector<NodeGpu> gpus;  // sorted by index
  NodeCpu cpu;
  int64_t memory_gib = 0;   // host memory
  int64_t numa_nodes = 0;
  std::vector<Nic> nics;
  NodeSoftware software;
  std::vector<NodeImage> images;
  NodeState state = NodeState::kAvailable;
  std::optional<std::string> state_reason;

  bool operator==(const Node&) const = default;
};

// Validates a create/update body; `catalog` resolves gpu_model (an id or an alias).
Result<Node> parse_node(const json& body, const GpuCatalog& catalog);
Result<Node> decode_node(const json& body, const GpuCatalog& catalog);  // a stored one: parse_node + supplier_id

// A stored node's cards (index and UUID), by parse_node's rules for them: the one reader for the
// hot paths that need only the cards (usage ingest, utilization and supplier views, measurements)
// and not the catalog checks. A malformed card is an error naming it ("gpus[2].index").
struct StoredCard {
  int64_t index = 0;
  std::optional<std::string> uuid;
};
Result<std::vector<StoredCard>> stored_node_cards(const json& body);
// A stored node's site (the ledger matches it against offers' node selectors).
Result<std::string> stored_node_site(const json& body);
// Includes supplier_id when set.
json to_json(const Node& n);
IndexCols index_of(const Node& n);  // name, supplier_id, region, gpu_model, state

}  // namespace gpurent
