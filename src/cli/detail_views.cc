// The `get` views of nodes and offers: the fields buyers compare, rendered as tables and sentences.
#include <algorithm>
#include <map>

#include "cli/views.h"
#include "core/money.h"

namespace gpurent {

namespace {

std::string detail_text(const json& doc, std::string_view path) { return cell_text(at_path(doc, path)); }

std::optional<int64_t> integer(const json& doc, std::string_view path) {
  const json& v = at_path(doc, path);
  if (v.is_number_integer()) return v.get<int64_t>();
  return std::nullopt;
}

std::string yes_no(const json& v) {
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  return cell_text(v);
}

// Keys of `obj` not in `known`, as "key: value" entries (so new server fields still show).
void append_unknown(const json& obj, std::initializer_list<const char*> known, KvList& list) {
  if (!obj.is_object()) return;
  for (auto it = obj.begin(); it != obj.end(); ++it)
    if (std::none_of(known.begin(), known.end(), [&](const char* k) { return it.key() == k; }))
      list.emplace_back(it.key(), it.value());
}

void section(std::ostream& out, const std::string& title) { out << '\n' << title << '\n'; }

}  // namespace

// ---- summaries ----

std::string index_ranges(const std::vector<int64_t>& v) {
  std::string out;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(v[i]);
    if (j > i) out += "-" + std::to_string(v[j]);
    i = j + 1;
  }
  return out;
}

std::string nvlink_summary(const json& gpus) {
  if (!gpus.is_array()) return "";
  std::map<std::string, int64_t> domains;
  int64_t pcie = 0;
  for (const auto& g : gpus) {
    const json& d = at_path(g, "nvlink_domain");
    if (d.is_string())
      ++domains[d.get<std::string>()];
    else
      ++pcie;
  }
  std::string out;
  if (!domains.empty()) {
    std::vector<int64_t> sizes;
    for (const auto& [_, n] : domains) sizes.push_back(n);
    std::sort(sizes.rbegin(), sizes.rend());
    if (sizes.front() == sizes.back()) {
      out = std::to_string(sizes.size()) + "x" + std::to_string(sizes.front());
    } else {
      for (int64_t n : sizes) out += (out.empty() ? "" : "+") + std::to_string(n);
    }
  }
  if (pcie > 0) out += out.empty() ? "pcie" : " +" + std::to_string(pcie) + " pcie";
  return out;
}

std::string rdma_summary(const json& nics) {
  if (!nics.is_array()) return "";
  std::map<std::pair<std::string, int64_t>, int64_t> groups;  // (rdma, gbps) -> count
  for (const auto& n : nics) {
    std::string rdma = detail_text(n, "rdma");
    if (rdma.empty() || rdma == "none") continue;
    ++groups[{rdma, integer(n, "gbps").value_or(0)}];
  }
  if (groups.empty()) return "none";
  std::string out;
  for (const auto& [key, count] : groups) {
    if (!out.empty()) out += ", ";
    out += key.first + " " + std::to_string(count) + "x" + std::to_string(key.second) + "G";
  }
  return out;
}

std::string idle_rule_summary(const json& idle) {
  if (!idle.is_object()) return "none (charged)";
  std::string action = detail_text(idle, "action");
  if (action == "discount") action = detail_text(idle, "discount_pct") + "% off";
  return "<" + detail_text(idle, "utilization_below_pct") + "%/" + detail_text(idle, "window_minutes") + "m -> " + action;
}

// A stated fee of zero is as free as an absent one.
static bool zero_amount(const json& v) {
  if (!v.is_string()) return false;
  auto m = Money::parse(v.get_ref<const std::string&>(), Currency::kUSD);
  return m && m->micros() == 0;
}

std::string volume_fee_summary(const json& fee) {
  if (!fee.is_object() || zero_amount(at_path(fee, "per_gb"))) return "free";
  std::string out = detail_text(fee, "per_gb") + "/GB";
  if (integer(fee, "free_gb").value_or(0) > 0) out += ", " + detail_text(fee, "free_gb") + " GB free";
  return out;
}

// ---- nodes ----

void print_node_detail(std::ostream& out, const json& node, TimeMs) {
  json head = node;
  for (const char* k : {"gpus", "nics", "images", "cpu", "software", "memory_gib", "numa_nodes"}) head.erase(k);
  if (const json& cpu = at_path(node, "cpu"); cpu.is_object()) {
    std::string s = detail_text(cpu, "sockets") + " x " + detail_text(cpu, "model") + ", " + detail_text(cpu, "cores") + " cores";
    KvList extra;
    append_unknown(cpu, {"sockets", "model", "cores"}, extra);
    for (const auto& [k, v] : extra) s += ", " + k + " " + cell_text(v);
    head["cpu"] = s;
  }
  if (node.contains("memory_gib") || node.contains("numa_nodes"))
    head["memory"] = detail_text(node, "memory_gib") + " GiB, " + detail_text(node, "numa_nodes") + " NUMA nodes";
  if (const json& sw = at_path(node, "software"); sw.is_object()) {
    std::string s = "driver " + detail_text(sw, "driver") + ", CUDA " + detail_text(sw, "cuda");
    if (sw.contains("cudnn")) s += ", cuDNN " + detail_text(sw, "cudnn");
    if (sw.contains("nccl")) s += ", NCCL " + detail_text(sw, "nccl");
    KvList extra;
    append_unknown(sw, {"driver", "cuda", "cudnn", "nccl"}, extra);
    for (const auto& [k, v] : extra) s += ", " + k + " " + cell_text(v);
    head["software"] = s;
  }
  print_generic_detail(
      out, head, {"supplier", "site", "region", "gpu_model", "state", "state_reason", "cpu", "memory", "software"});

  const json& gpus = at_path(node, "gpus");
  if (gpus.is_array()) {
    section(out, "GPU topology (" + std::to_string(gpus.size()) + " GPUs, NVLink " + nvlink_summary(gpus) + "):");
    Table t({{"GPU", Align::kRight}, {"NVLINK_DOMAIN"}, {"NUMA", Align::kRight}, {"PCIE", Align::kRight}, {"UUID"}});
    std::map<std::string, std::vector<int64_t>> by_domain, by_numa;
    for (const auto& g : gpus) {
      std::string domain = detail_text(g, "nvlink_domain");
      t.add_row({detail_text(g, "index"), domain.empty() ? "(pcie only)" : domain, detail_text(g, "numa_node"),
                 g.contains("pcie_gen") ? "gen" + detail_text(g, "pcie_gen") : "", detail_text(g, "uuid")});
      if (auto i = integer(g, "index")) {
        by_domain[domain.empty() ? "(pcie only)" : domain].push_back(*i);
        by_numa[detail_text(g, "numa_node")].push_back(*i);
      }
    }
    t.print(out, 2);
    KvList groups;
    std::string domains, numa;
    for (auto& [d, idx] : by_domain) {
      std::sort(idx.begin(), idx.end());
      domains += (domains.empty() ? "" : "; ") + d + ": GPUs " + index_ranges(idx);
    }
    for (auto& [n, idx] : by_numa) {
      std::sort(idx.begin(), idx.end());
      numa += (numa.empty() ? "" : "; ") + std::string("node ") + n + ": GPUs " + index_ranges(idx);
    }
    if (!domains.empty()) groups.emplace_back("NVLink domains", domains);
    if (!numa.empty()) groups.emplace_back("NUMA affinity", numa);
    print_kv(out, groups, 2);
  }

  const json& nics = at_path(node, "nics");
  if (nics.is_array()) {
    section(out, "Network (" + std::to_string(nics.size()) + " NICs, RDMA " + rdma_summary(nics) + "):");
    Table t({{"NAME"}, {"RDMA"}, {"GBPS", Align::kRight}});
    for (const auto& n : nics) t.add_row({detail_text(n, "name"), detail_text(n, "rdma"), detail_text(n, "gbps")});
    if (t.size() > 0) t.print(out, 2);
  }

  const json& images = at_path(node, "images");
  if (images.is_array() && !images.empty()) {
    section(out, "Images:");
    Table t({{"IMAGE"}, {"CVE_PATCHED_AT"}});
    for (const auto& im : images) t.add_row({detail_text(im, "name"), detail_text(im, "cve_patched_at")});
    t.print(out, 2);
  }
}

// ---- jobs ----

void print_job_detail(std::ostream& out, const json& job, TimeMs) {
  json shown = job;
  json placement = json::array();
  if (shown.contains("status") && shown["status"].is_object() && shown["status"].contains("placement")) {
    placement = shown["status"]["placement"];
    shown["status"].erase("placement");
  }
  print_generic_detail(
      out, shown,
      {"project", "kind", "status", "workers", "gpus_per_worker", "gpu_milli", "replicas", "priority_class", "billing",
       "constraints", "resources", "image", "command", "env", "expected_duration_seconds", "labels"});
  if (!placement.is_array() || placement.empty()) return;
  // Where each worker runs: the scheduler's placement.
  section(out, "Placement (" + std::to_string(placement.size()) + (placement.size() == 1 ? " worker):" : " workers):"));
  Table t({{"REPLICA", Align::kRight}, {"WORKER", Align::kRight}, {"NODE"}, {"GPUS"}, {"SHARE"}, {"NVLINK_DOMAIN"}});
  for (const auto& w : placement) {
    std::vector<int64_t> gpus;
    if (w.contains("gpus") && w["gpus"].is_array())
      for (const auto& g : w["gpus"])
        if (g.is_number_integer()) gpus.push_back(g.get<int64_t>());
    const std::string share = w.contains("gpu_milli") ? detail_text(w, "gpu_milli") + "m" : "";
    t.add_row({detail_text(w, "replica"), detail_text(w, "worker"), detail_text(w, "node"), index_ranges(gpus), share,
               detail_text(w, "nvlink_domain")});
  }
  t.print(out, 2);
}

// ---- offers ----

namespace {

// "-12.5%": how far `price` is below (negative) or above `reference`; "" when either is unparsable.
std::string relative_to(const std::string& price, const std::string& reference) {
  auto p = Money::parse(price, Currency::kUSD);
  auto r = Money::parse(reference, Currency::kUSD);
  if (!p || !r || r->micros() <= 0) return "";
  __int128 diff = static_cast<__int128>(p->micros() - r->micros()) * 1000;
  bool overflow = false;
  int64_t tenths = div_round_half_even(diff, r->micros(), &overflow);  // tenths of a percent
  if (overflow) return "";
  if (tenths == 0) return "0%";
  std::string sign = tenths < 0 ? "-" : "+";
  int64_t a = tenths < 0 ? -tenths : tenths;
  return sign + std::to_string(a / 10) + (a % 10 ? "." + std::to_string(a % 10) : "") + "%";
}

const char* billing_start_text(const std::string& s) {
  if (s == "api_call") return "when the API call is accepted";
  if (s == "running") return "when the instance is running (container/process started)";
  if (s == "ready") return "when the instance is ready (its health check passed or it reported ready; a job that reports neither is ready when it runs)";
  return nullptr;
}

std::string idle_text(const json& idle) {
  if (!idle.is_object()) return "no idle rule: idle GPUs are charged like busy ones";
  std::string s =
      "below " + detail_text(idle, "utilization_below_pct") + "% utilization for " + detail_text(idle, "window_minutes") + " min: ";
  std::string action = detail_text(idle, "action");
  if (action == "charge")
    s += "charged in full";
  else if (action == "discount")
    s += "charged at " + detail_text(idle, "discount_pct") + "% off";
  else if (action == "stop")
    s += "billing stops (the job keeps running)";
  else
    s += action;
  return s;
}

std::string storage_text(const json& fee, const std::string& currency, const std::string& what) {
  if (!fee.is_object() || zero_amount(at_path(fee, "per_gb_month"))) return "not charged";
  std::string s = detail_text(fee, "per_gb_month") + " " + currency + "/GB-month of " + what + " kept";
  if (integer(fee, "free_gb").value_or(0) > 0) s += ", first " + detail_text(fee, "free_gb") + " GB free";
  return s;
}

std::string volume_text(const json& fee, const std::string& currency) {
  if (!fee.is_object() || zero_amount(at_path(fee, "per_gb"))) return "not charged";
  std::string s = detail_text(fee, "per_gb") + " " + currency + "/GB";
  if (integer(fee, "free_gb").value_or(0) > 0) s += ", first " + detail_text(fee, "free_gb") + " GB per month free";
  return s;
}

}  // namespace

void print_offer_detail(std::ostream& out, const json& offer, TimeMs) {
  const std::string currency = detail_text(offer, "currency");
  json head = offer;
  for (const char* k :
       {"prices", "served_models", "fees", "contract_template", "node_selector", "min_increment_seconds"})
    head.erase(k);
  if (const json& sel = at_path(offer, "node_selector"); !sel.is_null()) {
    std::string s;
    if (sel.contains("site")) s = "site " + detail_text(sel, "site");
    if (sel.contains("node_names")) s += (s.empty() ? "" : ", ") + std::string("nodes ") + detail_text(sel, "node_names");
    head["nodes"] = s.empty() ? "all of the supplier's nodes of this model in the region" : s;
  }
  if (auto inc = integer(offer, "min_increment_seconds"))
    head["billing_increment"] = format_seconds(*inc) + " (usage is billed in whole increments)";
  print_generic_detail(out, head, {"supplier", "region", "gpu_model", "currency", "nodes", "billing_increment"});

  const json& prices = at_path(offer, "prices");
  if (prices.is_object()) {
    section(out, "Prices (" + currency + " per GPU-hour):");
    Table t({{"MODE"}, {"PRICE", Align::kRight}, {"VS_ON_DEMAND", Align::kRight}});
    const std::string od = detail_text(prices, "on_demand");
    std::vector<std::string> order = {"on_demand", "reserved_1m", "reserved_12m", "reserved_36m", "spot"};
    for (auto it = prices.begin(); it != prices.end(); ++it)
      if (std::find(order.begin(), order.end(), it.key()) == order.end()) order.push_back(it.key());
    for (const auto& mode : order) {
      if (!prices.contains(mode)) continue;
      std::string p = detail_text(prices, mode);
      t.add_row({mode, p, mode == "on_demand" ? "" : relative_to(p, od)});
    }
    t.print(out, 2);
  }

  const json& fees = at_path(offer, "fees");
  if (fees.is_object()) {
    section(out, "Fee rules:");
    KvList list;
    std::string start = detail_text(fees, "billing_starts");
    const char* start_text = billing_start_text(start);
    list.emplace_back("billing starts", start_text ? start + ": " + start_text : start);
    list.emplace_back("idle GPU", idle_text(at_path(fees, "idle")));
    list.emplace_back("storage I/O", volume_text(at_path(fees, "storage_io"), currency));
    list.emplace_back("egress", volume_text(at_path(fees, "egress"), currency));
    list.emplace_back("image storage", storage_text(at_path(fees, "image_storage"), currency, "the tenant's own images"));
    list.emplace_back("artifact store", storage_text(at_path(fees, "artifact_storage"), currency, "the projects' artifacts"));
    list.emplace_back("volume store", storage_text(at_path(fees, "volume_storage"), currency, "the tenant's volumes (provisioned size)"));
    append_unknown(fees, {"billing_starts", "idle", "storage_io", "egress", "image_storage", "artifact_storage", "volume_storage"}, list);
    print_kv(out, list, 2);
  }

  const json& served = at_path(offer, "served_models");
  if (served.is_array() && !served.empty()) {
    section(out, "Served models (" + currency + "):");
    Table t({{"MODEL"},
             {"PER_1M_INPUT_TOKENS", Align::kRight},
             {"PER_1M_OUTPUT_TOKENS", Align::kRight},
             {"PER_QPS_MONTH", Align::kRight},
             {"PER_1M_REQUESTS", Align::kRight}});
    for (const auto& m : served)
      t.add_row({detail_text(m, "model"), detail_text(m, "per_million_input_tokens"), detail_text(m, "per_million_output_tokens"),
                 detail_text(m, "per_qps_month"), detail_text(m, "per_million_requests")});
    t.print(out, 2);
  }

  const json& c = at_path(offer, "contract_template");
  if (c.is_object()) {
    section(out, "Contract template:");
    KvList list;
    std::string lock = yes_no(at_path(c, "model_lock"));
    if (lock == "yes") lock += " (no substitution of " + detail_text(offer, "gpu_model") + ")";
    list.emplace_back("model lock", lock);
    if (c.contains("min_fp16_tflops"))
      list.emplace_back("min FP16 per card", detail_text(c, "min_fp16_tflops") + " TFLOPS (shortfall refunded in proportion)");
    if (c.contains("min_nccl_busbw_gbps"))
      list.emplace_back("min NCCL bus bandwidth",
                        detail_text(c, "min_nccl_busbw_gbps") + " GB/s (hours below it compensated)");
    if (c.contains("outage_compensation_pct"))
      list.emplace_back("outage compensation", detail_text(c, "outage_compensation_pct") + "% of the interrupted time");
    if (c.contains("exit_notice_days")) {
      std::string exit = detail_text(c, "exit_notice_days") + " days' notice";
      const json& refund = at_path(c, "exit_refund_prepaid");
      if (refund.is_boolean())
        exit += refund.get<bool>() ? ", prepaid unused fees refunded" : ", prepaid fees not refunded";
      list.emplace_back("exit", exit);
    }
    list.emplace_back("data sovereignty", c.contains("data_sovereignty") ? detail_text(c, "data_sovereignty") : "not stated");
    if (c.contains("audit_rights")) list.emplace_back("audit rights", yes_no(at_path(c, "audit_rights")));
    if (const json& p = at_path(c, "penalty"); p.is_object())
      list.emplace_back("penalty", detail_text(p, "fee_pct_per_step") + "% of " +
                                       (detail_text(p, "base") == "month_fee" ? "the month's fee"
                                                                        : "the month's fee of the cards measured short") +
                                       " per " + detail_text(p, "step_pct_below_promise") + "% below the promise");
    append_unknown(c,
                   {"model_lock", "min_fp16_tflops", "min_nccl_busbw_gbps", "outage_compensation_pct",
                    "exit_notice_days", "exit_refund_prepaid", "data_sovereignty", "audit_rights", "penalty"},
                   list);
    print_kv(out, list, 2);
  }
}

}  // namespace gpurent
