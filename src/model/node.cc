#include "model/node.h"

#include "core/json_put.h"

#include "model/record_codec.h"

#include <algorithm>
#include <map>
#include <set>

#include "catalog/gpu_catalog.h"

namespace gpurent {
namespace {

constexpr StrRule kRefRule{.min_len = 1, .max_len = 63, .pattern = kRefPattern, .pattern_help = kRefHelp};
constexpr StrRule kUuidRule{.min_len = 1, .max_len = 64,
                            .pattern = "GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
                            .pattern_help = "pattern.gpu_uuid"};
constexpr StrRule kVersionRule{.min_len = 1, .max_len = 32, .pattern = "[0-9]+(\\.[0-9]+){0,3}([-+][A-Za-z0-9.+-]+)?",
                               .pattern_help = "pattern.version"};
constexpr StrRule kNicNameRule{.min_len = 1, .max_len = 32, .pattern = "[A-Za-z0-9][A-Za-z0-9_.:-]*",
                               .pattern_help = "pattern.nic_name"};
constexpr StrRule kNodeImageRule{.min_len = 1, .max_len = 255, .pattern = "[a-z0-9][A-Za-z0-9._/:@+-]*",
                             .pattern_help = "pattern.node_image"};

// Per-GPU values that parsed, for the cross-field checks once the whole body is read.
struct GpuSeen {
  size_t pos = 0;  // position in the body's list (elements that are not objects get no GpuSeen)
  std::optional<int64_t> index;
  std::optional<int64_t> numa_node;
};

std::string at(size_t pos) { return "gpus[" + std::to_string(pos) + "]"; }

// `listed`: length of the body's list; `seen[k]` describes `gpus[k]`.
void check_gpus(Fields& f, const std::vector<NodeGpu>& gpus, const std::vector<GpuSeen>& seen, size_t listed,
                const GpuModel* model, std::optional<int64_t> numa_nodes) {
  std::map<int64_t, size_t> by_index;
  std::map<std::string, size_t> by_uuid;
  for (size_t k = 0; k < seen.size(); ++k) {
    const NodeGpu& g = gpus[k];
    const std::string path = at(seen[k].pos);
    if (seen[k].index) {
      int64_t idx = *seen[k].index;
      if (idx >= static_cast<int64_t>(listed))
        f.error(path + ".index", Message("node.gpu.index_range")
                                     .arg("count", std::to_string(listed))
                                     .arg("last", std::to_string(listed - 1)));
      else if (auto [it, fresh] = by_index.emplace(idx, seen[k].pos); !fresh)
        f.error(path + ".index",
                Message("node.gpu.duplicate_index").arg("index", std::to_string(idx)).arg("other", at(it->second)));
    }
    if (seen[k].numa_node && numa_nodes && *seen[k].numa_node >= *numa_nodes)
      f.error(path + ".numa_node", Message("node.gpu.numa_node_range").arg("numa_nodes", std::to_string(*numa_nodes)));
    if (g.uuid) {
      if (auto [it, fresh] = by_uuid.emplace(*g.uuid, seen[k].pos); !fresh)
        f.error(path + ".uuid", Message("node.gpu.duplicate_uuid").arg("other", at(it->second)));
    }
    // SXM and OAM modules sit on a baseboard whose GPU fabric (NVLink/NVSwitch or the vendor's
    // equivalent) links every GPU; only PCIe cards can be fabric-less.
    if (model && model->form_factor != FormFactor::kPcie && !g.nvlink_domain)
      f.error(path + ".nvlink_domain", Message("node.gpu.nvlink_domain_required")
                                           .arg("model", model->id)
                                           .arg("form_factor", enum_name(kFormFactorNames, model->form_factor)));
    if (model && model->pcie_gen && g.pcie_gen > *model->pcie_gen)
      f.error(path + ".pcie_gen", Message("node.gpu.pcie_gen_above_model")
                                      .arg("model", model->id)
                                      .arg("pcie_gen", std::to_string(*model->pcie_gen)));
  }
}

}  // namespace

Result<std::vector<StoredCard>> stored_node_cards(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  std::vector<StoredCard> out;
  f.objects("gpus", false, kMaxGpusPerNode, [&](Fields& g, size_t) {
    StoredCard c;
    c.index = g.integer("index", 0, kMaxGpusPerNode - 1);
    c.uuid = g.opt_str("uuid", kUuidRule);
    g.ignore({"numa_node", "pcie_gen", "nvlink_domain"});  // parse_node's to check
    out.push_back(std::move(c));
  });
  if (!errs.empty()) return errs.to_error();
  return out;
}

Result<std::string> stored_node_site(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  std::string site = f.str("site", kSlugRule);
  if (!errs.empty()) return errs.to_error();
  return site;
}

Result<Node> decode_node(const json& body, const GpuCatalog& catalog) {
  return with_server_keys(parse_node(body, catalog), body,
                          [](Fields& f, Node& n) { n.supplier_id = f.opt_str("supplier_id", kServerText).value_or(""); });
}

Result<Node> parse_node(const json& body, const GpuCatalog& catalog) {
  FieldErrors errs;
  Fields f(body, "", errs);
  Node n;
  if (!f.valid_object()) return errs.to_error();

  n.name = f.str("name", kSlugRule);
  n.supplier = f.str("supplier", kRefRule);
  n.site = f.str("site", kSlugRule);
  n.region = f.str("region", kRegionRule);
  const GpuModel* model = read_gpu_model_ref(f, catalog, "gpu_model");
  if (model) n.gpu_model = model->id;

  std::optional<int64_t> sockets;
  f.object("cpu", true, [&](Fields& cf) {
    n.cpu.model = cf.str("model", {.max_len = 128});
    auto cores = cf.opt_integer("cores", 1, 1024);
    sockets = cf.opt_integer("sockets", 1, 16);
    if (!cf.has("cores")) cf.error("cores", Message("field.required"));
    if (!cf.has("sockets")) cf.error("sockets", Message("field.required"));
    n.cpu.cores = cores.value_or(0);
    n.cpu.sockets = sockets.value_or(0);
    if (cores && sockets && *cores < *sockets)
      cf.error("cores", Message("node.cpu.cores_below_sockets").arg("sockets", std::to_string(*sockets)));
  });
  n.memory_gib = f.integer("memory_gib", 1, 65'536);
  std::optional<int64_t> numa_nodes = f.opt_integer("numa_nodes", 1, 64);
  if (!f.has("numa_nodes")) f.error("numa_nodes", Message("field.required"));
  n.numa_nodes = numa_nodes.value_or(0);
  if (numa_nodes && sockets && *numa_nodes < *sockets)
    f.error("numa_nodes", Message("node.numa_nodes.below_sockets").arg("sockets", std::to_string(*sockets)));

  std::vector<GpuSeen> seen;
  f.objects("gpus", true, kMaxGpusPerNode, [&](Fields& gf, size_t pos) {
    NodeGpu g;
    GpuSeen s{.pos = pos};
    s.index = gf.opt_integer("index", 0, kMaxGpusPerNode - 1);
    if (!gf.has("index")) gf.error("index", Message("field.required"));
    g.uuid = gf.opt_str("uuid", kUuidRule);
    g.nvlink_domain = gf.opt_str("nvlink_domain", kSlugRule);
    s.numa_node = gf.opt_integer("numa_node", 0, 63);
    if (!gf.has("numa_node")) gf.error("numa_node", Message("field.required"));
    g.pcie_gen = gf.integer("pcie_gen", 3, 6);
    g.index = s.index.value_or(-1);
    g.numa_node = s.numa_node.value_or(-1);
    n.gpus.push_back(std::move(g));
    seen.push_back(s);
  });
  if (auto it = body.find("gpus"); it != body.end() && it->is_array() && it->size() <= kMaxGpusPerNode) {
    if (it->empty()) f.error("gpus", Message("node.gpus.empty"));
    check_gpus(f, n.gpus, seen, it->size(), model, numa_nodes);
  }

  std::set<std::string> nic_names;
  f.objects("nics", false, 32, [&](Fields& nf, size_t) {
    Nic nic;
    nic.name = nf.str("name", kNicNameRule);
    if (!nic.name.empty() && !nic_names.insert(nic.name).second)
      nf.error("name", Message("node.nic.duplicate_name").arg("name", nic.name));
    nic.rdma = nf.enumeration("rdma", kRdmaTypes);
    nic.gbps = nf.integer("gbps", 1, 3200);
    nic.fabric = nf.opt_str("fabric", kSlugRule).value_or("");
    n.nics.push_back(std::move(nic));
  });

  f.object("software", true, [&](Fields& sf) {
    n.software.driver = sf.str("driver", kVersionRule);
    n.software.cuda = sf.str("cuda", kVersionRule);
    n.software.cudnn = sf.opt_str("cudnn", kVersionRule);
    n.software.nccl = sf.opt_str("nccl", kVersionRule);
  });

  std::set<std::string> image_names;
  f.objects("images", false, 64, [&](Fields& imf, size_t) {
    NodeImage im;
    im.name = imf.str("name", kNodeImageRule);
    if (!im.name.empty() && !image_names.insert(im.name).second)
      imf.error("name", Message("node.image.duplicate").arg("image", im.name));
    im.cve_patched_at = imf.time("cve_patched_at");
    n.images.push_back(std::move(im));
  });

  n.state = f.enumeration("state", kNodeStates, std::optional(NodeState::kAvailable));
  n.state_reason = f.opt_str("state_reason", {.max_len = 500});
  ignore_server_keys(f);
  f.ignore({"supplier_id"});  // server-resolved from `supplier`
  f.finish();
  if (!errs.empty()) return errs.to_error();
  std::sort(n.gpus.begin(), n.gpus.end(), [](const NodeGpu& a, const NodeGpu& b) { return a.index < b.index; });
  return n;
}

json to_json(const Node& n) {
  json gpus = json::array();
  for (const NodeGpu& g : n.gpus) {
    json j = {{"index", g.index}, {"numa_node", g.numa_node}, {"pcie_gen", g.pcie_gen}};
    put_opt(j, "uuid", g.uuid);
    put_opt(j, "nvlink_domain", g.nvlink_domain);
    gpus.push_back(std::move(j));
  }
  json nics = json::array();
  for (const Nic& nic : n.nics) {
    json one = {{"name", nic.name}, {"rdma", enum_name(kRdmaTypes, nic.rdma)}, {"gbps", nic.gbps}};
    if (!nic.fabric.empty()) one["fabric"] = nic.fabric;
    nics.push_back(std::move(one));
  }
  json software = {{"driver", n.software.driver}, {"cuda", n.software.cuda}};
  put_opt(software, "cudnn", n.software.cudnn);
  put_opt(software, "nccl", n.software.nccl);
  json images = json::array();
  for (const NodeImage& im : n.images)
    images.push_back({{"name", im.name}, {"cve_patched_at", format_rfc3339(im.cve_patched_at)}});
  json j = {{"name", n.name},
            {"supplier", n.supplier},
            {"site", n.site},
            {"region", n.region},
            {"gpu_model", n.gpu_model},
            {"gpus", std::move(gpus)},
            {"cpu", {{"model", n.cpu.model}, {"cores", n.cpu.cores}, {"sockets", n.cpu.sockets}}},
            {"memory_gib", n.memory_gib},
            {"numa_nodes", n.numa_nodes},
            {"nics", std::move(nics)},
            {"software", std::move(software)},
            {"images", std::move(images)},
            {"state", enum_name(kNodeStates, n.state)}};
  put_opt(j, "state_reason", n.state_reason);
  if (!n.supplier_id.empty()) j["supplier_id"] = n.supplier_id;
  return j;
}

IndexCols index_of(const Node& n) {
  IndexCols c;
  c.name = n.name;
  c.supplier_id = n.supplier_id;
  c.region = n.region;
  c.gpu_model = n.gpu_model;
  c.state = enum_name(kNodeStates, n.state);
  return c;
}

}  // namespace gpurent
