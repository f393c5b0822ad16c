// /api/v1/instances: a tenant's interactive instances (model/instance.h,
// docs/resources/instances.md).
//   POST   /instances               create and start (its first job is submitted in the same write)
//   GET    /instances, /{ref}        with the state derived from its latest job
//   POST   /instances/{ref}/stop     cancels the running job: the container goes, the volume stays
//   POST   /instances/{ref}/start    submits the next job "<name>-<n>"
//   POST   /instances/{ref}/restart  both, in one write
//   DELETE /instances/{ref}          release: stops it and removes the instance (not its volume)
//   POST   /instances/{ref}/attach, /detach   its volumes (api/instance_volumes.h)
// Those who submit the tenant's jobs write (the jobs row of the permission matrix); its users read.
#include <set>

#include "core/ids.h"
#include "model/job_run.h"
#include "model/instance.h"
#include "model/job_state.h"
#include "model/offer.h"
#include "model/tenant.h"
#include "model/volume.h"
#include "server/services/allocation_ledger.h"
#include "server/services/instance_release.h"
#include "server/services/instance_stop.h"
#include "server/services/node_volumes.h"
#include "server/services/invoices.h"
#include "server/api/instance_volumes.h"
#include "server/api/job_actions.h"
#include "server/api/resources.h"
#include "server/http/http_util.h"
#include "server/services/record_faults.h"

namespace gpurent {
namespace {

// A job error named as the instance's client named the field.
Error as_instance_error(Error e, const Instance& i) {
  for (auto& fe : e.fields) fe.field = instance_field(fe.field, i.volume.has_value());
  return e;
}

// Submits the instance's next job inside tx; its id is appended to i.job_ids. Its number is the
// next after the instance's starts whose name no job of the tenant has (an instance released and
// created again under its name, or a job a user named so, keeps its jobs' names). Past 8 names
// taken in a row the step doubles: jobs named on purpose cost a start at most ~60 lookups, not one
// per name, inside the single writer.
Status start_in(App& app, const Principal& p, StoreTx& tx, Instance& i, StartOn on = StartOn::kAnyHost,
                const std::string& host = "") {
  int64_t n = static_cast<int64_t>(i.job_ids.size()) + 1;
  for (int64_t tries = 0, step = 1;; ++tries) {
    auto taken = tx.list({"jobs", {{"tenant_id", i.tenant_id}, {"name", i.name + "-" + std::to_string(n)}}, "", 1});
    if (!taken) return taken.error();
    if (taken->items.empty()) break;
    if (tries >= 8 && step < (int64_t{1} << 50)) step *= 2;
    n += step;
  }
  auto body = instance_job(i, n, app.clock.now());
  if (!body) return body.error();
  auto job = create_in(app, app.kinds.at("jobs"), start_job_on(std::move(*body), on, host), p, tx, true);
  if (!job) return as_instance_error(job.error(), i);
  i.job_ids.push_back(job->id);
  i.want_running = true;
  i.stop_reason.reset();
  return ok_status();
}

// The instance's node ports (its sshd's when it has SSH keys, its notebook's when that is on): the
// lowest of the server's range (--instance-ports) no other instance holds, for its whole life.
// Its notebook token: 32 random bytes.
Status assign_access(App& app, StoreTx& tx, Instance& i) {
  if (i.ssh_keys.empty() && !i.notebook) return ok_status();
  // Ports are taken one writer at a time (several servers on one database).
  if (auto l = take_write_lock(tx, "instance-ports", "the instances' node ports"); !l) return l;
  std::set<int64_t> taken;
  int64_t held_by_tenant = 0;
  auto all = list_all(tx, "instances");
  if (!all) return all.error();
  for (const Record& r : *all)
    for (const char* k : {"ssh_port", "notebook_port"})
      // A released instance's ports are free once its last run has gone.
      if (!r.body.contains("released_at") || r.body.contains("stopping_job"))
        if (auto v = r.body.find(k); v != r.body.end() && v->is_number_integer()) {
          taken.insert(v->get<int64_t>());
          held_by_tenant += r.tenant_id == i.tenant_id;
        }
  // The range is every tenant's: one tenant holds at most an eighth of it (at least 8 ports), so
  // instances made and stopped in a loop, which cost nothing, cannot lock the others out.
  const int64_t range = app.opts.instance_port_max - app.opts.instance_port_min + 1;
  const int64_t share = std::max<int64_t>(std::min<int64_t>(8, range), range / 8);
  const int64_t wanted = (i.ssh_keys.empty() ? 0 : 1) + (i.notebook ? 1 : 0);
  if (held_by_tenant + wanted > share)
    return Error::make(Code::kConflict, Message("api.instances.tenant_ports")
                                            .arg("held", std::to_string(held_by_tenant))
                                            .arg("share", std::to_string(share))
                                            .arg("min", std::to_string(app.opts.instance_port_min))
                                            .arg("max", std::to_string(app.opts.instance_port_max)));
  int64_t next = app.opts.instance_port_min;
  auto take = [&](int64_t& port) -> Status {
    while (next <= app.opts.instance_port_max && taken.count(next)) ++next;
    if (next > app.opts.instance_port_max)
      return Error::make(Code::kConflict, Message("api.instances.no_port")
                                              .arg("min", std::to_string(app.opts.instance_port_min))
                                              .arg("max", std::to_string(app.opts.instance_port_max)));
    port = next++;
    return ok_status();
  };
  if (!i.ssh_keys.empty())
    if (auto s = take(i.ssh_port); !s) return s;
  if (i.notebook) {
    if (auto s = take(i.notebook_port); !s) return s;
    i.notebook_token = random_hex(32);
  }
  return ok_status();
}

// volume.size_gb at create: the tenant's volume of that name must be that size; when the tenant has
// none, it is made (as POST /volumes would, in this write). Errors name the instance's fields.
Status ensure_data_disk(App& app, const Principal& p, StoreTx& tx, const Instance& i) {
  if (!i.volume || !i.volume_size_gb) return ok_status();
  auto found = list_all(tx, "volumes", {{"tenant_id", i.tenant_id}, {"name", i.volume->name}});
  if (!found) return found.error();
  if (!found->empty()) {
    auto v = decode_record(found->front(), decode_volume, "the instance's data disk cannot be checked");
    if (!v) return v.error();
    if (v->size_gb == *i.volume_size_gb) return ok_status();
    return Error::invalid("volume.size_gb", Message("instance.volume.size_differs")
                                                .arg("volume", i.volume->name)
                                                .arg("size", std::to_string(v->size_gb))
                                                .arg("asked", std::to_string(*i.volume_size_gb)));
  }
  auto made = create_in(app, app.kinds.at("volumes"),
                        json{{"name", i.volume->name}, {"size_gb", *i.volume_size_gb}, {"tenant", i.tenant_id}}, p, tx);
  if (made) return ok_status();
  Error e = made.error();
  // Its fields as the instance names them; the tenant's volume cap refuses the disk by its name.
  for (auto& fe : e.fields) fe.field = fe.field == "tenant" ? "volume.name" : "volume." + fe.field;
  return e;
}

Result<Built> build_instance(App& app, const json& body, const Principal& p, StoreTx& tx) {
  auto i = parse_instance(body);
  if (!i) return i.error();
  std::map<std::string, std::string> scope;
  if (!p.is_operator()) scope["tenant_id"] = p.tenant_id.empty() ? "-" : p.tenant_id;
  auto project = resolve_ref(tx, "projects", i->project, scope, "project");
  if (!project) return project.error();
  i->tenant_id = project->tenant_id;
  i->project_id = project->id;
  // The tenant and project taken first, before the ports' lock row (assign_access): every write
  // takes them in that order (resources.h hold_parent). With volumes the tenant is locked before
  // anything holds it shared (creating the data disk does): two such writes holding it shared
  // and then both locking it (check_instance_volumes) would wait on each other.
  if (i->volume || !i->shared_volumes.empty()) {
    if (auto t = tx.get_locked("tenants", i->tenant_id); !t) return t.error();
  } else if (auto t = hold_parent(tx, "tenants", i->tenant_id, true); !t) {
    return t.error();
  }
  if (auto h = hold_parent(tx, "projects", i->project_id, true); !h) return h.error();
  // Released ones count while they are kept (kReleasedKeptDays; the firewall's pass removes them
  // then — without it they stay, but no longer count). Only released ones' bodies are read.
  auto all = tx.count("instances", {{"tenant_id", i->tenant_id}});
  if (!all) return all.error();
  auto released = list_all(tx, "instances", {{"tenant_id", i->tenant_id}, {"state", "released"}});
  if (!released) return released.error();
  const TimeMs kept_since = app.clock.now() - kReleasedKeptDays * kMsPerDay;
  int64_t held = *all;
  for (const Record& r : *released) {
    const json* at = r.body.is_object() && r.body.contains("released_at") ? &r.body["released_at"] : nullptr;
    auto when =
        at && at->is_string() ? parse_rfc3339(at->get<std::string>(), "released_at") : Result<TimeMs>(INT64_MAX);
    if (when && *when < kept_since) --held;
  }
  if (held >= kMaxInstancesPerTenant)
    return Error::invalid("name", Message("api.instances.too_many")
                                      .arg("max", std::to_string(kMaxInstancesPerTenant))
                                      .arg("days", std::to_string(kReleasedKeptDays)));
  if (auto s = ensure_data_disk(app, p, tx, *i); !s) return s.error();
  if (auto s = check_instance_volumes(tx, *i, ""); !s) return s.error();
  if (auto s = assign_access(app, tx, *i); !s) return s.error();
  if (auto s = start_in(app, p, tx, *i); !s) return s.error();
  return Built{to_json(*i), index_of(*i)};
}

// The instance's latest job, or null when it never started.
template <class Reader>
Result<std::optional<Record>> latest_job(Reader& store, const Instance& i) {
  if (i.job_ids.empty()) return std::optional<Record>();
  auto r = store.get("jobs", i.job_ids.back());
  if (!r) return r.error().code == Code::kNotFound ? Result<std::optional<Record>>(std::optional<Record>()) : r.error();
  return std::optional<Record>(*r);
}

// A node's GPUs and how many of them no open run holds (a card shared by fractional runs is held).
struct HostRoom {
  std::string name, gpu_model, state;
  int64_t gpus = 0, free = 0;
};

template <class Reader>
Result<std::map<std::string, HostRoom>> host_rooms(Reader& store) {
  auto nodes = list_all(store, "nodes");
  if (!nodes) return nodes.error();
  std::map<std::string, HostRoom> out;
  for (const Record& n : *nodes) {
    HostRoom h{n.name, n.body.value("gpu_model", ""), n.body.value("state", "available"), 0, 0};
    if (auto g = n.body.find("gpus"); g != n.body.end() && g->is_array()) h.gpus = static_cast<int64_t>(g->size());
    out[n.id] = h;
  }
  auto open = list_all(store, "allocations", {{"state", "open"}});
  if (!open) return open.error();
  std::map<std::string, std::set<int64_t>> held;
  for (const Record& r : *open) {
    auto run = decode_record(r, decode_run, "an instance's restart cannot be checked without it");
    if (!run) return run.error();
    for (const RunCards& c : run->placement) held[c.node_id].insert(c.gpus.begin(), c.gpus.end());
  }
  for (auto& [id, h] : out) h.free = h.gpus - static_cast<int64_t>(held[id].size());
  return out;
}

// The node of the instance's latest run on GPUs that reached running ("" when none did). In the
// writer (a start), its jobs newest first (an instance's starts follow one another), each's open
// run and then its closed runs through the ledger's chain: not its project's whole history, which
// grows with every run of the project's other jobs. A preflight's GET reads the project's runs.
template <class Reader>
Result<std::string> last_host(Reader& store, const Instance& i) {
  if (i.job_ids.empty() || i.gpus == 0) return std::string();
  const auto on_gpus = [](const JobRun& run) { return run.gpu_milli > 0 && run.running_at && !run.placement.empty(); };
  if constexpr (std::is_same_v<Reader, StoreTx>) {
    auto open = list_all(store, "allocations", {{"project_id", i.project_id}, {"state", "open"}});
    if (!open) return open.error();
    for (auto job = i.job_ids.rbegin(); job != i.job_ids.rend(); ++job) {
      for (const Record& r : *open) {
        const auto named = r.body.is_object() ? r.body.find("job_id") : r.body.end();
        if (named == r.body.end() || !named->is_string() || named->get_ref<const std::string&>() != *job) continue;
        auto run = decode_record(r, decode_run, "the instance's last host cannot be known without it");
        if (!run) return run.error();
        if (on_gpus(*run)) return run->placement.front().node_id;
      }
      auto closed = newest_closed_run_where(store, *job, i.project_id, on_gpus);
      if (!closed) return closed.error();
      if (*closed) return (*closed)->placement.front().node_id;
    }
    return std::string();
  }
  auto runs = list_all(store, "allocations", {{"project_id", i.project_id}});
  if (!runs) return runs.error();
  const std::set<std::string> mine(i.job_ids.begin(), i.job_ids.end());
  std::string host;
  TimeMs latest = -1;
  for (const Record& r : *runs) {
    auto run = decode_record(r, decode_run, "the instance's last host cannot be known without it");
    if (!run) return run.error();
    if (!mine.count(run->job_id) || !on_gpus(*run)) continue;
    if (*run->running_at > latest) latest = *run->running_at, host = run->placement.front().node_id;
  }
  return host;
}

// What a start of the stopped instance would meet (docs/resources/instances.md#restart): its last
// GPU host and that host's free GPUs, the other nodes of its model with room now, its volume, the
// start options and advice in words. Nothing is submitted, so nothing is billed.
struct Preflight {
  json body;
  std::string host;  // node id; "" when it never ran on GPUs
  bool host_free = false;
  Message advice;
  std::string volume_node;  // a node volume's node id ("" : a shared volume, none, or on no node yet)
};

// Its data disk as a start meets it: on the shared volume root every node mounts (a start
// elsewhere copies nothing), or a node volume on one node's disk, copied to another node first
// (what that would copy and take: services/node_volumes.h). The clause the advice adds.
template <class Reader>
Result<std::optional<Message>> preflight_volume(Reader& store, const Instance& i, int64_t assumed_mbps, Preflight& pf) {
  if (!i.volume) return std::optional<Message>();
  json& out = pf.body["volume"];
  out = {{"name", i.volume->name}, {"mount", i.volume->mount}, {"shared", true}, {"placement", "shared"}};
  auto found = store.list({"volumes", {{"tenant_id", i.tenant_id}, {"name", i.volume->name}}, "", 1});
  if (!found) return found.error();
  std::optional<Volume> v;
  if (!found->items.empty())
    if (auto d = decode_record(found->items.front(), decode_volume, "its place is not known"); d) v = *d;
  if (!v || v->placement != VolumePlacement::kNode)
    return std::optional<Message>(Message("instance.preflight.volume_shared").arg("volume", i.volume->name));
  out["shared"] = false;
  out["placement"] = "node";
  out["node"] = nullptr;
  out["copy"] = nullptr;
  if (v->node_id.empty()) return std::optional<Message>();  // on no node yet: created where it first runs
  auto node = store.get("nodes", v->node_id);
  const std::string node_name = node ? node->name : v->node_id;
  pf.volume_node = v->node_id;
  out["node"] = {{"node", v->node_id}, {"name", node_name}};
  const CopyEstimate e = estimate_volume_copy(*v, assumed_mbps);
  out["copy"] = {{"bytes", e.bytes}, {"bytes_measured", e.measured}, {"estimate_seconds", e.seconds},
                 {"rate_mbps", e.rate_mbps}, {"rate_basis", e.rate_basis}, {"last", nullptr}};
  if (v->last_copy) {
    auto name_of = [&](const std::string& id) {
      auto n = store.get("nodes", id);
      return n ? n->name : id;
    };
    out["copy"]["last"] = {{"from", name_of(v->last_copy->from_node)}, {"to", name_of(v->last_copy->to_node)},
                           {"bytes", v->last_copy->bytes}, {"ms", v->last_copy->ms}, {"at", format_rfc3339(v->last_copy->at)}};
  }
  return std::optional<Message>(
      Message("instance.preflight.volume_copy")
          .arg("volume", i.volume->name)
          .arg("node", node_name)
          .arg("bytes", std::to_string(e.bytes))
          .arg("size_basis", Message(e.measured ? "instance.preflight.size_measured" : "instance.preflight.size_provisioned"))
          .arg("seconds", std::to_string(e.seconds))
          .arg("rate", std::to_string(e.rate_mbps))
          .arg("rate_basis", Message(e.rate_basis == "measured" ? "instance.preflight.rate_measured" : "instance.preflight.rate_assumed")));
}

template <class Reader>
Result<Preflight> preflight(Reader& store, const GpuCatalog& catalog, const Instance& i, int64_t assumed_mbps) {
  Preflight pf;
  json& out = pf.body;
  out = {{"instance", i.name},
         {"needs_gpus", i.gpus},
         {"gpu_model", i.gpu_model ? json(*i.gpu_model) : json(nullptr)},
         {"host", nullptr},
         {"host_free", false},
         {"other_nodes_with_room", nullptr},
         {"volume", nullptr}};
  auto volume = preflight_volume(store, i, assumed_mbps, pf);
  if (!volume) return volume.error();
  auto with_volume = [&](Message m) {
    return *volume ? Message("instance.preflight.with_volume").arg("advice", std::move(m)).arg("volume", **volume) : m;
  };
  // A node volume's node out of service (or gone): a start without GPUs, pinned there, is refused
  // (start_stopped), so it is neither offered nor advised.
  std::optional<Message> volume_node_out;
  if (!pf.volume_node.empty()) {
    auto n = store.get("nodes", pf.volume_node);
    if (!n && n.error().code != Code::kNotFound) return n.error();
    if (!n || n->state != "available")
      volume_node_out = Message("instance.preflight.volume_node_out")
                            .arg("node", n ? n->name : pf.volume_node)
                            .arg("state", n ? n->state : "deleted");
  }
  if (i.gpus == 0) {
    out["options"] = volume_node_out ? json::array() : json{"any_host"};
    pf.advice = volume_node_out ? *volume_node_out : Message("instance.preflight.cpu_only");
    put_message(out, "advice", pf.advice);
    return pf;
  }
  auto host = last_host(store, i);
  if (!host) return host.error();
  auto rooms = host_rooms(store);
  if (!rooms) return rooms.error();
  pf.host = *host;
  // Nodes hold the catalog's id; the instance its model as typed (an alias, other capitals).
  const GpuModel* model = catalog.find(i.gpu_model.value_or(""));
  const std::string model_id = model ? model->id : i.gpu_model.value_or("");
  int64_t others = 0;
  for (const auto& [id, h] : *rooms)
    if (id != pf.host && h.gpu_model == model_id && h.state == "available" && h.free >= i.gpus) ++others;
  out["other_nodes_with_room"] = others;
  const std::string need = std::to_string(i.gpus);
  auto it = rooms->find(pf.host);
  if (pf.host.empty() || it == rooms->end()) {  // never ran on GPUs, or its host is gone
    pf.host.clear();
    out["options"] = volume_node_out ? json{"any_host"} : json{"any_host", "cpu_only"};
    pf.advice = Message("instance.preflight.no_host").arg("need", need).arg("others", std::to_string(others));
  } else {
    const HostRoom& h = it->second;
    out["host"] = {{"node", it->first}, {"name", h.name}, {"state", h.state}, {"gpus", h.gpus}, {"free_gpus", h.free}};
    pf.host_free = h.state == "available" && h.free >= i.gpus;
    out["options"] = volume_node_out ? json{"same_host", "any_host"} : json{"same_host", "any_host", "cpu_only"};
    pf.advice = pf.host_free
                    ? Message("instance.preflight.host_free").arg("node", h.name).arg("free", std::to_string(h.free)).arg("need", need)
                    : Message("instance.preflight.host_busy")
                          .arg("node", h.name)
                          .arg("state", h.state)
                          .arg("free", std::to_string(h.free))
                          .arg("need", need)
                          .arg("others", std::to_string(others));
  }
  out["host_free"] = pf.host_free;
  if (!pf.host_free) pf.advice = with_volume(pf.advice);  // where a move would copy, say what
  if (!pf.volume_node.empty() && !pf.host_free)
    pf.advice =
        Message("instance.preflight.with_volume")
            .arg("advice", pf.advice)
            .arg("volume", volume_node_out ? *volume_node_out
                                           : Message("instance.preflight.cpu_only_home")
                                                 .arg("node", out["volume"]["node"]["name"].get<std::string>()));
  put_message(out, "advice", pf.advice);
  return pf;
}

// requested (waiting for GPUs), starting (placed, not yet running), running, stopped (decorate
// makes it stopping while the executor still sees its run: services/instance_stop.h).
const char* instance_state(const std::optional<JobStatus>& st) {
  if (!st) return "stopped";
  switch (st->state) {
    case JobState::kPending:
    case JobState::kPreempted:
      return "requested";
    case JobState::kAdmitted:
      return "starting";
    case JobState::kRunning:
      return "running";
    default:
      return "stopped";
  }
}

// What the instance costs per hour now, before free allowances, in the offer's currency:
// `running`, its running job's GPU (or CPU and memory) time at the price its run is rated at; null
// while it does not run (the offer is chosen when it is placed). `stopped`, its volume's storage at
// the offers that keep it (fees.volume_storage per GB-month of 730 h at its size): paid running or
// not. The total while running is their sum.
json cost_per_hour(App& app, StoreReader& store, const Instance& i, const std::optional<Record>& job, bool running) {
  json out = {{"running", nullptr}, {"stopped", nullptr}, {"currency", nullptr}, {"basis", nullptr}};
  std::optional<Money> storage;
  if (i.volume) {
    auto vols = list_all(store, "volumes", {{"tenant_id", i.tenant_id}, {"name", i.volume->name}});
    auto kept = vols && !vols->empty()
                    ? list_all(store, "volume_storage", {{"tenant_id", i.tenant_id}, {"state", "open"}})
                    : Result<std::vector<Record>>(std::vector<Record>{});
    if (kept)
      for (const Record& k : *kept) {
        auto kv = decode_record(k, decode_kept_volume, "the instance's cost cannot be shown without it");
        if (!kv || kv->volume_id != vols->front().id) continue;
        auto o = store.get("offers", kv->offer_id);
        auto offer = o ? parse_offer(o->body, app.catalog) : Result<Offer>(o.error());
        if (!offer || !offer->fees.volume_storage) continue;
        auto per_hour = offer->fees.volume_storage->per_gb_month.mul_ratio(kv->bytes, int64_t{730} * 1'000'000'000);
        if (!per_hour) continue;
        if (!storage) {
          storage = *per_hour;
        } else if (auto sum = storage->plus(*per_hour)) {  // another offer keeps it too (same currency)
          storage = *sum;
        }
      }
  }
  if (storage) {
    out["stopped"] = storage->amount_string();
    out["currency"] = currency_code(storage->currency());
  }
  if (!running || !job) return out;
  auto runs = list_runs(store, {{"project_id", i.project_id}, {"state", "open"}}, "the instance's cost cannot be shown without it");
  if (!runs) return out;
  for (const StoredRun& sr : *runs) {
    if (sr.run.job_id != job->id || sr.run.offer_id.empty()) continue;
    auto o = store.get("offers", sr.run.offer_id);
    if (!o) return out;
    auto offer = parse_offer(o->body, app.catalog);
    if (!offer) return out;
    std::optional<Money> compute;
    if (sr.run.gpu_milli > 0) {
      auto price = unit_price_of(store, app.catalog, sr.run, *offer, sr.run.offer_id, app.clock.now());  // the price now
      if (!price) return out;
      if (auto m = price->price.mul_ratio(sr.run.gpu_milli, 1000)) compute = *m;
      out["basis"] = price->basis;
    } else if (offer->prices.cpu_core_hour && offer->prices.memory_gib_hour) {  // CPU-only: the run's cores and memory
      auto c = offer->prices.cpu_core_hour->mul_ratio(sr.run.cpu_cores, 1);
      auto m = offer->prices.memory_gib_hour->mul_ratio(sr.run.memory_gib, 1);
      if (c && m)
        if (auto sum = c->plus(*m)) compute = *sum;
      out["basis"] = "cpu_only";
    }
    if (!compute) return out;
    if (storage && storage->currency() == compute->currency())
      if (auto sum = compute->plus(*storage)) compute = *sum;
    out["running"] = compute->amount_string();
    out["currency"] = currency_code(compute->currency());
    return out;
  }
  return out;
}

// How to reach the instance while it runs in a container: {ssh: {host, port, user, command},
// notebook: {host, port, url}}; null otherwise. The host is --instance-host, else the name of the
// node it runs on. The notebook's URL carries its token only for those who may start and stop it.
json access_of(App& app, StoreReader& store, const Instance& i, const Principal& p, const Record& r,
               const std::optional<JobStatus>& st) {
  if (!app.opts.containers || !st || st->state != JobState::kRunning || st->placement.empty()) return nullptr;
  if (!i.ssh_port && !i.notebook_port) return nullptr;
  std::string host = app.opts.instance_host;
  if (host.empty()) {
    auto node = store.get("nodes", st->placement.front().node);
    if (!node) return nullptr;
    host = node->name;
  }
  json a = json::object();
  const std::string port_s = std::to_string(i.ssh_port);
  if (i.ssh_port)
    a["ssh"] = {{"host", host},
                {"port", i.ssh_port},
                {"user", kInstanceLogin},
                {"command", "ssh -p " + port_s + " " + kInstanceLogin + "@" + host}};
  if (i.notebook_port) {
    a["notebook"] = {{"host", host}, {"port", i.notebook_port}, {"url", nullptr}};
    if (in_scope(write_scope(p, ObjectKind::kJob), p, r))
      a["notebook"]["url"] = "http://" + host + ":" + std::to_string(i.notebook_port) + "/?token=" + i.notebook_token;
  }
  return a;
}

// The latest metered utilization of the instance's GPUs while it runs: {percent, at}, the highest of
// its cards' latest readings (as idle auto-stop reads them) in the last 15 minutes; null while it
// does not run, is CPU-only, or has no reading that recent.
json instance_utilization_of(StoreReader& store, const Instance& i, const std::optional<JobStatus>& st, TimeMs now) {
  if (i.gpus == 0 || !st || st->state != JobState::kRunning || st->placement.empty()) return nullptr;
  std::vector<RunCards> cards;
  for (const WorkerPlacement& w : st->placement) cards.push_back({w.node, "", w.gpus});
  auto util = run_utilization(store, cards, std::max(st->updated_at, now - 15 * 60'000), now + 1);
  if (!util || util->empty()) return nullptr;
  return {{"percent", util->back().utilization_pct}, {"at", format_rfc3339(util->back().at)}};
}

void decorate(App& app, StoreReader& store, const Record& read, const Principal& p, json& out) {
  // The instance and its latest job as one write left them: reads are not one snapshot, so a
  // write that changed both (a stop: the job cancelled, want_running false) between reading the
  // instance and its job would show half of it. The instance is read again after its job; when
  // it changed meanwhile, both are read again.
  out.erase("notebook_token");  // shown only inside access.notebook.url, to those who may use it
  Record r = read;
  auto i = decode_record(r, decode_instance, "its state cannot be shown");
  if (!i) return;
  auto job = latest_job(store, *i);
  for (int tries = 0; tries < 3; ++tries) {
    auto again = store.get("instances", r.id);
    if (!again || again->version == r.version) break;
    r = *again;
    out = present(r);
    out.erase("notebook_token");
    i = decode_record(r, decode_instance, "its state cannot be shown");
    if (!i) return;
    job = latest_job(store, *i);
  }
  std::optional<JobStatus> st;
  if (job && *job) {
    auto s = stored_job_status((*job)->body);
    if (s) st = *s;
    out["current_job"] = {{"id", (*job)->id}, {"name", (*job)->name}, {"state", st ? job_state_name(st->state) : "unknown"}};
    if (st) put_message(out["current_job"], "reason", st->reason);
  }
  out["state"] = instance_state(st);
  if (i->volume && out.contains("volume"))  // the data disk's size, as the volume has it now
    if (auto vols = list_all(store, "volumes", {{"tenant_id", i->tenant_id}, {"name", i->volume->name}}); vols && !vols->empty())
      if (auto v = decode_volume(vols->front().body)) out["volume"]["size_gb"] = v->size_gb;
  out.erase("stopping_job");
  out.erase("stopping_since");
  out.erase("stopping_gone_at");
  if (!i->stopping_job.empty() && out["state"] == "stopped") {  // its run is still being stopped
    out["state"] = "stopping";
    out["stopping_since"] = format_rfc3339(i->stopping_since);
  }
  if (i->released_at) {  // kept to be read: nothing runs, is reached or is paid through it
    out["state"] = "released";
    for (const char* k : {"ssh_port", "notebook_port", "stop_reason", "stop_reason_text"}) out.erase(k);
    for (const char* k : {"access", "utilization", "idle_stop_in_force"}) out[k] = nullptr;
    out["cost_per_hour"] = {{"running", nullptr}, {"stopped", nullptr}, {"currency", nullptr}, {"basis", nullptr}};
    if (i->stop_reason) put_message(out, "stop_reason", *i->stop_reason);
    return;
  }
  // The idle auto-stop rule in force: its own, else its tenant's default (null: none).
  out["idle_stop_in_force"] = nullptr;
  if (i->idle_stop) {
    out["idle_stop_in_force"] = idle_stop_json(*i->idle_stop);
    out["idle_stop_in_force"]["source"] = "instance";
  } else if (auto t = store.get("tenants", i->tenant_id)) {
    auto tenant = decode_record(*t, parse_tenant, "its idle rule cannot be shown");
    if (tenant && tenant->instance_idle_stop) {
      out["idle_stop_in_force"] = idle_stop_json(*tenant->instance_idle_stop);
      out["idle_stop_in_force"]["source"] = "tenant";
    }
  }
  out["access"] = access_of(app, store, *i, p, r, st);
  out["utilization"] = instance_utilization_of(store, *i, st, app.clock.now());
  // Stopped on an offer that releases stopped instances: when (docs/resources/instances.md#release).
  if (auto due = release_due(store, app.catalog, *i); due && *due) {
    out["release_at"] = format_rfc3339((*due)->release_at);
    out["release_after_days"] = (*due)->days;
  }
  out["cost_per_hour"] = cost_per_hour(app, store, *i, job && *job ? *job : std::optional<Record>(),
                                       st && st->state == JobState::kRunning);
  if (st && st->state == JobState::kRunning && (i->stop_after_minutes || i->stop_at)) {
    TimeMs stops = i->stop_at.value_or(INT64_MAX);  // the job's time limit, from its start, or the set time
    if (i->stop_after_minutes) stops = std::min(stops, st->updated_at + *i->stop_after_minutes * 60'000);
    out["stops_at"] = format_rfc3339(stops);
    // What it will have cost from now until then at today's running price (none when unknown).
    const json& c = out["cost_per_hour"];
    if (c["running"].is_string() && c["currency"].is_string())
      if (auto cur = parse_currency(c["currency"].get<std::string>()))
        if (auto per_hour = Money::parse(c["running"].get<std::string>(), *cur))
          if (auto until = per_hour->mul_ratio(std::max<TimeMs>(0, stops - app.clock.now()), 3'600'000))
            out["cost_until_stop"] = until->amount_string();
  }
  out.erase("stop_reason");
  out.erase("stop_reason_text");
  if (i->stop_reason && !i->want_running)
    put_message(out, "stop_reason", *i->stop_reason);
  else if (st && is_terminal(st->state))  // it ended by itself (the job failed or finished)
    put_message(out, "stop_reason", st->reason);
}

// Loads the instance `ref` for a write by p inside tx.
Result<std::pair<Record, Instance>> instance_for_write(App& app, const KindSpec& spec, const Principal& p,
                                                       const std::string& ref, StoreTx& tx) {
  auto found = find_visible(app.store, spec, p, ref);
  if (!found) return found.error();
  if (!in_scope(write_scope(p, ObjectKind::kJob), p, *found))
    return Error::make(Code::kForbidden, Message("api.instances.forbidden").arg("role", role_name(p.role)));
  auto cur = tx.get("instances", found->id);
  if (!cur) return cur.error();
  auto i = decode_record(*cur, decode_instance, "it cannot be started or stopped");
  if (!i) return i.error();
  if (auto s = check_not_released(*i); !s) return s.error();
  return std::make_pair(*cur, *i);
}

enum class Act { kStart, kStop, kRestart };
const char* act_name(Act a) { return a == Act::kStart ? "start" : a == Act::kStop ? "stop" : "restart"; }

// Starts the stopped instance i inside tx: back to its last GPU host (auto: only when that host has
// its GPUs free; else refused, before anything is submitted, with what the preflight advises).
Status start_stopped(App& app, const Principal& p, StoreTx& tx, Instance& i, StartOn on) {
  std::string host;
  if (i.gpus > 0 && (on == StartOn::kAuto || on == StartOn::kSameHost)) {
    auto pf = preflight(tx, app.catalog, i, app.opts.volume_copy_mbps);
    if (!pf) return pf.error();
    if (on == StartOn::kSameHost && pf->host.empty())
      return Error::invalid("on", Message("api.instances.no_host").arg("name", i.name));
    if (on == StartOn::kAuto && !pf->host.empty() && !pf->host_free)
      return Error::make(Code::kConflict, Message("api.instances.host_busy").arg("name", i.name).arg("why", pf->advice));
    host = pf->host;
  }
  if (i.gpus == 0 && on == StartOn::kSameHost)  // it never runs on GPUs: no host to return to
    return Error::invalid("on", Message("api.instances.no_host").arg("name", i.name));
  if (on == StartOn::kCpuOnly || i.gpus == 0) {  // without GPUs: where a node volume is, so nothing is copied
    Preflight vp;
    vp.body = json::object();
    if (auto v = preflight_volume(tx, i, app.opts.volume_copy_mbps, vp); !v) return v.error();
    host = vp.volume_node;
    // Its data disk's node out of service, or gone: a start pinned there would wait for ever (or
    // fail on a constraint the user never set). Said now, with what to do.
    if (!host.empty()) {
      auto node = tx.get("nodes", host);
      if (!node && node.error().code != Code::kNotFound) return node.error();
      const std::string state = node ? node->state : "deleted";
      if (state != "available")
        return Error::make(Code::kConflict, Message("api.instances.volume_node_out")
                                                .arg("name", i.name)
                                                .arg("volume", i.volume ? i.volume->name : "")
                                                .arg("node", node ? node->name : host)
                                                .arg("state", state));
    }
  }
  if (on == StartOn::kCpuOnly && i.gpus == 0) on = StartOn::kAnyHost;  // it is CPU-only anyway
  return start_in(app, p, tx, i, on, host);
}

// start, stop, restart (a stop and a start in one write). A start while the previous run is
// still stopping is accepted: the executor submits the new run once the old one has gone
// (services/instance_stop.h), so the two never hold the ports or the volumes at once.
void act(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res, const Principal& p,
         Act what) {
  const std::string who = p.user_id;
  StartOn on = StartOn::kAuto;
  if (what != Act::kStop && !req.body.empty()) {  // {"on": …}; no body is {}
    auto body = parse_body(req);
    auto parsed = body ? parse_start_request(*body) : Result<StartOn>(body.error());
    if (!parsed) return send_problem(res, parsed.error(), req.path);
    on = *parsed;
  }
  Record out;
  Status st = app.loop.run([&](StoreTx& tx) -> Status {
    auto loaded = instance_for_write(app, spec, p, req.matches[1], tx);
    if (!loaded) return loaded.error();
    auto& [cur, i] = *loaded;
    const TimeMs now = app.clock.now();
    auto job = latest_job(tx, i);
    if (!job) return job.error();
    std::optional<JobStatus> jst;
    if (*job)
      if (auto s = stored_job_status((**job).body); s) jst = *s;
    const bool active = jst && !is_terminal(jst->state);
    if (what == Act::kStart && active)
      return Error::make(Code::kConflict, Message("api.instances.already_started").arg("name", i.name));
    if (what != Act::kStart && !active)
      return Error::make(Code::kConflict, Message("api.instances.already_stopped").arg("name", i.name));
    if (what != Act::kStart) {
      auto u = tx.get("users", who);
      const std::string user = u && !u->name.empty() ? u->name : who;
      Message why = Message(what == Act::kRestart ? "instance.restarted_by" : "instance.stopped_by").arg("user", user);
      if (auto s = stop_instance_job(tx, i, why, who, now, runs_linger(app.opts.executor)); !s) return s;
    }
    if (what != Act::kStop)
      if (auto s = start_stopped(app, p, tx, i, on); !s) return s;
    auto r = write_instance(tx, cur, i, now);
    if (!r) return r.error();
    if (auto s = tx.append_audit({now, who, act_name(what), "instances", r->id, r->name}); !s) return s;
    out = std::move(*r);
    return ok_status();
  });
  if (!st) return send_problem(res, st.error(), req.path);
  app.metrics.count_write("instances", act_name(what));
  json body = present(out);
  decorate(app, app.store, out, p, body);
  send_json(res, 200, body);
}

// GET /instances/{ref}/preflight: what a start would meet, for the instance's readers.
void preflight_instance(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res,
                        const Principal& p) {
  auto r = find_visible(app.store, spec, p, req.matches[1]);
  if (!r) return send_problem(res, r.error(), req.path);
  auto i = decode_record(*r, decode_instance, "its restart cannot be checked");
  if (!i) return send_problem(res, i.error(), req.path);
  if (auto s = check_not_released(*i); !s) return send_problem(res, s.error(), req.path);
  auto pf = preflight(app.store, app.catalog, *i, app.opts.volume_copy_mbps);
  if (!pf) return send_problem(res, pf.error(), req.path);
  send_json(res, 200, pf->body);
}

void start_instance(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res,
                    const Principal& p) {
  act(app, spec, req, res, p, Act::kStart);
}
void stop_instance(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res,
                   const Principal& p) {
  act(app, spec, req, res, p, Act::kStop);
}
void restart_instance(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res,
                      const Principal& p) {
  act(app, spec, req, res, p, Act::kRestart);
}

}  // namespace

void register_instance_routes(App& app, Router& srv) {
  KindSpec spec;
  spec.kind = "instances";
  spec.id_prefix = "ins";
  spec.object_kind = ObjectKind::kJob;
  spec.updatable = false;
  spec.filters = {{"tenant", "tenant_id"}, {"project", "project_id"}, {"name", "name"}};
  spec.build = [&app](const json& body, const Principal& p, StoreTx& tx, const Record*) {
    return build_instance(app, body, p, tx);
  };
  spec.decorate = [&app](StoreReader& store, const Record& r, const Principal& p, json& out) {
    decorate(app, store, r, p, out);
  };
  // Release: a running instance is stopped first; it is kept as `released` (read-only, holding no
  // name, and no ports or volumes once its last run has gone) for kReleasedKeptDays; its jobs stay (their runs are billed), and its
  // volume is the tenant's to keep or delete.
  spec.soft_delete = [&app](const Principal& p, Record& r, StoreTx& tx) -> Status {
    auto i = decode_record(r, decode_instance, "it cannot be released");
    if (!i) return i.error();
    if (auto s = check_not_released(*i); !s) return s;
    auto u = tx.get("users", p.user_id);
    const Message why = Message("instance.released_by").arg("user", u && !u->name.empty() ? u->name : p.user_id);
    const TimeMs now = app.clock.now();
    if (auto s = stop_instance_job(tx, *i, why, p.user_id, now, runs_linger(app.opts.executor)); !s) return s;
    mark_released(*i, why, now);
    put_instance(r, *i);
    return ok_status();
  };
  register_crud(app, srv, spec);
  item_route(app, srv, "POST", "instances", "start", start_instance);
  item_route(app, srv, "POST", "instances", "stop", stop_instance);
  item_route(app, srv, "POST", "instances", "restart", restart_instance);
  item_route(app, srv, "GET", "instances", "preflight", preflight_instance);
  register_instance_volume_routes(app, srv);
}

}  // namespace gpurent
