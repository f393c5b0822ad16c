#include "sched/scenario.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/fields.h"
#include "core/yaml_json.h"
#include "sched/engine.h"
#include "sched/from_model.h"
#include "sched/sched_config.h"

namespace gpurent {
namespace {

struct Expect {
  std::optional<std::vector<std::string>> running;
  std::vector<std::string> running_includes, not_running;
  std::map<std::string, std::string> pending;  // job -> reason substring
  struct Where {
    std::optional<std::vector<std::string>> nodes;
    bool same_node = false, same_domain = false;
    std::optional<std::string> gpu_model;
    std::optional<std::string> offer;  // "" for unpriced
  };
  std::map<std::string, Where> placement;
  std::map<std::string, int64_t> replicas;
  std::vector<std::string> events, absent_events;
  std::optional<int64_t> running_count, pending_count;
  // tenant -> supplier -> the share of the GPUs it holds there, per mille (rounded half up)
  std::map<std::string, std::map<std::string, int64_t>> supplier_shares;
};

struct Step {
  int64_t at_s = 0;
  std::vector<SchedJob> submit;
  std::vector<std::string> finish;
  std::optional<std::string> fail_node, fail_reason, restore_node;
  std::map<std::string, std::string> reserve;
  std::map<std::string, std::string> hold;  // project -> hold reason ("" lifts the hold)
  std::map<std::string, std::string> spot_price;  // offer -> its spot price from this step on
  Expect expect;
};

// A tenant's terms: its currency and the places its contracts keep data in.
struct ScenarioTenant {
  std::string currency = "USD";
  std::vector<std::string> places;
  std::map<std::string, int64_t> split;  // procurement split: supplier -> per mille
};

struct Scenario {
  std::string description;
  SchedConfig config;
  std::vector<SchedNode> nodes;
  std::vector<SchedProject> projects;
  std::vector<Step> steps;
  std::map<std::string, ScenarioTenant> tenants;
  std::vector<SchedOffer> offers;
};

const StrRule kName{1, 128};

std::vector<std::string> names(Fields& f, const char* key) { return f.str_list(key, kName); }

// An error's summary as the reason of `key`: as a message when it has one, else as text.
void error_from(Fields& f, const std::string& key, const Error& err) {
  if (err.detail.empty())
    f.error(key, err.message);
  else
    f.error(key, err.detail);
}

void parse_expect(Fields& e, Expect& x) {
  if (e.has("running")) x.running = names(e, "running");
  x.running_includes = names(e, "running_includes");
  x.not_running = names(e, "not_running");
  if (const json* p = e.raw("pending")) {
    if (!p->is_object())
      e.error("pending", Message("sched.scenario.pending_map"));
    else
      for (const auto& [k, v] : p->items()) {
        if (!v.is_string())
          e.error("pending." + k, Message("sched.scenario.pending_string"));
        else x.pending[k] = v.get<std::string>();
      }
  }
  if (const json* p = e.raw("placement"); p && p->is_object()) {
    for (const auto& [k, v] : p->items()) {
      FieldErrors dummy;
      Expect::Where w;
      Fields wf(v, e.path_of("placement." + k), dummy);
      if (wf.has("nodes")) w.nodes = names(wf, "nodes");
      w.same_node = wf.boolean("same_node", false);
      w.same_domain = wf.boolean("same_domain", false);
      w.gpu_model = wf.opt_str("gpu_model", kName);
      if (wf.has("offer")) w.offer = wf.str("offer", {0, 128});
      wf.finish();
      for (const auto& fe : dummy.list()) {
        if (fe.coded.empty())
          e.error("placement." + k, fe.field + ": " + fe.reason);
        else
          e.error("placement." + k, Message("error.field").arg("field", fe.field).arg("reason", fe.coded));
      }
      x.placement[k] = w;
    }
  }
  if (const json* p = e.raw("replicas"); p && p->is_object())
    for (const auto& [k, v] : p->items())
      if (v.is_number_integer()) x.replicas[k] = v.get<int64_t>();
  x.events = e.str_list("events", {1, 300});
  x.absent_events = e.str_list("absent_events", {1, 300});
  if (const json* p = e.raw("supplier_shares"); p && p->is_object())
    for (const auto& [tenant, shares] : p->items()) {
      if (!shares.is_object()) {
        e.error("supplier_shares." + tenant, Message("sched.scenario.shares_map"));
        continue;
      }
      for (const auto& [supplier, v] : shares.items()) {
        if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 1000)
          e.error("supplier_shares." + tenant + "." + supplier, Message("sched.scenario.shares_map"));
        else
          x.supplier_shares[tenant][supplier] = v.get<int64_t>();
      }
    }
  x.running_count = e.opt_integer("running_count", 0, 1000000);
  x.pending_count = e.opt_integer("pending_count", 0, 1000000);
  e.finish();
}

// One `nodes` entry: `count` nodes alike, named name-1, name-2, ... when there are several.
void parse_scenario_node(Fields& n, const GpuCatalog& catalog, std::vector<SchedNode>& nodes) {
  const std::string name = n.str("name", kName);
  const GpuModel* model = read_gpu_model_ref(n, catalog, "model");
  const int64_t gpus = n.integer("gpus", 0, 16);
  const int64_t cpu = n.opt_integer("cpu_cores", 1, 1024).value_or(128);
  const int64_t mem = n.opt_integer("memory_gib", 1, 16384).value_or(1024);
  std::vector<int64_t> groups;
  if (const json* g = n.raw("nvlink"); g && g->is_array())
    for (const auto& v : *g) groups.push_back(v.is_number_integer() ? v.get<int64_t>() : 0);
  const auto rdma = n.str_list("rdma", kName);
  const std::string reserved = n.opt_str("reserved_for", kName).value_or("");
  const std::string supplier = n.opt_str("supplier", kName).value_or("");
  const std::string site = n.opt_str("site", kName).value_or("");
  const std::string region = n.opt_str("region", kName).value_or("");
  const std::string country = n.opt_str("country", kName).value_or("");
  const auto offers = n.str_list("offers", kName);
  const int64_t count = n.opt_integer("count", 1, 10000).value_or(1);
  n.finish();
  if (!model) return;
  if (groups.empty() && model->form_factor != FormFactor::kPcie) groups.push_back(gpus);
  int64_t sum = 0;
  for (int64_t g : groups) sum += g;
  if (!groups.empty() && sum != gpus) n.error("nvlink", Message("sched.scenario.nvlink_sum"));
  for (int64_t c = 1; c <= count; ++c) {
    SchedNode sn;
    sn.id = count == 1 ? name : name + "-" + std::to_string(c);
    sn.gpu_model = model->id;
    sn.form_factor = model->form_factor;
    sn.gpu_memory_gib = model->memory_gib;
    sn.cpu_cores = cpu;
    sn.memory_gib = mem;
    sn.reserved_for = reserved;
    sn.supplier = supplier;
    sn.site = site;
    sn.region = region;
    sn.country = country;
    sn.offers = offers;
    for (const auto& r : rdma) sn.rdma |= r == "infiniband" ? kRdmaIb : r == "roce_v2" ? kRdmaRoce : 0;
    for (size_t gi = 0, i = 0; gi < groups.size() || (groups.empty() && i < static_cast<size_t>(gpus)); ++gi) {
      if (groups.empty()) {
        sn.gpu_domains.push_back("");
        ++i;
        continue;
      }
      for (int64_t k = 0; k < groups[gi]; ++k) sn.gpu_domains.push_back(sn.id + "/nv" + std::to_string(gi));
    }
    nodes.push_back(std::move(sn));
  }
}

// A price in a scenario ("2.99") as micro-units; an error names `key`.
int64_t price(Fields& f, const char* key, bool required) {
  if (!f.has(key)) {
    if (required) f.error(key, Message("field.required"));
    return 0;
  }
  auto m = f.opt_money(key, Currency::kUSD);
  return m ? m->micros() : 0;
}

// One `offers` entry: {name, currency?, on_demand, spot?, contract_only?, contracts: [tenant],
// commitments: {tenant: GPUs}, overflow_waits: [tenant]}.
void parse_scenario_offer(Fields& o, std::vector<SchedOffer>& offers) {
  SchedOffer so;
  so.id = so.name = o.str("name", kName);
  so.currency = o.opt_str("currency", {3, 3}).value_or("USD");
  so.on_demand = price(o, "on_demand", true);
  if (o.has("spot")) so.spot = price(o, "spot", false);
  so.contract_only = o.boolean("contract_only", false);
  so.contract_tenants = o.str_list("contracts", kName);
  if (const json* c = o.raw("commitments"); c && c->is_object())
    for (const auto& [t, g] : c->items()) so.committed_milli[t] = g.is_number_integer() ? g.get<int64_t>() * 1000 : 0;
  so.overflow_waits = o.str_list("overflow_waits", kName);
  o.finish();
  offers.push_back(std::move(so));
}

// One `projects` entry; notes its tenant in `tenant_of`.
void parse_scenario_project(Fields& p, std::vector<SchedProject>& projects, std::map<std::string, std::string>& tenant_of) {
  SchedProject sp;
  sp.name = sp.id = p.str("name", kName);
  sp.tenant = p.str("tenant", kName);
  if (const json* q = p.raw("quota")) {
    auto quota = parse_quota(*q, Currency::kUSD, p.path_of("quota"));
    if (!quota)
      error_from(p, "quota", quota.error());
    else sp.quota = *quota;
  } else {
    sp.quota.gpus_per_model[kAnyGpuModel] = kMaxQuotaGpus;
  }
  p.finish();
  tenant_of[sp.id] = sp.tenant;
  projects.push_back(std::move(sp));
}

// A step's `submit` list: each job, `repeat` times, into step.submit; counts them in `total_jobs`.
void parse_submit(Fields& st, const json& jobs, const GpuCatalog& catalog,
                  std::map<std::string, std::string>& tenant_of, int64_t& total_jobs, Step& step) {
  constexpr int64_t kMaxScenarioJobs = 100000;
  for (size_t i = 0; i < jobs.size(); ++i) {
    json body = jobs[i];
    int64_t repeat = 1;
    if (body.is_object() && body.contains("repeat")) {
      repeat = body["repeat"].is_number_integer() ? body["repeat"].get<int64_t>() : 0;
      body.erase("repeat");
    }
    // What runs does not matter to the scheduler; spare every scenario job a command line.
    if (body.is_object() && !body.contains("image") && !body.contains("command")) body["command"] = {"run"};
    if (body.is_object() && !body.contains("kind")) body["kind"] = "training";
    auto job = parse_job(body, Currency::kUSD);
    const std::string where = "submit[" + std::to_string(i) + "]";
    if (!job) {
      error_from(st, where, job.error());
      continue;
    }
    job->project_id = job->project;
    job->tenant_id = tenant_of.count(job->project) ? tenant_of[job->project] : "";
    if (job->tenant_id.empty())
      st.error(where + ".project", Message("sched.scenario.unknown_project").arg("project", job->project));
    for (auto& m : job->constraints.gpu_models) {
      const GpuModel* gm = catalog.find(m);
      if (!gm)
        st.error(where + ".constraints.gpu_models", Message("sched.scenario.unknown_gpu_model").arg("model", m));
      else m = gm->id;
    }
    // A scenario is a worked case, not a trace: 100,000 jobs in all (found by the scenarios
    // fuzz target: repeat 9,999,912 after the error still allocated them).
    if (repeat < 1 || repeat > kMaxScenarioJobs) {
      st.error(where + ".repeat",
               Message("sched.scenario.repeat_range").arg("max", std::to_string(kMaxScenarioJobs)));
      continue;
    }
    if (total_jobs + repeat > kMaxScenarioJobs) {
      st.error(where + ".repeat",
               Message("sched.scenario.too_many_jobs").arg("max", std::to_string(kMaxScenarioJobs)));
      continue;
    }
    total_jobs += repeat;
    for (int64_t r = 1; r <= repeat; ++r) {
      const std::string id = repeat == 1 ? job->name : job->name + "-" + std::to_string(r);
      step.submit.push_back(to_sched_job(*job, id, step.at_s * 1000));
    }
  }
}

Result<Scenario> parse(const json& doc, const GpuCatalog& catalog) {
  Scenario s;
  FieldErrors errs;
  Fields f(doc, "", errs);
  if (!f.valid_object()) return errs.to_error();
  if (const json* d = f.raw("description"); d && d->is_string()) s.description = d->get<std::string>();
  else
    f.error("description", Message("sched.scenario.description_required"));
  s.config.score_policy = "bestfit";  // scenarios default to the simplest scoring
  f.object("config", false, [&](Fields& c) { read_sched_config(c, s.config); });
  for (const auto& m : catalog.models()) s.config.model_names[m.id] = m.name;
  f.objects("nodes", true, 10000, [&](Fields& n, size_t) { parse_scenario_node(n, catalog, s.nodes); });
  f.objects("offers", false, 1000, [&](Fields& o, size_t) { parse_scenario_offer(o, s.offers); });
  f.objects("tenants", false, 1000, [&](Fields& t, size_t) {
    ScenarioTenant st;
    const std::string name = t.str("name", kName);
    st.currency = t.opt_str("currency", {3, 3}).value_or("USD");
    st.places = t.str_list("sovereignty", kName);
    if (const json* sp = t.raw("procurement_split"); sp && sp->is_object())
      for (const auto& [supplier, v] : sp->items()) {
        if (!v.is_number_integer())
          t.error("procurement_split." + supplier, Message("sched.scenario.shares_map"));
        else
          st.split[supplier] = v.get<int64_t>();
      }
    t.finish();
    s.tenants[name] = st;
  });
  std::map<std::string, std::string> tenant_of;
  f.objects("projects", true, 1000, [&](Fields& p, size_t) { parse_scenario_project(p, s.projects, tenant_of); });
  int64_t total_jobs = 0;
  f.objects("steps", true, 10000, [&](Fields& st, size_t) {
    Step step;
    step.at_s = st.integer("at", 0, 100LL * 365 * kSecondsPerDay);
    if (const json* jobs = st.raw("submit"); jobs && jobs->is_array())
      parse_submit(st, *jobs, catalog, tenant_of, total_jobs, step);
    step.finish = names(st, "finish");
    step.fail_node = st.opt_str("fail_node", kName);
    step.fail_reason = st.opt_str("fail_reason", {1, 200});
    step.restore_node = st.opt_str("restore_node", kName);
    if (const json* r = st.raw("reserve"); r && r->is_object())
      for (const auto& [k, v] : r->items()) step.reserve[k] = v.is_string() ? v.get<std::string>() : "";
    if (const json* sp = st.raw("spot_price"); sp && sp->is_object())
      for (const auto& [k, v] : sp->items()) step.spot_price[k] = v.is_string() ? v.get<std::string>() : "";
    if (const json* h = st.raw("hold"); h && h->is_object())
      for (const auto& [k, v] : h->items()) step.hold[k] = v.is_string() ? v.get<std::string>() : "";
    st.object("expect", false, [&](Fields& e) { parse_expect(e, step.expect); });
    st.finish();
    s.steps.push_back(std::move(step));
  });
  f.finish();
  if (!errs.list().empty()) return errs.to_error();
  // Jobs take their tenant's currency and sovereignty (the server reads them from the tenant and its contracts).
  for (Step& step : s.steps)
    for (SchedJob& j : step.submit) {
      auto t = s.tenants.find(j.tenant);
      const ScenarioTenant none;
      const ScenarioTenant& tt = t == s.tenants.end() ? none : t->second;
      if (j.terms.currency.empty()) j.terms.currency = tt.currency;
      j.terms.places = tt.places;
    }
  return s;
}

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// "kind job" or "kind job ~ text" against one event.
bool event_matches(const std::string& pattern, const SchedEvent& e) {
  std::string pat = pattern, text;
  if (auto t = pat.find(" ~ "); t != std::string::npos) text = pat.substr(t + 3), pat = pat.substr(0, t);
  std::string kind = pat, job;
  if (auto sp = pat.find(' '); sp != std::string::npos) kind = pat.substr(0, sp), job = pat.substr(sp + 1);
  if (kind != sched_event_kind_name(e.kind)) return false;
  if (!job.empty() && job != e.job) return false;
  return text.empty() || render_en(e.reason).find(text) != std::string::npos;
}

using NodeIndex = std::map<std::string, const SchedNode*>;
using LiveJobs = std::map<std::string, SchedJob>;

// Records a failure of the current step, prefixed with where it happened.
struct StepFailures {
  std::vector<std::string>& out;
  const std::string& where;
  void operator()(const std::string& m) const { out.push_back(where + m); }
};

// Applies a step's finishes, holds, reservations, node failure and restore and submissions, then
// runs one scheduling pass; the events of both go to `events`.
void apply_step(SchedEngine& engine, std::vector<SchedProject>& projects, std::vector<SchedOffer>& offers,
                const Step& st, TimeMs now, LiveJobs& live, std::vector<SchedEvent>& events,
                const StepFailures& fail) {
  for (const auto& [name, amount] : st.spot_price) {
    // By reference through a plain name: clang 14 (fuzz/run) cannot capture a structured binding.
    auto it = std::find_if(offers.begin(), offers.end(), [&id = name](const SchedOffer& o) { return o.id == id; });
    auto m = Money::parse(amount, Currency::kUSD);
    if (it == offers.end() || !m) {
      fail("spot_price: unknown offer or bad price for " + name);
      continue;
    }
    it->spot = m->micros();
    if (auto x = engine.set_offer(*it); !x) fail(x.error().message);
  }
  for (const auto& id : st.finish) {
    if (!live.count(id)) fail("finish: unknown job " + id);
    engine.remove(id);
    live.erase(id);
  }
  for (const auto& hold : st.hold) {
    const auto& [project, why] = hold;
    auto it = std::find_if(projects.begin(), projects.end(),
                           [&](const SchedProject& p) { return p.name == hold.first; });
    if (it == projects.end()) {
      fail("hold: unknown project " + project);
      continue;
    }
    it->hold = why.empty() ? Message() : verbatim(why);
    engine.set_project(*it);
  }
  for (const auto& [node, tenant] : st.reserve)
    if (auto x = engine.set_node_reservation(node, tenant); !x) fail(x.error().message);
  if (st.fail_node) {
    auto ev = engine.node_failed(*st.fail_node, now, st.fail_reason ? verbatim(*st.fail_reason) : Message());
    events.insert(events.end(), ev.begin(), ev.end());
  }
  if (st.restore_node)
    if (auto x = engine.node_restored(*st.restore_node); !x) fail(x.error().message);
  for (const auto& j : st.submit) {
    if (auto x = engine.submit(j); !x) fail(x.error().message);
    live[j.id] = j;
  }
  auto ev = engine.schedule(now);
  events.insert(events.end(), ev.begin(), ev.end());
}

// The invariants that hold after any step; counts the running and pending jobs as it goes.
void check_invariants(const SchedEngine& engine, const LiveJobs& live, NodeIndex& node_by_id, int64_t& running,
                      int64_t& pending, const StepFailures& fail) {
  std::map<std::pair<std::string, int64_t>, int64_t> gpu_use;
  std::map<std::pair<std::string, int64_t>, std::set<std::string>> share_tenants;  // GPU -> tenants with shares
  for (const auto& [id, j] : live) {
    const auto place = engine.placement(id);
    if (!engine.is_running(id)) {
      ++pending;
      if (!place.empty()) fail("invariant: pending job " + id + " holds a placement");
      continue;
    }
    ++running;
    std::map<int64_t, int64_t> per_replica;
    for (const auto& w : place) {
      ++per_replica[w.replica];
      for (int64_t g : w.gpus) {
        gpu_use[{w.node, g}] += w.gpu_milli ? w.gpu_milli : 1000;
        if (w.gpu_milli > 0 && w.gpu_milli < 1000) share_tenants[{w.node, g}].insert(j.tenant);
      }
      const SchedNode* n = node_by_id[w.node];
      if (!j.gpu_models.empty() && j.milli_per_worker() > 0 && !contains(j.gpu_models, n->gpu_model))
        fail("invariant: job " + id + " runs on " + n->gpu_model + ", which it does not allow");
    }
    if (static_cast<int64_t>(per_replica.size()) < j.replicas_min)
      fail("invariant: job " + id + " runs with fewer than its minimum replicas");
    for (const auto& [rep, count] : per_replica)
      if (count != j.workers) fail("invariant: job " + id + " replica " + std::to_string(rep) + " is a half gang");
  }
  for (const auto& [gpu, milli] : gpu_use)
    if (milli > 1000) fail("invariant: GPU " + std::to_string(gpu.second) + " of " + gpu.first + " is over-allocated");
  for (const auto& [gpu, tenants] : share_tenants)
    if (tenants.size() > 1)
      fail("invariant: GPU " + std::to_string(gpu.second) + " of " + gpu.first + " holds shares of " +
           std::to_string(tenants.size()) + " tenants");
}

// A job's state in words, for failure messages.
std::string job_state(const SchedEngine& engine, const LiveJobs& live, const std::string& id) {
  if (!live.count(id)) return std::string("not submitted or finished");
  return engine.is_running(id) ? std::string("running") : "pending: " + engine.reason(id);
}

// The expected running, not running and pending jobs (with their reasons).
void check_job_states(const SchedEngine& engine, const Expect& x, const LiveJobs& live, const StepFailures& fail) {
  if (x.running) {
    for (const auto& id : *x.running)
      if (!engine.is_running(id)) fail("expected " + id + " running; it is " + job_state(engine, live, id));
    for (const auto& [id, j] : live)
      if (engine.is_running(id) && !contains(*x.running, id)) fail("expected " + id + " not running; it is running");
  }
  for (const auto& id : x.running_includes)
    if (!engine.is_running(id)) fail("expected " + id + " running; it is " + job_state(engine, live, id));
  for (const auto& id : x.not_running)
    if (engine.is_running(id)) fail("expected " + id + " not running; it is running");
  for (const auto& [id, text] : x.pending) {
    if (!live.count(id) || engine.is_running(id))
      fail("expected " + id + " pending; it is " + job_state(engine, live, id));
    else if (engine.reason(id).find(text) == std::string::npos)
      fail("expected " + id + "'s reason to contain \"" + text + "\"; it is \"" + engine.reason(id) + "\"");
  }
}

// The expected placements (nodes, node and NVLink domain sharing, GPU model) and replica counts.
void check_placements(const SchedEngine& engine, const Expect& x, const LiveJobs& live, NodeIndex& node_by_id,
                      const StepFailures& fail) {
  for (const auto& [id, w] : x.placement) {
    const auto place = engine.placement(id);
    if (place.empty()) {
      fail("expected a placement for " + id + "; it is " + job_state(engine, live, id));
      continue;
    }
    std::set<std::string> used, domains;
    for (const auto& p : place) {
      used.insert(p.node);
      domains.insert(p.nvlink_domain);
      if (w.gpu_model && node_by_id[p.node]->gpu_model != *w.gpu_model)
        fail(id + " worker on " + p.node + " (" + node_by_id[p.node]->gpu_model + "), expected " + *w.gpu_model);
    }
    if (w.nodes && used != std::set<std::string>(w.nodes->begin(), w.nodes->end())) {
      std::string got;
      for (const auto& u : used) got += (got.empty() ? "" : ", ") + u;
      fail("expected " + id + " on exactly the nodes listed; it is on " + got);
    }
    if (w.same_node && used.size() != 1) fail("expected " + id + " on one node");
    if (w.offer)
      for (const auto& p : place)
        if (p.offer != *w.offer) fail("expected " + id + " under offer '" + *w.offer + "'; a worker runs under '" + p.offer + "'");
    if (w.same_domain && (domains.size() != 1 || domains.begin()->empty()))
      fail("expected " + id + " inside one NVLink domain");
  }
  for (const auto& [id, n] : x.replicas) {
    std::set<int64_t> reps;
    for (const auto& p : engine.placement(id)) reps.insert(p.replica);
    if (static_cast<int64_t>(reps.size()) != n)
      fail("expected " + id + " with " + std::to_string(n) + " replicas; it has " + std::to_string(reps.size()));
  }
}

// The expected events (in order) and the events that must not appear.
void check_events(const Expect& x, const std::vector<SchedEvent>& events, const StepFailures& fail) {
  std::string seen;
  for (const auto& e : events) seen += std::string(seen.empty() ? "" : "; ") + sched_event_kind_name(e.kind) + " " + e.job + " (" + render_en(e.reason) + ")";
  size_t from = 0;
  for (const auto& pat : x.events) {
    size_t k = from;
    while (k < events.size() && !event_matches(pat, events[k])) ++k;
    if (k == events.size()) fail("expected event \"" + pat + "\" (in order); events were: " + seen);
    else from = k + 1;
  }
  for (const auto& pat : x.absent_events)
    for (const auto& e : events)
      if (event_matches(pat, e)) fail("unexpected event \"" + pat + "\"; events were: " + seen);
}

// A step's expectations, given the events it produced and its running and pending job counts.
void check_expect(const SchedEngine& engine, const Expect& x, const LiveJobs& live, NodeIndex& node_by_id,
                  const std::vector<SchedEvent>& events, int64_t running, int64_t pending, const StepFailures& fail) {
  check_job_states(engine, x, live, fail);
  check_placements(engine, x, live, node_by_id, fail);
  check_events(x, events, fail);
  for (const auto& [tenant, want] : x.supplier_shares) {
    const auto held = engine.held_by_supplier(tenant);
    int64_t total = 0;
    for (const auto& [s, milli] : held) total += milli;
    std::string got;
    std::map<std::string, int64_t> shares;
    for (const auto& [s, milli] : held) {
      shares[s] = total > 0 ? (milli * 1000 + total / 2) / total : 0;
      got += (got.empty() ? "" : ", ") + (s.empty() ? std::string("(none)") : s) + " " + std::to_string(shares[s]) + "‰";
    }
    for (const auto& [s, permille] : want) {
      auto it = shares.find(s);
      if ((it == shares.end() ? 0 : it->second) != permille)
        fail("expected " + tenant + " to hold " + std::to_string(permille) + "‰ of its GPUs at " + s + "; it holds " +
             (got.empty() ? "nothing" : got));
    }
  }
  if (x.running_count && running != *x.running_count)
    fail("expected " + std::to_string(*x.running_count) + " running jobs; " + std::to_string(running) + " run");
  if (x.pending_count && pending != *x.pending_count)
    fail("expected " + std::to_string(*x.pending_count) + " pending jobs; " + std::to_string(pending) + " wait");
}

}  // namespace

Result<ScenarioResult> run_scenario(const std::string& yaml_text, const GpuCatalog& catalog) {
  auto doc = yaml_to_json(yaml_text);
  if (!doc) return doc.error();
  auto parsed = parse(*doc, catalog);
  if (!parsed) return parsed.error();
  Scenario& s = *parsed;
  auto made = SchedEngine::make(s.config);
  if (!made) return made.error();
  SchedEngine& engine = **made;
  NodeIndex node_by_id;
  for (const auto& n : s.nodes) {
    if (auto st = engine.add_node(n); !st) return st.error();
    node_by_id[n.id] = &n;
  }
  for (const auto& o : s.offers)
    if (auto st = engine.set_offer(o); !st) return st.error();
  for (const auto& p : s.projects) engine.set_project(p);
  for (const auto& [name, t] : s.tenants)
    if (auto st = engine.set_procurement_split(name, t.split); !st) return st.error();
  ScenarioResult r;
  r.description = s.description;
  LiveJobs live;
  for (size_t si = 0; si < s.steps.size(); ++si) {
    Step& st = s.steps[si];
    const TimeMs now = st.at_s * 1000;
    const std::string where = "step " + std::to_string(si + 1) + " (at " + std::to_string(st.at_s) + "s): ";
    const StepFailures fail{r.failures, where};
    std::vector<SchedEvent> events;
    apply_step(engine, s.projects, s.offers, st, now, live, events, fail);
    ++r.steps;
    // Invariants.
    int64_t running = 0, pending = 0;
    check_invariants(engine, live, node_by_id, running, pending, fail);
    // Expectations.
    check_expect(engine, st.expect, live, node_by_id, events, running, pending, fail);
  }
  return r;
}

}  // namespace gpurent
