// Job verbs beyond the generic ones: cancel, events, cost, logs (job_logs_command.cc); and
// `jobs get`, which in table format also shows what the job runs under and has cost so far
// (GET /jobs/{ref}/cost).
#include <memory>

#include "cli/commands.h"
#include "cli/job_cost_view.h"
#include "cli/list.h"
#include "cli/output.h"
#include "cli/views.h"

namespace gpurent {

void add_job_logs_verb(CLI::App& jobs, CliContext& ctx);  // jobs logs (job_logs_command.cc)

namespace {

// `jobs get NAME` (the generic get of add_resource_commands): the job document unchanged under
// -o json/yaml; in table format the job's view with its placement's nodes by name, then the runs
// it was billed under (offer, supplier, mode, unit price and currency) and its cost so far,
// charges and credits apart. A cost that cannot be read leaves the job's view whole and says why
// on standard error.
int show_job(CliContext& ctx, const std::string& id) {
  int rc = kExitOk;
  ApiClient* c = ctx.client(&rc);
  if (!c) return rc;
  auto job = c->get("/jobs" + seg(id));
  if (!job) return ctx.fail(job.error());
  if (ctx.format() != OutputFormat::kTable) return ctx.emit(*job, [](std::ostream&) {});
  const std::string job_id = cell_text(at_path(*job, "id"));
  auto cost = c->get("/jobs" + seg(job_id.empty() ? id : job_id) + "/cost");
  return ctx.emit(*job, [&](std::ostream& out) {
    if (!cost) {
      print_detail(out, view_of("jobs"), *job, ctx.now());
      ctx.err() << "warning: the job's cost could not be read: " << printable(cost.error().detail) << '\n';
      return;
    }
    print_detail(out, view_of("jobs"), with_node_names(*job, *cost), ctx.now());
    print_job_runs(out, *cost);
    out << "\nCost so far (" << cell_text(at_path(*cost, "period/from")) << " .. "
        << cell_text(at_path(*cost, "period/to")) << "):\n";
    print_job_cost_totals(out, *cost, 2);
  });
}

// The generic get keeps its place in the help and its own option storage; the `jobs` command's
// callback, which CLI11 runs after the chosen verb's, takes over the action when that verb was
// `get` (the id read back from the parsed option).
void extend_job_get(CLI::App& jobs, CliContext& ctx) {
  CLI::App* get = jobs.get_subcommand("get");
  const CLI::Option* id = get->get_option("id");
  jobs.callback([&ctx, get, id] {
    if (!get->parsed()) return;
    ctx.action = [&ctx, name = id->as<std::string>()] { return show_job(ctx, name); };
  });
}

}  // namespace

void add_job_verbs(CLI::App& jobs, CliContext& ctx) {
  auto cancel_id = std::make_shared<std::string>();
  auto* cancel = jobs.add_subcommand("cancel", "cancel a pending, admitted or running job");
  cancel->add_option("id", *cancel_id, "job id or name")->required();
  cancel->callback([&ctx, cancel_id] {
    ctx.action = [&ctx, cancel_id] {
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      auto r = c->post("/jobs" + seg(*cancel_id) + "/cancel", json::object());
      if (!r) return ctx.fail(r.error());
      json doc = r->is_null() ? json{{"cancelled", *cancel_id}} : *r;
      return ctx.emit(doc, [&](std::ostream& out) {
        std::string name = cell_text(at_path(doc, "name"));
        std::string state = cell_text(at_path(doc, "status/state"));
        out << "cancel requested for job " << printable(name.empty() ? *cancel_id : name);
        if (!state.empty()) out << ", state " << state;
        out << '\n';
      });
    };
  });

  // The server answers a job's events in one page (a job has few state changes): no --limit/--after.
  auto ev = std::make_shared<std::string>();
  auto* events = jobs.add_subcommand("events", "show a job's state changes, oldest first");
  events->add_option("id", *ev, "job id or name")->required();
  events->callback([&ctx, ev] {
    ctx.action = [&ctx, ev] {
      auto table = [](std::ostream& out, const std::vector<json>& items) {
        Table t({{"AT"}, {"FROM"}, {"TO"}, {"REASON"}});
        for (const auto& e : items)
          t.add_row({cell_text(at_path(e, "at")), cell_text(at_path(e, "from")), cell_text(at_path(e, "to")),
                     cell_text(at_path(e, "reason"))});
        t.print(out);
      };
      return run_list(ctx, "/jobs" + seg(*ev) + "/events", {}, 0, "", table, "events");
    };
  });

  auto cost_id = std::make_shared<std::string>();
  auto* cost = jobs.add_subcommand(
      "cost", "show what a job has cost so far: its lines, charges, credits and total per currency");
  cost->add_option("id", *cost_id, "job id or name")->required();
  cost->callback([&ctx, cost_id] {
    ctx.action = [&ctx, cost_id] {
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      auto r = c->get("/jobs" + seg(*cost_id) + "/cost");
      if (!r) return ctx.fail(r.error());
      return ctx.emit(*r, [&](std::ostream& out) { print_job_cost(out, *r); });
    };
  });

  add_job_logs_verb(jobs, ctx);
  extend_job_get(jobs, ctx);
}

}  // namespace gpurent
