// Verbs over the generic resource commands: `measurements accept|reject ID`, `nodes
// drain|undrain NODE`, `instances start|stop|preflight INSTANCE`, `alerts lift ALERT`, and `reports reconciliation` (metered against
// allocated GPU-seconds, one tenant or the whole platform).
#include <chrono>
#include <memory>
#include <thread>

#include "cli/commands.h"
#include "cli/output.h"

namespace gpurent {
namespace {

// Sets a node's state through GET + PUT with the version read, so a concurrent edit is refused
// (exit 1) rather than overwritten. `reason` empty removes state_reason.
int set_node_state(CliContext& ctx, const std::string& ref, const std::string& state, const std::string& reason) {
  int rc = kExitOk;
  ApiClient* c = ctx.client(&rc);
  if (!c) return rc;
  auto node = c->get("/nodes" + seg(ref));
  if (!node) return ctx.fail(node.error());
  json doc = *node;
  const std::string before = doc.value("state", "");
  doc["state"] = state;
  if (reason.empty())
    doc.erase("state_reason");
  else
    doc["state_reason"] = reason;
  auto r = c->put("/nodes" + seg(doc.value("id", ref)), doc);
  if (!r) return ctx.fail(r.error());
  return ctx.emit(*r, [&](std::ostream& out) {
    out << "node " << printable(r->value("name", ref)) << ": " << before << " -> " << state;
    if (state == "drained") out << " (running work finishes; nothing new starts)";
    if (state == "unavailable") out << " (its running jobs are requeued elsewhere, each with a fault record)";
    out << '\n';
  });
}

void add_node_verbs(CLI::App& nodes, CliContext& ctx) {
  struct Opts {
    std::string node, reason;
  };
  auto d = std::make_shared<Opts>();
  auto* drain = nodes.add_subcommand("drain", "stop placing new work on a node; running work finishes");
  drain->add_option("node", d->node, "id or name")->required();
  drain->add_option("--reason", d->reason, "why (kept as the node's state_reason, shown to its users)")->required();
  drain->callback([&ctx, d] { ctx.action = [&ctx, d] { return set_node_state(ctx, d->node, "drained", d->reason); }; });

  // Fault injection (docs/acceptance.md#fault-injection): the node fails now, as if it had died.
  auto f = std::make_shared<Opts>();
  auto* fail = nodes.add_subcommand(
      "fail", "take a node out of service as a failure (fault injection): its running jobs are requeued elsewhere");
  fail->add_option("node", f->node, "id or name")->required();
  fail->add_option("--reason", f->reason, "why (kept as the node's state_reason and in the fault records)")->required();
  fail->callback([&ctx, f] { ctx.action = [&ctx, f] { return set_node_state(ctx, f->node, "unavailable", f->reason); }; });

  auto u = std::make_shared<Opts>();
  auto* undrain = nodes.add_subcommand("undrain", "make a drained or unavailable node available again");
  undrain->add_option("node", u->node, "id or name")->required();
  undrain->callback([&ctx, u] { ctx.action = [&ctx, u] { return set_node_state(ctx, u->node, "available", ""); }; });
}

void add_alert_verbs(CLI::App& alerts, CliContext& ctx) {
  auto id = std::make_shared<std::string>();
  auto* lift = alerts.add_subcommand(
      "lift", "lift an alert: an egress freeze is lifted, any other alert acknowledged (operators, the tenant's admin)");
  lift->add_option("alert", *id, "alert id")->required();
  lift->callback([&ctx, id] {
    ctx.action = [&ctx, id] {
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      auto r = c->post("/alerts" + seg(*id) + "/lift", json::object());
      if (!r) return ctx.fail(r.error());
      return ctx.emit(*r, [&](std::ostream& out) {
        out << "lifted alert " << printable(r->value("id", *id)) << " (" << printable(r->value("kind", "")) << ")\n";
      });
    };
  });
}

// `measurements accept|reject ID`: resolve a tenant's dispute (operators, the node's supplier).
void add_measurement_verbs(CLI::App& measurements, CliContext& ctx) {
  struct Opts {
    std::string id, note;
  };
  for (const bool accept : {true, false}) {
    auto o = std::make_shared<Opts>();
    auto* cmd = measurements.add_subcommand(
        accept ? "accept" : "reject",
        accept ? "accept a tenant's dispute: it counts toward SLA credits (operators, the node's supplier)"
               : "reject a tenant's dispute, saying why (operators, the node's supplier)");
    cmd->add_option("id", o->id, "measurement id")->required();
    auto* note = cmd->add_option("--note", o->note, accept ? "why (optional)" : "why it is rejected");
    if (!accept) note->required();
    cmd->callback([&ctx, o, accept] {
      ctx.action = [&ctx, o, accept] {
        int rc = kExitOk;
        ApiClient* c = ctx.client(&rc);
        if (!c) return rc;
        json body = json::object();
        if (!o->note.empty()) body["note"] = o->note;
        auto r = c->post("/measurements" + seg(o->id) + (accept ? "/accept" : "/reject"), body);
        if (!r) return ctx.fail(r.error());
        return ctx.emit(*r, [&](std::ostream& out) {
          out << "measurement " << printable(r->value("id", o->id)) << " is " << printable(r->value("status", "")) << "\n";
        });
      };
    });
  }
}

void print_reconciliation(std::ostream& out, const json& r) {
  out << "period   " << cell_text(at_path(r, "period/from")) << " .. " << cell_text(at_path(r, "period/to")) << "\n";
  if (r.contains("tenants")) {
    Table t({{"TENANT"},
             {"ALLOCATED GPU-S", Align::kRight},
             {"METERED GPU-S", Align::kRight},
             {"GAP GPU-S", Align::kRight},
             {"FLAGGED RUNS", Align::kRight}});
    for (const auto& x : r["tenants"])
      t.add_row({cell_text(x["tenant"]), cell_text(at_path(x, "totals/allocated_gpu_seconds")),
                 cell_text(at_path(x, "totals/metered_gpu_seconds")), cell_text(at_path(x, "totals/gap_gpu_seconds")),
                 cell_text(at_path(x, "totals/flagged_runs"))});
    out << "\n";
    t.print(out, 0);
  }
  Table jobs({{"JOB"},
              {"ALLOCATED GPU-S", Align::kRight},
              {"METERED GPU-S", Align::kRight},
              {"GAP GPU-S", Align::kRight}});
  for (const auto& j : r.value("jobs", json::array()))
    jobs.add_row({cell_text(j["job"]), cell_text(j["allocated_gpu_seconds"]), cell_text(j["metered_gpu_seconds"]),
                  cell_text(j["gap_gpu_seconds"])});
  out << "\n";
  jobs.print(out, 0);
  for (const auto& row : r.value("rows", json::array()))
    if (row.value("flagged", false))
      out << "flagged: " << printable(cell_text(row["job"])) << " " << printable(cell_text(row["allocation"])) << ": "
          << printable(cell_text(row["note"])) << "\n";
  out << "\ntotal    allocated " << cell_text(at_path(r, "totals/allocated_gpu_seconds")) << "  metered "
      << cell_text(at_path(r, "totals/metered_gpu_seconds")) << "  gap " << cell_text(at_path(r, "totals/gap_gpu_seconds"))
      << " GPU-seconds\n";
}

void add_report_commands(CLI::App& app, CliContext& ctx) {
  auto* reports = app.add_subcommand("reports", "platform reports for operators and finance");
  reports->require_subcommand(1);
  struct Opts {
    std::string month, tenant;
  };
  auto o = std::make_shared<Opts>();
  auto* rec = reports->add_subcommand(
      "reconciliation", "GPU-seconds allocated (the ledger) against metered (utilization samples), per run and job");
  rec->add_option("--month", o->month, "calendar month, YYYY-MM (UTC; default: this month)");
  rec->add_option("--tenant", o->tenant,
                  "one tenant (id or name); operators without it get the whole platform, tenant tokens their own");
  rec->callback([&ctx, o] {
    ctx.action = [&ctx, o] {
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      Query q{{"month", o->month.empty() ? format_rfc3339(ctx.now()).substr(0, 7) : o->month}};
      if (!o->tenant.empty()) q.emplace_back("tenant", o->tenant);
      auto r = c->get("/reports/reconciliation", q);
      if (!r) return ctx.fail(r.error());
      return ctx.emit(*r, [&](std::ostream& out) { print_reconciliation(out, *r); });
    };
  });
}

// `instances attach NAME VOLUME [--mount M] [--shared [--read-only]]`, `instances detach NAME
// VOLUME`: a stopped instance's data disk or shared volumes, for its next start.
void add_instance_volume_verbs(CLI::App& instances, CliContext& ctx) {
  struct VolOpts {
    std::string ref, volume, mount;
    bool shared = false, read_only = false;
  };
  for (const bool attach : {true, false}) {
    auto o = std::make_shared<VolOpts>();
    auto* cmd = instances.add_subcommand(attach ? "attach" : "detach",
                                         attach ? "attach a volume to a stopped instance: its data disk, or --shared"
                                                : "detach a volume from a stopped instance (the volume and its data stay)");
    cmd->add_option("instance", o->ref, "id or name")->required();
    cmd->add_option("volume", o->volume, "the volume's name")->required();
    if (attach) {
      cmd->add_option("--mount", o->mount, "where it is mounted (default /data, or /shared/VOLUME with --shared)");
      cmd->add_flag("--shared", o->shared, "one more shared volume (a project's, say), not its data disk");
      cmd->add_flag("--read-only", o->read_only, "mounted read-only (shared volumes only)");
    }
    cmd->callback([&ctx, o, attach] {
      ctx.action = [&ctx, o, attach] {
        int rc = kExitOk;
        ApiClient* c = ctx.client(&rc);
        if (!c) return rc;
        json body = {{"name", o->volume}};
        if (!o->mount.empty()) body["mount"] = o->mount;
        if (o->shared) body["shared"] = true;
        if (o->read_only) body["read_only"] = true;
        auto r = c->post("/instances" + seg(o->ref) + (attach ? "/attach" : "/detach"), body);
        if (!r) return ctx.fail(r.error());
        return ctx.emit(*r, [&](std::ostream& out) {
          out << "instance " << printable(r->value("name", o->ref)) << ": data disk "
              << printable(r->contains("volume") ? (*r)["volume"].value("name", "") : std::string("none"));
          for (const auto& m : r->value("shared_volumes", json::array()))
            out << ", shared " << printable(m.value("name", "")) << " at " << printable(m.value("mount", ""))
                << (m.value("read_only", false) ? " (read-only)" : "");
          out << "\n";
        });
      };
    });
  }
}

// `instances start|stop|restart NAME`: a stopped instance submits its next job (back to its last
// host when that host's GPUs are free; `--on` says where else); a running one's job is cancelled
// (its volume keeps the data); a restart does both in one write. `instances preflight NAME`: what a start would meet. `instances save NAME
// --image IMG`: the running container saved as the tenant's image IMG.
constexpr std::chrono::seconds kStopWait{120};

void add_instance_verbs(CLI::App& instances, CliContext& ctx) {
  struct SaveOpts {
    std::string ref, image, description;
  };
  auto so = std::make_shared<SaveOpts>();
  auto* save = instances.add_subcommand(
      "save", "save a running instance's container (its system disk; not its volume) as an image of its tenant");
  save->add_option("instance", so->ref, "id or name")->required();
  save->add_option("--image", so->image, "the new image's name (gpurent images list)")->required();
  save->add_option("--description", so->description, "the image's description");
  save->callback([&ctx, so] {
    ctx.action = [&ctx, so] {
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      json body = {{"name", so->image}};
      if (!so->description.empty()) body["description"] = so->description;
      auto r = c->post("/instances" + seg(so->ref) + "/image", body);
      if (!r) return ctx.fail(r.error());
      return ctx.emit(*r, [&](std::ostream& out) {
        out << "image " << printable(r->value("name", so->image)) << " (" << printable(r->value("id", "")) << "): "
            << printable(r->value("state", "")) << " from instance " << printable(so->ref)
            << " (gpurent images show " << printable(r->value("name", so->image)) << ")\n";
      });
    };
  });
  auto pre = std::make_shared<std::string>();
  auto* preflight = instances.add_subcommand(
      "preflight", "what a start of a stopped instance would meet: its last host's free GPUs, other nodes with room, the options");
  preflight->add_option("instance", *pre, "id or name")->required();
  preflight->callback([&ctx, pre] {
    ctx.action = [&ctx, pre] {
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      auto r = c->get("/instances" + seg(*pre) + "/preflight");
      if (!r) return ctx.fail(r.error());
      return ctx.emit(*r, [&](std::ostream& out) {
        out << "instance " << printable(r->value("instance", *pre)) << ": " << printable(r->value("advice", "")) << "\n";
      });
    };
  });
  struct Verb {
    const char* name;
    const char* help;
    bool on;  // takes --on
  };
  for (const Verb& v : {Verb{"start", "start a stopped instance (a new job of its project; back to its host when its GPUs are free)", true},
                        Verb{"stop", "stop a running instance: its container goes, its volume keeps the data", false},
                        Verb{"restart", "stop a running instance and start it again in one step (the new container waits for the old one to go)", true}}) {
    auto ref = std::make_shared<std::string>();
    auto on = std::make_shared<std::string>();
    auto no_wait = std::make_shared<bool>(false);
    auto* cmd = instances.add_subcommand(v.name, v.help);
    cmd->add_option("instance", *ref, "id or name")->required();
    if (std::string(v.name) == "stop")
      cmd->add_flag("--no-wait", *no_wait, "return at once, while its container may still be stopping");
    if (v.on)
      cmd->add_option("--on", *on,
                      "auto (default: its last host, refused when that host is busy), same_host (wait for it), any_host, cpu_only")
          ->check(CLI::IsMember({"auto", "same_host", "any_host", "cpu_only"}));
    const std::string action = std::string("/") + v.name;
    cmd->callback([&ctx, ref, on, no_wait, action] {
      ctx.action = [&ctx, ref, on, no_wait, action] {
        int rc = kExitOk;
        ApiClient* c = ctx.client(&rc);
        if (!c) return rc;
        json body = json::object();
        if (!on->empty()) body["on"] = *on;
        auto r = c->post("/instances" + seg(*ref) + action, body);
        // A stop returns once the container has gone (stopping -> stopped), as `podman stop`
        // does, so `stop && attach` works; at most kStopWait, then it says it is still stopping.
        if (r && action == "/stop" && !*no_wait) {
          const std::string id = r->value("id", *ref);
          for (auto until = std::chrono::steady_clock::now() + kStopWait;
               r && r->value("state", "") == "stopping" && std::chrono::steady_clock::now() < until;) {
            std::this_thread::sleep_for(std::chrono::milliseconds(250));
            r = c->get("/instances" + seg(id));
          }
        }
        if (!r) return ctx.fail(r.error());
        return ctx.emit(*r, [&](std::ostream& out) {
          out << "instance " << printable(r->value("name", *ref)) << ": " << printable(r->value("state", "")) << " (job "
              << printable(r->contains("current_job") ? (*r)["current_job"].value("name", "") : "") << ")\n";
        });
      };
    });
  }
  add_instance_volume_verbs(instances, ctx);
}

// `acceptance-runs report RUN` and `poc-runs report POC`: the Markdown report in --lang.
void add_report_verb(CLI::App& noun, CliContext& ctx, const std::string& kind, const char* what) {
  struct Opts {
    std::string ref, lang = "en";
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = noun.add_subcommand("report", std::string("print ") + what + " as a Markdown report");
  cmd->add_option("ref", o->ref, "id or name")->required();
  cmd->add_option("--lang", o->lang, "en or zh")->check(CLI::IsMember({"en", "zh"}))->capture_default_str();
  cmd->callback([&ctx, o, kind] {
    ctx.action = [&ctx, o, kind] {
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      auto r = c->get("/" + kind + seg(o->ref) + "/report", {{"lang", o->lang}});
      if (!r) return ctx.fail(r.error());
      ctx.out() << (r->is_string() ? r->get<std::string>() : r->dump());
      return kExitOk;
    };
  });
}

// `poc-runs record POC (--item ID (--passed | --failed | --value V) | --acceptance-run RUN) [--note]`:
// appends a result (operators, the tenant's admins) and prints the verdict now.
void add_poc_verbs(CLI::App& pocs, CliContext& ctx) {
  struct Opts {
    std::string poc, item, value, run, note;
    bool passed = false, failed = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = pocs.add_subcommand("record", "record a POC result: one item's, or an acceptance run's figures");
  cmd->add_option("poc", o->poc, "POC run id or name")->required();
  auto* item = cmd->add_option("--item", o->item, "a plan item id (bench_nccl, model_throughput, env_rdma, …)");
  auto* run = cmd->add_option("--acceptance-run", o->run, "an acceptance run whose figures become the benchmark results");
  auto* passed = cmd->add_flag("--passed", o->passed, "a yes-item passed");
  auto* failed = cmd->add_flag("--failed", o->failed, "a yes-item failed");
  auto* value = cmd->add_option("--value", o->value, "a figure item's value (a decimal, at most 3 places)");
  cmd->add_option("--note", o->note, "how it was measured");
  item->excludes(run);
  passed->excludes(failed)->excludes(value)->excludes(run);
  failed->excludes(value)->excludes(run);
  value->excludes(run);
  cmd->callback([&ctx, o] {
    ctx.action = [&ctx, o]() -> int {
      if (o->item.empty() && o->run.empty())
        return ctx.fail(Error::invalid("--item", "give --item (with --passed, --failed or --value) or --acceptance-run"), kExitUsage);
      json body = json::object();
      if (!o->run.empty()) {
        body["acceptance_run"] = o->run;
      } else {
        body["item"] = o->item;
        if (o->passed || o->failed) body["passed"] = o->passed;
        if (!o->value.empty()) body["value"] = o->value;
      }
      if (!o->note.empty()) body["note"] = o->note;
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      auto r = c->post("/poc-runs" + seg(o->poc) + "/results", body);
      if (!r) return ctx.fail(r.error());
      return ctx.emit(*r, [&](std::ostream& out) {
        const json plan = r->value("plan", json::object());
        out << "POC " << printable(r->value("name", o->poc)) << ": " << printable(plan.value("verdict", "?")) << " — "
            << printable(plan.value("reason", "")) << "\n";
      });
    };
  });
  add_report_verb(pocs, ctx, "poc-runs", "a POC run");
}

}  // namespace

void add_operator_commands(CLI::App& app, CliContext& ctx) {
  if (CLI::App* pocs = app.get_subcommand("poc-runs")) add_poc_verbs(*pocs, ctx);
  if (CLI::App* acc = app.get_subcommand("acceptance-runs")) add_report_verb(*acc, ctx, "acceptance-runs", "an acceptance run");
  if (CLI::App* instances = app.get_subcommand("instances")) add_instance_verbs(*instances, ctx);
  if (CLI::App* nodes = app.get_subcommand("nodes")) add_node_verbs(*nodes, ctx);
  if (CLI::App* alerts = app.get_subcommand("alerts")) add_alert_verbs(*alerts, ctx);
  if (CLI::App* ms = app.get_subcommand("measurements")) add_measurement_verbs(*ms, ctx);
  add_report_commands(app, ctx);
}

}  // namespace gpurent
