#include "cli/views.h"

#include <algorithm>
#include <set>

#include "catalog/gpu_model.h"
#include "core/enum_names.h"
#include "core/money.h"
#include "model/alert.h"
#include "model/enums_supply.h"
#include "model/job_run.h"
#include "model/job_state.h"
#include "model/measurement.h"

namespace gpurent {

namespace {

std::string view_text(const json& doc, std::string_view path) { return cell_text(at_path(doc, path)); }

ViewColumn col(std::string header, std::string path, Align align = Align::kLeft) {
  return {std::move(header), align, [path = std::move(path)](const json& d, TimeMs) { return view_text(d, path); }};
}

ViewColumn age_col() {
  return {"AGE", Align::kLeft, [](const json& d, TimeMs now) { return format_age(at_path(d, "created_at"), now); }};
}

std::string count_of(const json& v) { return v.is_array() ? std::to_string(v.size()) : ""; }

std::string quota_gpus(const json& quota) {
  const json& m = at_path(quota, "gpus_per_model");
  if (!m.is_object()) return "";
  if (m.empty()) return "none";
  std::string out;
  for (auto it = m.begin(); it != m.end(); ++it) {
    if (!out.empty()) out += ", ";
    out += it.key() + "=" + cell_text(it.value());
  }
  return out;
}

std::string budget(const json& quota) {
  std::string b = view_text(quota, "monthly_budget");
  if (b.empty()) return "";
  std::string action = view_text(quota, "budget_action");
  return action.empty() ? b : b + " (" + action + ")";
}

std::string job_shape(const json& j) {
  std::string workers = view_text(j, "workers");
  if (workers.empty()) workers = "1";
  const json& milli = at_path(j, "gpu_milli");
  std::string gpus =
      milli.is_number_integer() ? std::to_string(milli.get<int64_t>()) + "m" : view_text(j, "gpus_per_worker");
  if (gpus.empty()) gpus = "0";
  return workers + "x" + gpus;
}

std::string tflops(const json& m, const char* key) { return view_text(m, key); }

// An amount in `unit` at its currency's precision (half to even to the cent) when the unit is a
// currency; anything else as it is.
std::string at_currency_precision(const std::string& amount, const std::string& unit) {
  auto c = parse_currency(unit);
  if (!c) return amount;
  auto m = Money::parse(amount, *c);
  return m ? m->round_to_cents().amount_string() : amount;
}

// One description per filter flag, the same wherever the flag appears.
ListFilter filter(const std::string& param) {
  if (param == "tenant") return {param, "only those of this tenant (id or name)", {}};
  if (param == "supplier") return {param, "only those of this supplier (id or name)", {}};
  if (param == "project") return {param, "only those of this project (id or name)", {}};
  if (param == "name") return {param, "only the one with exactly this name", {}};
  if (param == "region") return {param, "only those in this region (exact, e.g. us-east-1)", {}};
  if (param == "offer") return {param, "only those of this offer (its id)", {}};
  if (param == "gpu_model") return {param, "only those with this GPU model (see `gpurent gpu-models list`)", {}};
  return {param, "only those whose " + param + " is this", {}};
}

ListFilter one_of(const std::string& param, std::vector<std::string> values) {
  std::string list;
  for (const auto& v : values) list += (list.empty() ? "" : ", ") + v;
  return {param, "only those whose " + param + " is one of: " + list, std::move(values)};
}

std::vector<ListFilter> filters(std::initializer_list<const char*> params) {
  std::vector<ListFilter> out;
  for (const char* p : params) out.push_back(filter(p));
  return out;
}

std::vector<ListFilter> filters(std::initializer_list<const char*> params, ListFilter last) {
  auto out = filters(params);
  out.push_back(std::move(last));
  return out;
}

std::vector<std::string> job_states() {
  std::vector<std::string> out;
  for (JobState s : kAllJobStates) out.emplace_back(job_state_name(s));
  return out;
}

std::vector<ResourceView> build_views() {
  std::vector<ResourceView> v;

  v.push_back({"suppliers",
               "supplier",
               "companies that rent out GPU capacity",
               {col("NAME", "name"),
                col("DISPLAY_NAME", "display_name"),
                col("REGION", "region"),
                col("COUNTRY", "country"),
                {"SITES", Align::kRight, [](const json& d, TimeMs) { return count_of(at_path(d, "sites")); }},
                col("CERTIFICATIONS", "certifications")},
               filters({"name", "region"}),
               true,
               true,
               true,
               nullptr});

  v.push_back(
      {"nodes",
       "node",
       "suppliers' servers and their hardware truth",
       {col("NAME", "name"),
        col("SUPPLIER", "supplier"),
        col("REGION", "region"),
        col("GPU_MODEL", "gpu_model"),
        {"GPUS", Align::kRight, [](const json& d, TimeMs) { return count_of(at_path(d, "gpus")); }},
        {"NVLINK_DOMAINS", Align::kLeft, [](const json& d, TimeMs) { return nvlink_summary(at_path(d, "gpus")); }},
        {"RDMA", Align::kLeft, [](const json& d, TimeMs) { return rdma_summary(at_path(d, "nics")); }},
        col("STATE", "state")},
       filters({"supplier", "region", "gpu_model", "name"}, one_of("state", enum_names(kNodeStates))),
       true,
       true,
       true,
       print_node_detail});

  v.push_back(
      {"offers",
       "offer",
       "suppliers' price sheets, fee rules and contract templates",
       {col("NAME", "name"),
        col("SUPPLIER", "supplier"),
        col("REGION", "region"),
        col("GPU_MODEL", "gpu_model"),
        col("CURRENCY", "currency"),
        col("ON_DEMAND", "prices/on_demand", Align::kRight),
        col("SPOT", "prices/spot", Align::kRight),
        {"MIN_INCR", Align::kRight,
         [](const json& d, TimeMs) {
           const json& s = at_path(d, "min_increment_seconds");
           return s.is_number_integer() ? format_seconds(s.get<int64_t>()) : std::string();
         }},
        col("BILLING_STARTS", "fees/billing_starts"),
        {"IDLE_RULE", Align::kLeft, [](const json& d, TimeMs) { return idle_rule_summary(at_path(d, "fees/idle")); }},
        {"EGRESS", Align::kLeft, [](const json& d, TimeMs) { return volume_fee_summary(at_path(d, "fees/egress")); }}},
       filters({"supplier", "region", "gpu_model", "name"}),
       true,
       true,
       true,
       print_offer_detail});

  v.push_back({"tenants",
               "tenant",
               "customer organisations",
               {col("NAME", "name"), col("DISPLAY_NAME", "display_name"), col("CURRENCY", "currency"),
                col("CONTACT_EMAIL", "contact_email"), age_col()},
               filters({"name"}),
               true,
               true,
               true,
               nullptr});

  v.push_back({"projects",
               "project",
               "a tenant's projects and their quotas",
               {col("NAME", "name"),
                col("TENANT", "tenant"),
                col("DISPLAY_NAME", "display_name"),
                {"GPU_QUOTA", Align::kLeft, [](const json& d, TimeMs) { return quota_gpus(at_path(d, "quota")); }},
                col("MAX_GPUS_PER_JOB", "quota/max_gpus_per_job", Align::kRight),
                col("MAX_JOBS", "quota/max_concurrent_jobs", Align::kRight),
                {"MONTHLY_BUDGET", Align::kLeft, [](const json& d, TimeMs) { return budget(at_path(d, "quota")); }}},
               filters({"tenant", "name"}),
               true,
               true,
               true,
               nullptr});

  v.push_back({"users",
               "user",
               "people and robots that call the API",
               {col("NAME", "name"), col("DISPLAY_NAME", "display_name"), col("EMAIL", "email"), col("ROLE", "role"),
                col("TENANT", "tenant"), col("SUPPLIER", "supplier"), age_col()},
               filters({"tenant", "supplier", "name"}),
               true,
               true,
               true,
               nullptr});

  v.push_back({"jobs",
               "job",
               "training, inference, debug and batch jobs",
               {col("NAME", "name"),
                col("PROJECT", "project"),
                col("KIND", "kind"),
                {"WORKERSxGPUS", Align::kRight, [](const json& d, TimeMs) { return job_shape(d); }},
                col("PRIORITY", "priority_class"),
                col("BILLING", "billing/mode"),
                col("STATE", "status/state"),
                age_col(),
                col("REASON", "status/reason")},
               filters({"tenant", "project", "gpu_model", "name"}, one_of("state", job_states())),
               true,
               false,
               false,
               print_job_detail});

  v.push_back({"reservations",
               "reservation",
               "nodes held for a tenant over a time window (reserved commitments)",
               {col("NAME", "name"),
                col("TENANT", "tenant"),
                {"NODES", Align::kRight,
                 [](const json& d, TimeMs) {
                   const json& n = at_path(d, "nodes");
                   return n.is_array() ? std::to_string(n.size()) : std::string();
                 }},
                col("STARTS_AT", "starts_at"),
                col("ENDS_AT", "ends_at"),
                col("NOTE", "note")},
               filters({"tenant", "name"}),
               true,
               true,
               true,
               nullptr});

  v.push_back({"volumes",
               "volume",
               "a tenant's persistent volumes that jobs mount, billed per GB-month at their size",
               {col("NAME", "name"),
                col("TENANT", "tenant_id"),
                col("PROJECT", "project"),
                {"SIZE_GB", Align::kRight, [](const json& d, TimeMs) { return view_text(d, "size_gb"); }},
                age_col(),
                col("DESCRIPTION", "description")},
               filters({"tenant", "project", "name"}),
               true,
               true,
               true,
               nullptr});

  v.push_back({"instances",
               "instance",
               "interactive instances: started and stopped at will, each start a job of the project",
               {col("NAME", "name"),
                col("PROJECT", "project"),
                {"GPUS", Align::kRight, [](const json& d, TimeMs) { return view_text(d, "gpus"); }},
                col("GPU_MODEL", "gpu_model"),
                col("VOLUME", "volume/name"),
                col("STATE", "state"),
                col("JOB", "current_job/name"),
                age_col()},
               filters({"tenant", "project", "name"}),
               true,
               false,
               true,
               nullptr});

  v.push_back({"contracts",
               "contract",
               "what a tenant signed with a supplier: offers, clauses, reserved commitments",
               {col("NAME", "name"),
                col("TENANT", "tenant"),
                col("SUPPLIER", "supplier"),
                col("CURRENCY", "currency"),
                {"OFFERS", Align::kRight,
                 [](const json& d, TimeMs) {
                   const json& n = at_path(d, "offers");
                   return n.is_array() ? std::to_string(n.size()) : std::string();
                 }},
                {"COMMITTED_GPUS", Align::kRight,
                 [](const json& d, TimeMs) {
                   int64_t g = 0;
                   for (const auto& c : at_path(d, "commitments")) g += c.value("gpus", int64_t{0});
                   return std::to_string(g);
                 }},
                col("STARTS_AT", "starts_at")},
               filters({"tenant", "supplier", "name"}),
               true,
               true,
               true,
               nullptr});

  v.push_back({"allocations",
               "allocation",
               "the allocation ledger: each run of a job on GPUs, the offer it is billed under",
               {col("ID", "id"),
                col("JOB", "job"),
                col("MODE", "billing_mode"),
                {"GPUS", Align::kRight,
                 [](const json& d, TimeMs) {
                   const int64_t m = d.value("gpu_milli", int64_t{0});
                   return m % 1000 == 0 ? std::to_string(m / 1000) : std::to_string(m) + "m";
                 }},
                col("RUNNING_AT", "running_at"),
                col("ENDED_AT", "ended_at"),
                col("STATE", "state"),
                col("END_REASON", "end_reason")},
               filters({"tenant", "project", "supplier"}, one_of("state", enum_names(kRunStateNames))),
               false,
               false,
               false,
               nullptr});

  v.push_back({"alerts",
               "alert",
               "the cost firewall's alerts: card daily cost, storage I/O share, egress freeze, budget hold",
               {col("ID", "id"),
                col("KIND", "kind"),
                col("SEVERITY", "severity"),
                col("PROJECT", "project"),
                col("SUBJECT", "subject"),
                {"MEASURED", Align::kRight,
                 [](const json& d, TimeMs) {
                   return at_currency_precision(view_text(d, "measured"), view_text(d, "unit")) + " / " +
                          at_currency_precision(view_text(d, "threshold"), view_text(d, "unit")) + " " + view_text(d, "unit");
                 }},
                col("STATE", "state"),
                col("MESSAGE", "message_en")},
               filters({"tenant", "project"}, one_of("state", enum_names(kAlertStateNames))),
               false,
               false,
               false,
               nullptr});

  v.push_back({"measurements",
               "measurement",
               "card FP16 benchmarks, node NCCL bandwidth and outages (SLA credits; append-only; tenants' disputes: accept|reject)",
               {col("ID", "id"),
                col("KIND", "kind"),
                col("NODE", "node"),
                col("GPU", "gpu", Align::kRight),
                {"VALUE", Align::kRight,
                 [](const json& d, TimeMs) {
                   if (d.contains("fp16_tflops")) return view_text(d, "fp16_tflops") + " TFLOPS";
                   if (d.contains("busbw_gbps")) return view_text(d, "busbw_gbps") + " GB/s";
                   return std::string();
                 }},
                {"WHEN", Align::kLeft,
                 [](const json& d, TimeMs) {
                   return d.contains("at") ? view_text(d, "at") : view_text(d, "from") + " .. " + view_text(d, "to");
                 }},
                col("METHOD", "method"),
                col("STATUS", "status"),
                col("CORRECTS", "corrects"),
                col("NOTE", "note")},
               filters({"supplier", "tenant"}, one_of("kind", enum_names(kMeasurementKindNames))),
               true,
               false,  // append-only: corrected by a new one naming it
               false,
               nullptr});

  v.push_back({"acceptance-runs",
               "acceptance run",
               "what gpurent-accept measured on a node, its figures derived from the tools' raw output (append-only; "
               "create -f with {job} or {report})",
               {col("ID", "id"),
                col("NODE", "node"),
                col("JOB", "job"),
                {"STAGES", Align::kLeft,
                 [](const json& d, TimeMs) {
                   std::string out;
                   if (d.contains("stages") && d["stages"].is_array())
                     for (const json& st : d["stages"])
                       out += (out.empty() ? "" : " ") + view_text(st, "stage") + ":" + view_text(st, "status");
                   return out;
                 }},
                {"SIMULATED", Align::kLeft,
                 [](const json& d, TimeMs) {
                   if (!d.value("simulated", false)) return std::string("no");
                   return std::string(d.value("simulated_counted", false) ? "counted" : "not counted");
                 }},
                col("VERDICT", "verdict"),
                {"MEASUREMENTS", Align::kRight,
                 [](const json& d, TimeMs) {
                   return d.contains("measurements") && d["measurements"].is_array() ? std::to_string(d["measurements"].size())
                                                                                      : std::string();
                 }},
                col("STATUS", "status")},
               filters({"supplier", "tenant"}, one_of("status", enum_names(kMeasurementStatusNames))),
               true,
               false,  // append-only, like the measurements it makes
               false,
               nullptr});

  v.push_back({"poc-runs",
               "POC run",
               "a tenant's 48-hour POC of one supplier, judged on every read (create -f; results: POST "
               "/api/v1/poc-runs/{id}/results)",
               {col("NAME", "name"),
                col("SUPPLIER", "supplier"),
                col("CONTRACT", "contract"),
                col("START", "start"),
                {"VERDICT", Align::kLeft,
                 [](const json& d, TimeMs) {
                   return d.contains("plan") && d["plan"].is_object() ? view_text(d["plan"], "verdict") : std::string("?");
                 }},
                {"RESULTS", Align::kRight,
                 [](const json& d, TimeMs) {
                   return d.contains("results") && d["results"].is_array() ? std::to_string(d["results"].size()) : std::string();
                 }},
                col("ID", "id")},
               filters({"tenant", "supplier", "name"}),
               true,
               false,  // the plan is fixed; results are appended
               true,
               nullptr});

  v.push_back(
      {"market-orders",
       "market order",
       "orders in the GPU-hour market, matched at once (place: `market buy|sell`; cancel: `market cancel`)",
       {col("ID", "id"),
        col("SIDE", "side"),
        col("GPU MODEL", "gpu_model"),
        col("REGION", "region"),
        col("FROM", "starts_at"),
        col("TO", "ends_at"),
        {"PRICE", Align::kRight,
         [](const json& d, TimeMs) { return view_text(d, "price_per_gpu_hour") + " " + view_text(d, "currency"); }},
        {"FILLED", Align::kRight,
         [](const json& d, TimeMs) {
           return d.contains("filled_gpus") && d.contains("gpus") ? d["filled_gpus"].dump() + "/" + d["gpus"].dump()
                                                                  : std::string();
         }},
        col("STATE", "state")},
       filters({"tenant", "supplier", "gpu_model", "region"},
               one_of("state", {"open", "filled", "cancelled", "replaced", "expired"})),
       true,
       false,  // never edited: cancel
       false,
       nullptr});

  v.push_back({"market-trades",
               "market trade",
               "the market's trades, read by their two parties (made only by matching)",
               {col("ID", "id"), col("GPU MODEL", "gpu_model"), col("REGION", "region"), col("FROM", "starts_at"),
                col("TO", "ends_at"),
                {"PRICE", Align::kRight, [](const json& d, TimeMs) { return view_text(d, "price_per_gpu_hour") + " " + view_text(d, "currency"); }},
                {"GPUS", Align::kRight, [](const json& d, TimeMs) { return d.contains("gpus") ? d["gpus"].dump() : std::string(); }},
                {"AMOUNT", Align::kRight, [](const json& d, TimeMs) { return view_text(d, "amount") + " " + view_text(d, "currency"); }},
                col("AT", "at")},
               filters({"tenant", "supplier", "gpu_model", "region"}),
               false,
               false,
               false,
               nullptr});

  v.push_back({"spot-prices",
               "spot price",
               "offers' spot market prices over time (appended, never changed)",
               {col("ID", "id"), col("OFFER", "offer_id"), col("FROM", "from"),
                {"PRICE", Align::kRight, [](const json& d, TimeMs) { return view_text(d, "price") + " " + view_text(d, "currency"); }}},
               filters({"offer", "supplier"}),
               true,
               false,
               false,
               nullptr});

  v.push_back({"issued-invoices",
               "issued invoice",
               "invoices frozen at month close: numbered, hashed, never changed (pay and void: `invoices pay|void`)",
               {col("NUMBER", "number"), col("MONTH", "month"), col("TENANT", "tenant"),
                {"TOTAL", Align::kRight, [](const json& d, TimeMs) { return view_text(d, "totals/total") + " " + view_text(d, "currency"); }},
                col("STATE", "state"), col("ISSUED", "issued_at")},
               filters({"tenant", "number"}, one_of("state", {"issued", "paid", "void"})),
               false,
               false,
               false,
               nullptr});

  v.push_back({"credit-notes",
               "credit note",
               "corrections of issued invoices (operators create; never changed)",
               {col("NUMBER", "number"), col("INVOICE", "invoice_number"),
                {"AMOUNT", Align::kRight, [](const json& d, TimeMs) { return view_text(d, "amount") + " " + view_text(d, "currency"); }},
                col("REASON", "reason"), col("ISSUED", "issued_at")},
               filters({"tenant", "invoice"}),
               true,
               false,
               false,
               nullptr});

  v.push_back({"top-ups",
               "top-up",
               "money prepaid tenants paid in (operators and the payment webhook record it; never changed)",
               {col("ID", "id"), col("TENANT", "tenant_id"),
                {"AMOUNT", Align::kRight, [](const json& d, TimeMs) { return view_text(d, "amount") + " " + view_text(d, "currency"); }},
                col("REFERENCE", "reference"), col("SOURCE", "source"), col("AT", "created_at")},
               filters({"tenant", "currency", "source"}),
               true,
               false,
               false,
               nullptr});

  v.push_back({"faults",
               "fault",
               "node failures that hit jobs, recorded by the scheduler",
               {col("AT", "at"), col("JOB", "job"), col("NODE", "node"), col("REASON", "reason")},
               filters({"tenant", "project", "supplier", "gpu_model", "region"}),
               false,
               false,
               false,
               nullptr});

  v.push_back({"gpu-models",
               "GPU model",
               "the GPU catalog (datasheet figures, read-only)",
               {col("ID", "id"),
                col("NAME", "name"),
                col("VENDOR", "vendor"),
                col("FORM", "form_factor"),
                {"MEMORY", Align::kLeft,
                 [](const json& d, TimeMs) {
                   std::string gib = view_text(d, "memory_gib");
                   return gib.empty() ? gib : gib + " GiB " + view_text(d, "memory_type");
                 }},
                col("MEM_BW_GBPS", "memory_bandwidth_gbps", Align::kRight),
                {"FP16_TFLOPS", Align::kRight, [](const json& d, TimeMs) { return tflops(d, "fp16_tflops"); }},
                {"BF16_TFLOPS", Align::kRight, [](const json& d, TimeMs) { return tflops(d, "bf16_tflops"); }},
                {"FP8_TFLOPS", Align::kRight, [](const json& d, TimeMs) { return tflops(d, "fp8_tflops"); }},
                col("NVLINK_GBPS", "nvlink_gbps", Align::kRight),
                col("TDP_W", "tdp_watts", Align::kRight)},
               {one_of("vendor", enum_names(kVendorNames)), one_of("form_factor", enum_names(kFormFactorNames))},
               false,
               false,
               false,
               nullptr});
  return v;
}

}  // namespace

const std::vector<ResourceView>& resource_views() {
  static const std::vector<ResourceView> views = build_views();
  return views;
}

const ResourceView& view_of(std::string_view kind) {
  for (const auto& v : resource_views())
    if (v.kind == kind) return v;
  static const ResourceView generic{"",   "object", "",     {col("NAME", "name"), col("ID", "id"), age_col()}, {}, true,
                                    true, true,     nullptr};
  return generic;
}

void print_list(std::ostream& out, const ResourceView& view, const std::vector<json>& items, TimeMs now) {
  std::vector<Table::Col> cols;
  for (const auto& c : view.columns) cols.push_back({c.header, c.align});
  Table t(std::move(cols));
  for (const auto& item : items) {
    std::vector<std::string> row;
    for (const auto& c : view.columns) row.push_back(c.cell(item, now));
    t.add_row(std::move(row));
  }
  t.print(out);
}

void print_detail(std::ostream& out, const ResourceView& view, const json& doc, TimeMs now) {
  if (view.detail && doc.is_object()) return view.detail(out, doc, now);
  print_generic_detail(out, doc);
}

namespace {

// Whether `key` is the message code ("reason_message") of a sibling text ("reason") in `obj`.
bool is_code_of_sibling(const json& obj, const std::string& key) {
  static const std::string kSuffix = "_message";
  return key.size() > kSuffix.size() && key.compare(key.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0 &&
         obj.contains(key.substr(0, key.size() - kSuffix.size()));
}

// `v` without the message codes beside texts, at any depth: the view shows the text, already in
// the reader's language; -o json keeps both.
json without_codes(const json& v) {
  if (v.is_array()) {
    json out = json::array();
    for (const auto& x : v) out.push_back(without_codes(x));
    return out;
  }
  if (!v.is_object()) return v;
  json out = json::object();
  for (auto it = v.begin(); it != v.end(); ++it)
    if (!is_code_of_sibling(v, it.key())) out[it.key()] = without_codes(it.value());
  return out;
}

}  // namespace

void print_generic_detail(std::ostream& out, const json& doc, const std::vector<std::string>& first) {
  if (!doc.is_object()) return print_kv(out, doc);
  std::set<std::string> done;
  KvList list;
  auto take = [&](const std::string& key) {
    if (done.count(key) || !doc.contains(key)) return;
    done.insert(key);
    if (is_code_of_sibling(doc, key)) return;
    const json& v = doc[key];
    // "supplier": "acme" with "supplier_id": "sup_…" reads as one line.
    std::string id_key = key + "_id";
    if (v.is_string() && doc.contains(id_key) && doc[id_key].is_string() && !done.count(id_key)) {
      done.insert(id_key);
      const std::string& id = doc[id_key].get_ref<const std::string&>();
      list.emplace_back(key, v.get<std::string>() == id ? id : v.get<std::string>() + " (" + id + ")");
      return;
    }
    list.emplace_back(key, without_codes(v));
  };
  static const char* kFirst[] = {"name", "id", "display_name"};
  static const char* kLast[] = {"created_at", "updated_at", "version"};
  for (const char* k : kFirst) take(k);
  for (const auto& k : first) take(k);
  std::vector<std::string> rest;
  for (auto it = doc.begin(); it != doc.end(); ++it)
    if (std::find(std::begin(kLast), std::end(kLast), it.key()) == std::end(kLast)) rest.push_back(it.key());
  for (const auto& k : rest) take(k);
  for (const char* k : kLast) take(k);
  print_kv(out, list);
}

std::string format_age(const json& rfc3339, TimeMs now) {
  if (!rfc3339.is_string()) return "";
  auto t = parse_rfc3339(rfc3339.get_ref<const std::string&>(), "created_at");
  if (!t) return "";
  int64_t s = std::max<int64_t>(0, (now - *t) / 1000);
  if (s < 120) return std::to_string(s) + "s";
  if (s < 120 * 60) return std::to_string(s / 60) + "m";
  if (s < 48 * kSecondsPerHour) return std::to_string(s / kSecondsPerHour) + "h";
  return std::to_string(s / kSecondsPerDay) + "d";
}

std::string format_seconds(int64_t s) {
  if (s > 0 && s % kSecondsPerDay == 0) return std::to_string(s / kSecondsPerDay) + "d";
  if (s > 0 && s % kSecondsPerHour == 0) return std::to_string(s / kSecondsPerHour) + "h";
  if (s > 0 && s % 60 == 0) return std::to_string(s / 60) + "m";
  return std::to_string(s) + "s";
}

}  // namespace gpurent
