// /api/v1/acceptance-runs: what gpurent-accept measured on a node (docs/acceptance.md), recorded
// with its provenance and turned into measurements. POST takes the report itself (`report`) or the
// job that ran gpurent-accept (`job`: the report is read from the newest log of the job's runs,
// and the node and GPUs from the run). Every figure is derived here from the tools' raw output
// (meter/acceptance.h); the report's GPUs are matched to the node's cards by UUID (or, without a
// UUID, by the job's placement or the index). The run is kept whole, raw outputs included, and is
// append-only like the measurements it makes: a card's dense FP16 GEMM becomes a `fp16_tflops`
// measurement, the all-reduce's bus bandwidth a `nccl_busbw` over the stage's window, both with
// method `acceptance`, the raw output as evidence and the run's id in `acceptance_run`. Stages
// from the simulated GPU source make none unless the server runs with
// --acceptance-count-simulated. Who may record: as measurements (operators, the node's supplier;
// a tenant's admin about a node its jobs ran on, whose measurements are then disputes).
// With `contract`, the run is judged against that contract's floors (its clauses, copied from its
// first offer's template at signing): `gates` per card and for the all-reduce, and a `verdict`.
// GET …/{id}/report is the run as a Markdown report in English or 简体中文 (?lang=zh).
#include <algorithm>
#include <map>

#include "core/ids.h"
#include "meter/acceptance.h"
#include "model/contract.h"
#include "model/job_run.h"
#include "model/measurement.h"
#include "model/node.h"
#include "model/offer.h"
#include "server/api/resources.h"
#include "server/http/http_util.h"
#include "server/services/allocation_ledger.h"
#include "server/services/record_faults.h"

namespace gpurent {

Result<std::string> newest_job_log_tail(const std::string& dir, const std::string& job_id, int64_t max_bytes);

// A contract's floors, as billing reads them: its clauses (one stored without them, by a server
// from before they were copied in at signing: its first offer's template). Also used by poc_runs.cc.
Result<ContractTemplate> contract_floors(App& app, StoreTx& tx, const Contract& k) {
  if (k.clauses) return *k.clauses;
  if (k.offer_ids.empty()) return ContractTemplate{};
  auto rec = tx.get("offers", k.offer_ids.front());
  if (!rec) return rec.error();
  auto o = decode_record(*rec, [&](const json& b) { return parse_offer(b, app.catalog); }, "its contract's floors cannot be read");
  if (!o) return o.error();
  return o->contract_template;
}

namespace {

constexpr int64_t kLogWindowBytes = 4 * 1024 * 1024;  // the report is the log's last line: read this much

// How far a report's stage may lie outside its job's run (the node's clock against the server's).
constexpr TimeMs kStageClockSlackMs = 60'000;

// The job's newest run: its one node's cards, and (`window`) when it ran: from running_at to its
// end, or `now` while it runs.
Result<RunCards> job_cards(StoreTx& tx, const Record& job, TimeMs now, std::pair<TimeMs, TimeMs>* window) {
  auto found = newest_run_of(tx, job);  // not the project's whole history (it runs in the writer)
  if (!found) return found.error();
  std::optional<JobRun>& newest = *found;
  if (!newest) return Error::invalid("job", Message("api.acceptance_runs.job_never_ran").arg("job", job.name));
  if (newest->placement.size() != 1)
    return Error::invalid("job", Message("api.acceptance_runs.job_many_nodes").arg("job", job.name));
  *window = {newest->running_at.value_or(newest->requested_at.value_or(0)), newest->ended_at.value_or(now)};
  return newest->placement.front();
}

struct MappedGpu {
  int64_t card = 0;  // the node's card index
  int64_t reported = 0;
  std::string uuid, name;
};

// The report's GPUs as the node's cards: by UUID when the report and the node know it, else by
// the job's placement (a container numbers its GPUs from 0), else by index.
Result<std::vector<MappedGpu>> map_gpus(const AcceptanceReport& rep, const std::vector<StoredCard>& cards,
                                        const std::optional<RunCards>& run, const std::string& node_name,
                                        const std::string& prefix) {
  std::vector<MappedGpu> out;
  for (size_t i = 0; i < rep.gpus.size(); ++i) {
    const AcceptanceGpu& g = rep.gpus[i];
    const std::string field = prefix + "gpus[" + std::to_string(i) + "]";
    std::optional<int64_t> card;
    bool node_knows_uuids = false;
    for (const StoredCard& c : cards) {
      node_knows_uuids |= c.uuid.has_value();
      if (!g.uuid.empty() && c.uuid && *c.uuid == g.uuid) card = c.index;
    }
    if (!card && !g.uuid.empty() && node_knows_uuids)
      return Error::invalid(field + ".uuid", Message("api.acceptance_runs.uuid_not_on_node").arg("uuid", g.uuid).arg("node", node_name));
    if (!card && run) {
      if (g.index >= static_cast<int64_t>(run->gpus.size()))
        return Error::invalid(field + ".index", Message("api.acceptance_runs.index_not_in_run")
                                                    .arg("index", std::to_string(g.index))
                                                    .arg("gpus", std::to_string(run->gpus.size())));
      card = run->gpus[static_cast<size_t>(g.index)];
    }
    if (!card) card = g.index;
    if (*card >= static_cast<int64_t>(cards.size()))
      return Error::invalid(field + ".index", Message("api.measurements.gpu_index")
                                                  .arg("node", node_name)
                                                  .arg("gpus", std::to_string(cards.size()))
                                                  .arg("last", std::to_string(static_cast<int64_t>(cards.size()) - 1)));
    if (run && std::find(run->gpus.begin(), run->gpus.end(), *card) == run->gpus.end())
      return Error::invalid(field, Message("api.acceptance_runs.card_not_in_run").arg("card", std::to_string(*card)));
    for (const MappedGpu& m : out)
      if (m.card == *card) return Error::invalid(field, Message("api.acceptance_runs.card_twice").arg("card", std::to_string(*card)));
    out.push_back({*card, g.index, g.uuid, g.name});
  }
  return out;
}

int64_t card_of(const std::vector<MappedGpu>& gpus, int64_t reported) {
  for (const MappedGpu& g : gpus)
    if (g.reported == reported) return g.card;
  return -1;  // parse_acceptance_report checked every figure names a listed GPU
}

json stage_figures(const AcceptanceStage& s, const std::vector<MappedGpu>& gpus) {
  switch (s.kind) {
    case AcceptanceStageKind::kGpu: {
      json gemm = json::array(), copies = json::array();
      for (const GemmFigure& g : s.gpu.gemm)
        gemm.push_back({{"card", card_of(gpus, g.gpu)}, {"dtype", g.dtype}, {"tflops", fixed_text(g.tflops_x10, 1)}});
      for (const CopyFigure& c : s.gpu.copies)
        copies.push_back({{"card", card_of(gpus, c.gpu)}, {"direction", c.direction}, {"gbps", fixed_text(c.gbps_x100, 2)}});
      return {{"gemm", gemm}, {"copies", copies}};
    }
    case AcceptanceStageKind::kNccl: {
      json j = {{"busbw_gbps", fixed_text(s.nccl.peak_busbw_x100, 2)},
                {"size_bytes", s.nccl.peak_size_bytes},
                {"ranks", s.nccl.ranks},
                {"wrong", s.nccl.wrong}};
      if (s.nccl.avg_busbw_x100) j["avg_busbw_gbps"] = fixed_text(*s.nccl.avg_busbw_x100, 2);
      if (s.nccl.hosts.size() > 1) j["hosts"] = s.nccl.hosts;
      return j;
    }
    case AcceptanceStageKind::kStorage:
      return {{"read_mbps", s.storage.read_mbps}, {"write_mbps", s.storage.write_mbps},
              {"read_iops", s.storage.read_iops}, {"write_iops", s.storage.write_iops}};
    case AcceptanceStageKind::kNetwork:
      return {{"received_mbps", s.network.received_mbps}, {"sent_mbps", s.network.sent_mbps},
              {"retransmits", s.network.retransmits}};
  }
  return json::object();
}

// The lines of a gpu stage's output about one reported GPU (the evidence of its measurement).
std::string gpu_lines(const std::string& output, int64_t reported) {
  std::string out;
  size_t at = 0;
  while (at < output.size()) {
    size_t nl = output.find('\n', at);
    if (nl == std::string::npos) nl = output.size();
    const std::string line = output.substr(at, nl - at);
    json j = json::parse(line, nullptr, false);
    const json* gpu = j.is_object() && j.contains("gpu") ? &j["gpu"] : nullptr;
    if (gpu && gpu->is_number_integer() && gpu->get<int64_t>() == reported &&
        out.size() + line.size() < kMaxEvidenceBytes)
      out += line + "\n";
    at = nl + 1;
  }
  return out;
}

// The output's end (the table's end), from a line start so that no UTF-8 character is cut.
std::string bounded_evidence(const std::string& s) {
  if (s.size() <= kMaxEvidenceBytes) return s;
  const size_t nl = s.find('\n', s.size() - kMaxEvidenceBytes);
  return nl == std::string::npos ? std::string() : s.substr(nl + 1);
}

// "across 3 nodes (a, b, c)", the list cut after a few hosts so that a note stays short.
std::string across_hosts(const std::vector<std::string>& hosts) {
  if (hosts.size() < 2) return "";
  constexpr size_t kNamed = 4;
  std::string out = " across " + std::to_string(hosts.size()) + " nodes (";
  for (size_t i = 0; i < hosts.size() && i < kNamed; ++i) out += (i ? ", " : "") + hosts[i].substr(0, 63);
  if (hosts.size() > kNamed) out += ", … " + std::to_string(hosts.size() - kNamed) + " more";
  return out + ")";
}

// A node an all-reduce across nodes also ran on (its ranks' hosts beyond the run's node).
struct PeerNode {
  std::string name, id;
};

std::vector<PeerNode> peers_of(const json& run_body) {
  std::vector<PeerNode> out;
  for (const json& n : run_body.value("nccl_nodes", json::array()))
    out.push_back({n.at("node").get<std::string>(), n.at("node_id").get<std::string>()});
  return out;
}

// The other nodes an all-reduce across nodes ran on: its ranks' hosts beyond the run's node (its
// name or the report's hostname), each a node of the same supplier by name — and, for a tenant's
// admin, one the tenant rented. They get the same nccl_busbw measurement. A host that is not such a
// node is a 422 naming the stage's output.
Result<std::vector<PeerNode>> nccl_peer_nodes(StoreTx& tx, const Principal& p, const AcceptanceReport& rep,
                                              const Record& node, const std::string& prefix, const Record* job) {
  std::vector<PeerNode> out;
  for (size_t i = 0; i < rep.stages.size(); ++i) {
    const AcceptanceStage& s = rep.stages[i];
    if (s.kind != AcceptanceStageKind::kNccl || s.status != "ok" || s.nccl.hosts.size() < 2) continue;
    const std::string field = prefix + "stages[" + std::to_string(i) + "].output";
    for (const std::string& host : s.nccl.hosts) {
      if (host == node.name || host == rep.hostname) continue;
      if (job)  // the job ran on this one node: other hosts are the job's word only
        return Error::invalid(field, Message("api.acceptance_runs.nccl_host_not_the_jobs")
                                         .arg("host", host)
                                         .arg("job", job->name)
                                         .arg("node", node.name));
      auto peer = resolve_ref(tx, "nodes", host, {{"supplier_id", node.supplier_id}}, field);
      if (!peer && peer.error().code != Code::kInvalid && peer.error().code != Code::kNotFound) return peer.error();
      if (!peer || peer->supplier_id != node.supplier_id || looks_like_id(host))
        return Error::invalid(field, Message("api.acceptance_runs.nccl_host_unknown").arg("host", host).arg("node", node.name));
      if (!p.tenant_id.empty()) {
        auto used = tenant_used_node(tx, p.tenant_id, peer->id);
        if (!used) return used.error();
        if (!*used) return Error::invalid(field, Message("api.measurements.not_your_node").arg("node", peer->name));
      }
      if (std::none_of(out.begin(), out.end(), [&](const PeerNode& n) { return n.id == peer->id; }))
        out.push_back({peer->name, peer->id});
    }
  }
  return out;
}

// The measurements a run makes, in a fixed order (build assigns their ids, after_create stores
// them in the same order).
std::vector<Measurement> plan_measurements(const AcceptanceReport& rep, const std::vector<MappedGpu>& gpus,
                                           const std::string& node_name, const std::vector<PeerNode>& peers,
                                           bool count_simulated) {
  std::vector<Measurement> out;
  for (const AcceptanceStage& s : rep.stages) {
    if (s.status != "ok" || (s.simulated && !count_simulated)) continue;
    const std::string tool = s.tool + (s.tool_version.empty() ? "" : " " + s.tool_version);
    if (s.kind == AcceptanceStageKind::kGpu) {
      std::vector<int64_t> done;
      for (const GemmFigure& g : s.gpu.gemm) {
        if (g.dtype != "fp16" || std::find(done.begin(), done.end(), g.gpu) != done.end()) continue;
        done.push_back(g.gpu);
        Measurement m;
        m.kind = MeasurementKind::kFp16Tflops;
        m.node = node_name;
        m.gpu = card_of(gpus, g.gpu);
        m.at = s.finished_at;
        m.tflops_x10 = g.tflops_x10;
        m.method = MeasurementMethod::kAcceptance;
        m.note = "dense FP16 GEMM, " + tool + (g.uuid.empty() ? "" : ", " + g.uuid) + (s.simulated ? " (simulated)" : "");
        m.evidence = gpu_lines(s.output, g.gpu);
        out.push_back(std::move(m));
      }
    } else if (s.kind == AcceptanceStageKind::kNccl) {
      Measurement m;
      m.kind = MeasurementKind::kNcclBusbw;
      m.node = node_name;
      m.from = s.started_at;
      m.to = std::max(s.finished_at, s.started_at + 1000);  // a window of at least a second
      m.busbw_gbps = s.nccl.peak_busbw_x100 / 100;  // whole GB/s, rounded down: never above what was measured
      m.method = MeasurementMethod::kAcceptance;
      const std::string across = across_hosts(s.nccl.hosts);
      m.note = "all-reduce bus bandwidth at " + std::to_string(s.nccl.peak_size_bytes) + " bytes over " +
               std::to_string(s.nccl.ranks) + " ranks" + across + ", " + tool + (s.simulated ? " (simulated)" : "");
      m.evidence = bounded_evidence(s.output);
      out.push_back(m);
      for (const PeerNode& peer : peers) {  // the same figure is each node's: their fabric was measured
        m.node = peer.name;
        m.node_id = peer.id;
        out.push_back(m);
      }
    }
  }
  return out;
}

// Each floor against what the run measured: each card the run was to measure (the job's cards, else
// every card of the node) by its FP16 GEMM against min_fp16_tflops, the all-reduce (rounded down to
// whole GB/s, as its measurement) against min_nccl_busbw_gbps. A card or stage that measured
// nothing is "missing". Verdict: fail when a gate failed, incomplete when one is missing, pass when
// all passed, no_gates when the contract sets no floor.
json judge_gates(const AcceptanceReport& rep, const std::vector<MappedGpu>& gpus, const std::vector<int64_t>& cards,
                 const ContractTemplate& c, std::string* verdict) {
  json gates = json::array();
  bool failed = false, missing = false;
  const AcceptanceStage* gpu = nullptr;
  const AcceptanceStage* nccl = nullptr;
  for (const AcceptanceStage& s : rep.stages) {
    if (s.status != "ok") continue;
    if (s.kind == AcceptanceStageKind::kGpu) gpu = &s;
    if (s.kind == AcceptanceStageKind::kNccl) nccl = &s;
  }
  if (c.min_fp16_tflops_x10) {
    std::map<int64_t, const GemmFigure*> fp16;  // card -> its first FP16 figure (as its measurement)
    if (gpu)
      for (const GemmFigure& g : gpu->gpu.gemm)
        if (g.dtype == "fp16") fp16.emplace(card_of(gpus, g.gpu), &g);
    const std::string floor = fixed_text(*c.min_fp16_tflops_x10, 1);
    for (int64_t card : cards) {
      auto it = fp16.find(card);
      if (it == fp16.end()) {
        missing = true;
        gates.push_back({{"clause", "min_fp16_tflops"}, {"card", card}, {"floor", floor}, {"status", "missing"}});
        continue;
      }
      const bool ok = it->second->tflops_x10 >= *c.min_fp16_tflops_x10;
      failed |= !ok;
      gates.push_back({{"clause", "min_fp16_tflops"}, {"card", card}, {"floor", floor},
                       {"measured", fixed_text(it->second->tflops_x10, 1)}, {"status", ok ? "pass" : "fail"},
                       {"simulated", gpu->simulated}});
    }
  }
  if (c.min_nccl_busbw_gbps) {
    if (nccl) {
      const int64_t whole = nccl->nccl.peak_busbw_x100 / 100;
      const bool ok = whole >= *c.min_nccl_busbw_gbps;
      failed |= !ok;
      gates.push_back({{"clause", "min_nccl_busbw_gbps"}, {"floor", std::to_string(*c.min_nccl_busbw_gbps)},
                       {"measured", std::to_string(whole)}, {"status", ok ? "pass" : "fail"}, {"simulated", nccl->simulated}});
    } else {
      missing = true;
      gates.push_back({{"clause", "min_nccl_busbw_gbps"}, {"floor", std::to_string(*c.min_nccl_busbw_gbps)}, {"status", "missing"}});
    }
  }
  *verdict = gates.empty() ? "no_gates" : failed ? "fail" : missing ? "incomplete" : "pass";
  return gates;
}

// The parsed report and where it came from, rebuilt from a stored run by after_create.
struct RunSource {
  AcceptanceReport report;
  std::vector<MappedGpu> gpus;
};

// A job's log tail, read before the writer's transaction (prepare_create): build_run takes it when
// it resolves the same job, else reads the log itself.
struct PreparedLog {
  std::string job_id;
  Result<std::string> log = Error::make(Code::kNotFound, "not read");
};

// The log of the job `body` names, read off the single writer (4 MiB at most, and the output
// folder listed: doing it inside the transaction held every other write that long). Nothing when
// the job is not found here: build_run decides what is answered, with every check. A supplier's
// job is read only when one of its runs was on the supplier's nodes (no probing of tenants' jobs:
// a job it did not host answers alike whether it exists or not, its log unread).
std::any prepare_run(App& app, const json& body, const Principal& p) {
  if (!body.is_object() || !body.contains("job") || !body["job"].is_string()) return {};
  const std::string ref = body["job"].get<std::string>();
  std::optional<Record> job;
  if (looks_like_id(ref)) {
    if (auto j = app.store.get("jobs", ref)) job = std::move(*j);
  } else {  // a tenant's own job by name; for others, the one job of that name (at most one a tenant)
    std::map<std::string, std::string> eq = {{"name", ref}};
    if (!p.tenant_id.empty()) eq["tenant_id"] = p.tenant_id;
    if (auto js = list_all(app.store, "jobs", eq); js && js->size() == 1) job = std::move(js->front());
  }
  if (!job || (!p.tenant_id.empty() && job->tenant_id != p.tenant_id)) return {};
  if (!p.supplier_id.empty() && !p.is_operator()) {
    auto runs = list_all(app.store, "allocations", {{"project_id", job->project_id}, {"supplier_id", p.supplier_id}});
    if (!runs || std::none_of(runs->begin(), runs->end(), [&](const Record& r) {
          const auto it = r.body.is_object() ? r.body.find("job_id") : r.body.end();
          return it != r.body.end() && *it == job->id;
        }))
      return {};
  }
  return PreparedLog{job->id, newest_job_log_tail(app.opts.slurm_output_dir, job->id, kLogWindowBytes)};
}

Result<Built> build_run(App& app, const json& body, const Principal& p, StoreTx& tx, const std::any& prepared) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  const std::optional<std::string> job_ref =
      f.opt_str("job", {.max_len = 63, .pattern = kRefPattern, .pattern_help = kRefHelp});
  const json* report_doc = f.raw("report");
  const std::string note = f.opt_str("note", {.min_len = 0, .max_len = 1024}).value_or("");
  const std::optional<std::string> contract_ref =
      f.opt_str("contract", {.max_len = 63, .pattern = kRefPattern, .pattern_help = kRefHelp});
  f.finish();
  if (!errs.empty()) return errs.to_error();
  if (job_ref.has_value() == (report_doc != nullptr))
    return Error::invalid("report", Message("api.acceptance_runs.job_or_report"));

  json report_json;
  std::optional<Record> job;
  std::optional<RunCards> run;
  std::pair<TimeMs, TimeMs> run_window{0, 0};
  std::string prefix = "report.";
  if (job_ref) {
    std::map<std::string, std::string> scope;
    if (!p.tenant_id.empty()) scope["tenant_id"] = p.tenant_id;
    const Error not_found = Error::invalid("job", Message("api.resources.not_found").arg("kind", "jobs").arg("ref", *job_ref));
    // A supplier names only a job that ran on one of its nodes; any other answers as a job that
    // does not exist, before its runs or its log are read (no probing of tenants' jobs).
    const bool supplier = !p.supplier_id.empty() && !p.is_operator();
    auto j = resolve_ref(tx, "jobs", *job_ref, scope, "job");
    if (!j) return supplier ? not_found : j.error();
    if (!p.tenant_id.empty() && j->tenant_id != p.tenant_id) return not_found;
    job = *j;
    auto cards = job_cards(tx, *job, app.clock.now(), &run_window);
    if (!cards) return supplier ? not_found : cards.error();
    if (supplier) {
      auto ran_on = tx.get("nodes", cards->node_id);
      if (!ran_on || ran_on->supplier_id != p.supplier_id) return not_found;
    }
    run = *cards;
    const auto* pre = std::any_cast<PreparedLog>(&prepared);
    auto log = pre && pre->job_id == job->id ? pre->log
                                             : newest_job_log_tail(app.opts.slurm_output_dir, job->id, kLogWindowBytes);
    if (!log && log.error().code != Code::kNotFound) return log.error();
    auto text = log ? find_report_in_log(*log) : std::nullopt;
    if (!text) return Error::invalid("job", Message("api.acceptance_runs.no_report_in_log").arg("job", job->name));
    report_json = json::parse(*text, nullptr, false);
    if (report_json.is_discarded())
      return Error::invalid("job", Message("api.acceptance_runs.report_not_json").arg("job", job->name));
    prefix = "job.report.";
  } else {
    report_json = *report_doc;
  }
  auto rep = parse_acceptance_report(report_json);
  if (!rep) {
    Error e = rep.error();
    for (FieldError& fe : e.fields) fe.field = prefix.substr(0, prefix.size() - 1) + (fe.field.empty() ? "" : "." + fe.field);
    e.message = prefix + e.message;
    return e;
  }
  auto node = resolve_ref(tx, "nodes", rep->node, {}, prefix + "node");
  if (!node) return node.error();
  if (run)  // what the job printed is its own word: a stage dated outside its run measured nothing of it
    for (size_t i = 0; i < rep->stages.size(); ++i) {
      const AcceptanceStage& s = rep->stages[i];
      const std::string field = prefix + "stages[" + std::to_string(i) + "].";
      const bool early = s.started_at < run_window.first - kStageClockSlackMs;
      if (early || s.finished_at > run_window.second + kStageClockSlackMs)
        return Error::invalid(field + (early ? "started_at" : "finished_at"),
                              Message("api.acceptance_runs.stage_outside_run")
                                  .arg("job", job->name)
                                  .arg("from", format_rfc3339(run_window.first))
                                  .arg("to", format_rfc3339(run_window.second)));
    }
  if (run && run->node_id != node->id)
    return Error::invalid(prefix + "node", Message("api.acceptance_runs.not_the_jobs_node")
                                               .arg("node", rep->node)
                                               .arg("job", job->name)
                                               .arg("ran_on", run->node));
  auto cards = decode_record(*node, stored_node_cards, "no acceptance run can be recorded on it");
  if (!cards) return cards.error();
  auto gpus = map_gpus(*rep, *cards, run, node->name, prefix);
  if (!gpus) return gpus.error();
  json gates;
  std::string verdict;
  std::optional<Record> contract;
  if (contract_ref) {
    std::map<std::string, std::string> scope;
    if (!p.tenant_id.empty()) scope["tenant_id"] = p.tenant_id;
    auto kr = resolve_ref(tx, "contracts", *contract_ref, scope, "contract");
    if (!kr) return kr.error();
    if ((!p.tenant_id.empty() && kr->tenant_id != p.tenant_id) || kr->supplier_id != node->supplier_id)
      return Error::invalid("contract", Message("api.acceptance_runs.contract_other_supplier")
                                            .arg("contract", kr->name)
                                            .arg("node", node->name));
    auto k = decode_record(*kr, decode_contract, "no acceptance run can be judged against it");
    if (!k) return k.error();
    auto floors = contract_floors(app, tx, *k);
    if (!floors) return floors.error();
    std::vector<int64_t> measured_cards;  // the job's, else all the node's
    if (run)
      measured_cards = run->gpus;
    else
      for (const StoredCard& sc : *cards) measured_cards.push_back(sc.index);
    gates = judge_gates(*rep, *gpus, measured_cards, *floors, &verdict);
    contract = *kr;
  }
  MeasurementStatus status = MeasurementStatus::kRecorded;
  if (!p.tenant_id.empty()) {  // a tenant's admin: about hardware the tenant rented, as disputes
    auto used = tenant_used_node(tx, p.tenant_id, node->id);
    if (!used) return used.error();
    if (!*used) return Error::invalid(prefix + "node", Message("api.measurements.not_your_node").arg("node", node->name));
    status = MeasurementStatus::kDisputed;
  }

  auto peers = nccl_peer_nodes(tx, p, *rep, *node, prefix, job ? &*job : nullptr);
  if (!peers) return peers.error();

  json stages = json::array();
  bool simulated = false;
  for (const AcceptanceStage& s : rep->stages) {
    json st = {{"stage", enum_name(kAcceptanceStageNames, s.kind)},
               {"tool", s.tool},
               {"tool_version", s.tool_version},
               {"status", s.status},
               {"simulated", s.simulated},
               {"started_at", format_rfc3339(s.started_at)},
               {"finished_at", format_rfc3339(s.finished_at)},
               {"output", s.output}};
    if (!s.reason.empty()) st["reason"] = s.reason;
    if (!s.peer.empty()) st["peer"] = s.peer;
    if (s.status == "ok") st["figures"] = stage_figures(s, *gpus);
    simulated |= s.simulated && s.status == "ok";
    stages.push_back(std::move(st));
  }
  json gpu_list = json::array();
  for (const MappedGpu& g : *gpus) {
    json j = {{"card", g.card}, {"reported_index", g.reported}, {"name", g.name}};
    if (!g.uuid.empty()) j["uuid"] = g.uuid;
    gpu_list.push_back(std::move(j));
  }
  const auto planned = plan_measurements(*rep, *gpus, node->name, *peers, app.opts.acceptance_count_simulated);
  // Each as every reader will decode it: a figure no measurement can hold is refused here, not
  // stored to break the invoices, scores and dashboards that read measurements.
  for (const Measurement& m : planned)
    if (auto back = parse_measurement(to_json(m)); !back)
      return Error::invalid(prefix + "stages", Message("api.acceptance_runs.unrecordable")
                                                   .arg("kind", enum_name(kMeasurementKindNames, m.kind))
                                                   .arg("why", back.error().message));
  json ids = json::array();
  for (size_t i = 0; i < planned.size(); ++i) ids.push_back(new_id("msr"));
  json out = {{"node", node->name},
              {"node_id", node->id},
              {"hostname", rep->hostname},
              {"tool", "gpurent-accept"},
              {"tool_version", rep->tool_version},
              {"started_at", format_rfc3339(rep->started_at)},
              {"finished_at", format_rfc3339(rep->finished_at)},
              {"gpus", gpu_list},
              {"stages", stages},
              {"simulated", simulated},
              {"simulated_counted", simulated && app.opts.acceptance_count_simulated},
              {"measurements", ids},
              {"status", enum_name(kMeasurementStatusNames, status)},
              {"recorded_by", p.user_id},
              {"note", note},
              {"report", report_json}};
  if (!peers->empty()) {
    json list = json::array();
    for (const PeerNode& peer : *peers) list.push_back({{"node", peer.name}, {"node_id", peer.id}});
    out["nccl_nodes"] = std::move(list);
  }
  if (job) {
    out["job"] = job->name;
    out["job_id"] = job->id;
  }
  if (contract) {
    out["contract"] = contract->name;
    out["contract_id"] = contract->id;
    out["gates"] = gates;
    out["verdict"] = verdict;
  }
  if (!p.tenant_id.empty()) out["tenant_id"] = p.tenant_id;
  IndexCols idx;
  idx.state = enum_name(kMeasurementStatusNames, status);
  idx.supplier_id = node->supplier_id;
  idx.tenant_id = p.tenant_id;
  idx.region = node->region;
  idx.gpu_model = node->gpu_model;
  return Built{std::move(out), idx};
}

// Stores the measurements build planned, under the ids it gave them.
Status store_measurements(const Principal& p, const Record& run, StoreTx& tx) {
  auto rep = parse_acceptance_report(run.body.at("report"));
  if (!rep) return rep.error();
  std::vector<MappedGpu> gpus;
  for (const json& g : run.body.at("gpus"))
    gpus.push_back({g.at("card").get<int64_t>(), g.at("reported_index").get<int64_t>(), g.value("uuid", ""), ""});
  // As build planned them: simulated stages counted only when the run says they were.
  const auto planned = plan_measurements(*rep, gpus, run.body.at("node").get<std::string>(), peers_of(run.body),
                                         run.body.value("simulated_counted", false));
  const json& ids = run.body.at("measurements");
  if (planned.size() != ids.size()) return Error::make(Code::kInternal, "acceptance run: measurement plan changed");
  const bool disputed = run.body.value("status", "recorded") == "disputed";
  if (disputed && !planned.empty())
    if (auto s = check_dispute_room(tx, p.tenant_id, static_cast<int64_t>(planned.size()),
                                    run.body.contains("job_id") ? "job" : "report");
        !s)
      return s;
  for (size_t i = 0; i < planned.size(); ++i) {
    Measurement m = planned[i];
    if (m.node_id.empty()) m.node_id = run.body.at("node_id").get<std::string>();
    m.recorded_by = p.user_id;
    if (disputed) {
      m.status = MeasurementStatus::kDisputed;
      m.tenant_id = p.tenant_id;
    }
    m.acceptance_run = run.id;
    json body = to_json(m);
    Record r;
    r.kind = "measurements";
    r.id = ids[i].get<std::string>();
    IndexCols idx = index_of(m);
    r.name = idx.name;
    r.state = idx.state;
    r.supplier_id = run.supplier_id;
    r.tenant_id = m.tenant_id;
    r.region = run.region;
    r.gpu_model = run.gpu_model;
    r.created_at = r.updated_at = run.created_at;
    r.body = std::move(body);
    if (auto s = tx.insert(r); !s) return s.error();
    if (auto s = tx.append_audit({r.created_at, p.user_id, "create", "measurements", r.id, r.name}); !s) return s.error();
  }
  return ok_status();
}

// ---- the report ----

std::string md_escape(std::string s) {
  for (size_t at = 0; (at = s.find('|', at)) != std::string::npos; at += 2) s.replace(at, 1, "\\|");
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

std::string render_report(const Record& run, bool zh) {
  const json& b = run.body;
  auto t = [&](const char* en, const char* cn) { return std::string(zh ? cn : en); };
  std::string out = t("# Acceptance run ", "# 验收运行 ") + run.id + "\n\n";
  out += t("- Node: ", "- 节点：") + md_escape(b.value("node", "")) + " (" + md_escape(b.value("hostname", "")) + ")\n";
  out += t("- Measured: ", "- 测量时间：") + b.value("started_at", "") + " — " + b.value("finished_at", "") + "\n";
  out += t("- Tool: gpurent-accept ", "- 工具：gpurent-accept ") + md_escape(b.value("tool_version", "")) + "\n";
  if (b.contains("job")) out += t("- Job: ", "- 作业：") + md_escape(b.value("job", "")) + "\n";
  const std::string by = b.value("recorded_by", "");
  out += t("- Recorded by: ", "- 记录人：") + (by.empty() ? "—" : by) + t(" (status ", "（状态 ") + b.value("status", "") +
         t(")\n", "）\n");
  if (b.value("simulated", false))
    out += b.value("simulated_counted", false)
               ? t("- **Simulated GPU source**: its figures were counted (the server runs with --acceptance-count-simulated).\n",
                   "- **模拟 GPU 数据源**：其数值已计入（服务器以 --acceptance-count-simulated 运行）。\n")
               : t("- **Simulated GPU source**: its figures are shown but make no measurement.\n",
                   "- **模拟 GPU 数据源**：数值仅供展示，不产生测量记录。\n");
  out += t("\n## GPUs\n\n| card | UUID | name |\n|---|---|---|\n", "\n## GPU\n\n| 卡 | UUID | 型号 |\n|---|---|---|\n");
  for (const json& g : b.value("gpus", json::array()))
    out += "| " + std::to_string(g.value("card", int64_t{0})) + " | " + md_escape(g.value("uuid", "")) + " | " +
           md_escape(g.value("name", "")) + " |\n";
  out += t("\n## Stages\n\n| stage | tool | status | figures |\n|---|---|---|---|\n",
           "\n## 阶段\n\n| 阶段 | 工具 | 状态 | 结果 |\n|---|---|---|---|\n");
  for (const json& s : b.value("stages", json::array())) {
    std::string figures;
    const json f = s.value("figures", json::object());
    const std::string kind = s.value("stage", "");
    if (kind == "gpu") {
      for (const json& g : f.value("gemm", json::array()))
        figures += t("card ", "卡 ") + std::to_string(g.value("card", int64_t{0})) + " " + g.value("dtype", "") + " GEMM " +
                   g.value("tflops", "") + " TFLOPS; ";
      for (const json& c : f.value("copies", json::array()))
        figures += t("card ", "卡 ") + std::to_string(c.value("card", int64_t{0})) + " " + c.value("direction", "") + " " +
                   c.value("gbps", "") + " GB/s; ";
    } else if (kind == "nccl" && !f.empty()) {
      figures = t("bus bandwidth ", "总线带宽 ") + f.value("busbw_gbps", "") + " GB/s (" +
                std::to_string(f.value("ranks", int64_t{0})) + t(" ranks", " 个 rank");
      if (f.contains("hosts")) {
        std::string hosts;
        for (const json& h : f["hosts"]) hosts += (hosts.empty() ? "" : ", ") + h.get<std::string>();
        figures += t(" across nodes ", "，跨节点 ") + hosts;
      }
      figures += t(")", "）");
    } else if (kind == "storage" && !f.empty()) {
      figures = t("read ", "读 ") + std::to_string(f.value("read_mbps", int64_t{0})) + t(" MB/s, write ", " MB/s，写 ") +
                std::to_string(f.value("write_mbps", int64_t{0})) + " MB/s";
    } else if (kind == "network" && !f.empty()) {
      figures = std::to_string(f.value("received_mbps", int64_t{0})) + " Mbit/s (" + md_escape(s.value("peer", "")) + ")";
    }
    if (s.value("status", "") != "ok") figures = md_escape(s.value("reason", ""));
    out += "| " + kind + " | " + md_escape(s.value("tool", "") + " " + s.value("tool_version", "")) + " | " +
           s.value("status", "") + (s.value("simulated", false) ? t(" (simulated)", "（模拟）") : "") + " | " +
           md_escape(figures) + " |\n";
  }
  if (b.contains("gates")) {
    out += t("\n## Against contract ", "\n## 对照合同 ") + md_escape(b.value("contract", "")) + t(": **", "：**") +
           b.value("verdict", "") + "**\n\n";
    out += t("| clause | card | floor | measured | result |\n|---|---|---|---|---|\n",
             "| 条款 | 卡 | 下限 | 实测 | 结果 |\n|---|---|---|---|---|\n");
    for (const json& g : b["gates"])
      out += "| " + g.value("clause", "") + " | " + (g.contains("card") ? std::to_string(g.value("card", int64_t{0})) : "—") +
             " | " + g.value("floor", "") + " | " + g.value("measured", "—") + " | " + g.value("status", "") +
             (g.value("simulated", false) ? t(" (simulated)", "（模拟）") : "") + " |\n";
  }
  const json ids = b.value("measurements", json::array());
  out += t("\n## Measurements\n\n", "\n## 测量记录\n\n");
  if (ids.empty()) out += t("None: no stage made one.\n", "无：没有阶段产生测量记录。\n");
  for (const json& id : ids) out += "- " + id.get<std::string>() + "\n";
  out += t("\nEvery figure above was derived by the server from the tools' raw output, which the run keeps "
           "(GET /api/v1/acceptance-runs/",
           "\n以上数值均由服务器根据工具的原始输出计算，原始输出随运行保存（GET /api/v1/acceptance-runs/") +
         run.id + t(").\n", "）。\n");
  return out;
}

// The measurements of a run are public facts about the market's hardware; what a tenant keeps
// beside them is its own: its job, its contract with the clause floors it negotiated and the
// verdict against them, and who recorded the run with what note. Each is hidden from every reader
// but operators, the run's recorder and its parties: the job's tenant, the contract's tenant and
// supplier, the recording tenant.
void hide_private_parts(StoreReader& store, const Record& r, const Principal& p, json& out) {
  if (p.is_operator() || out.value("recorded_by", "") == p.user_id) return;
  auto party = [&](const char* kind, const char* key) {
    auto it = out.find(key);
    if (it == out.end() || !it->is_string()) return false;
    auto rec = store.get(kind, it->get<std::string>());
    return rec && ((!p.tenant_id.empty() && rec->tenant_id == p.tenant_id) ||
                   (!p.supplier_id.empty() && rec->supplier_id == p.supplier_id));
  };
  if (!party("jobs", "job_id"))
    for (const char* k : {"job", "job_id"}) out.erase(k);
  if (!party("contracts", "contract_id"))
    for (const char* k : {"contract", "contract_id", "gates", "verdict"}) out.erase(k);
  if (!r.tenant_id.empty() && r.tenant_id != p.tenant_id)
    for (const char* k : {"tenant_id", "recorded_by", "note"}) out.erase(k);
}

void get_report(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto rec = find_visible(app.store, spec, p, req.matches[1]);
  if (!rec) return send_problem(res, rec.error(), req.path);
  hide_private_parts(app.store, *rec, p, rec->body);
  const std::string lang = ResponseLanguage::current();  // ?lang= or Accept-Language (the router's)
  res.status = 200;
  res.set_content(render_report(*rec, lang.rfind("zh", 0) == 0), "text/markdown; charset=utf-8");
}

}  // namespace

void register_acceptance_run_routes(App& app, Router& srv) {
  KindSpec spec;
  spec.kind = "acceptance-runs";
  spec.id_prefix = "acr";
  spec.object_kind = ObjectKind::kMeasurement;
  spec.filters = {{"supplier", "supplier_id"}, {"tenant", "tenant_id"}, {"status", "state"}};
  spec.filter_values["status"] = enum_names(kMeasurementStatusNames);
  spec.updatable = false;
  spec.deletable = false;
  spec.build = [&app](const json& body, const Principal& p, StoreTx& tx, const Record*) {
    return build_run(app, body, p, tx, std::any());
  };
  spec.prepare_create = [&app](const json& body, const Principal& p) -> Result<std::any> {
    return prepare_run(app, body, p);
  };
  spec.build_create = [&app](const json& body, const Principal& p, StoreTx& tx, const std::any& prepared) {
    return build_run(app, body, p, tx, prepared);
  };
  spec.after_create = [](const Principal& p, const Record& r, StoreTx& tx) { return store_measurements(p, r, tx); };
  spec.decorate = hide_private_parts;
  register_crud(app, srv, spec);
  item_route(app, srv, "GET", "acceptance-runs", "report", get_report);
}

}  // namespace gpurent
