// How the CLI shows each resource kind in table format: the columns of `list` and the
// `get` view. The get view puts identity first and timestamps last, and for nodes and offers
// renders the parts buyers compare (GPU topology, NICs, prices, fee rules, contract terms) as
// tables and sentences; any field a view does not know is still printed, so nothing the server
// returns is hidden. Stateless; thread-safe.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/output.h"
#include "core/clock.h"

namespace gpurent {

using json = nlohmann::json;

struct ViewColumn {
  std::string header;
  Align align = Align::kLeft;
  std::function<std::string(const json& item, TimeMs now)> cell;
};

// A `list` filter: the query parameter ("gpu_model" -> --gpu-model), the flag's one description,
// and the values it accepts (empty: any; others are refused before anything is sent, exit 2).
struct ListFilter {
  std::string param;
  std::string help;
  std::vector<std::string> values;
};

struct ResourceView {
  std::string kind;      // URL segment: "nodes", "gpu-models"
  std::string singular;  // "node"
  std::string help;      // one line for --help
  std::vector<ViewColumn> columns;
  std::vector<ListFilter> filters;   // list query parameters the server accepts
  bool creatable = true;             // create (jobs: submit); false for the read-only catalog
  bool updatable = true;             // update (jobs are immutable once submitted)
  bool deletable = true;             // delete (jobs are kept for billing and audit)
  std::function<void(std::ostream&, const json&, TimeMs now)> detail;  // null: the generic view
};

// Every kind the CLI lists generically, in help order.
const std::vector<ResourceView>& resource_views();
// The view of `kind`; the generic fallback (NAME, ID, AGE) for an unknown kind.
const ResourceView& view_of(std::string_view kind);

void print_list(std::ostream& out, const ResourceView& view, const std::vector<json>& items, TimeMs now);
void print_detail(std::ostream& out, const ResourceView& view, const json& doc, TimeMs now);

// The generic get view: name, id, display_name, then the keys in `first`, then the rest; "x" and
// "x_id" merged as "x: name (id)"; created_at, updated_at and version last.
void print_generic_detail(std::ostream& out, const json& doc, const std::vector<std::string>& first = {});

// Node, offer and job views (detail_views.cc).
void print_node_detail(std::ostream& out, const json& node, TimeMs now);
void print_job_detail(std::ostream& out, const json& job, TimeMs now);
void print_offer_detail(std::ostream& out, const json& offer, TimeMs now);
// Cells shared by the node table and view: "1x8" (one NVLink domain of 8 GPUs), "pcie" for none;
// "infiniband 8x400G"; GPU index lists "0-3,6".
std::string nvlink_summary(const json& gpus);
std::string rdma_summary(const json& nics);
std::string index_ranges(const std::vector<int64_t>& sorted);
// Offer fee cells: "<5%/10m -> stop"; "0.09/GB, 100 GB free" or "free" (absent or zero).
std::string idle_rule_summary(const json& idle);
std::string volume_fee_summary(const json& fee);

// "45s", "12m", "3h", "5d" since an RFC 3339 instant; "" when unparsable.
std::string format_age(const json& rfc3339, TimeMs now);
// Seconds as "1s", "90s", "1m", "1h", "1d" (whole units only).
std::string format_seconds(int64_t s);

}  // namespace gpurent
