// Job verbs beyond the generic ones: cancel, events.
#include <memory>

#include "cli/commands.h"
#include "cli/list.h"
#include "cli/output.h"
#include "cli/views.h"

namespace gpurent {

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

  struct EventOpts {
    std::string id;
    int limit = 0;
    std::string after;
  };
  auto ev = std::make_shared<EventOpts>();
  auto* events = jobs.add_subcommand("events", "show a job's state changes, oldest first");
  events->add_option("id", ev->id, "job id or name")->required();
  events->add_option("--limit", ev->limit, "fetch one page of at most N events (1-1000)")->check(CLI::Range(1, 1000));
  events->add_option("--after", ev->after, "continue after this cursor");
  events->callback([&ctx, ev] {
    ctx.action = [&ctx, ev] {
      auto table = [](std::ostream& out, const std::vector<json>& items) {
        Table t({{"AT"}, {"FROM"}, {"TO"}, {"REASON"}});
        for (const auto& e : items)
          t.add_row({cell_text(at_path(e, "at")), cell_text(at_path(e, "from")), cell_text(at_path(e, "to")),
                     cell_text(at_path(e, "reason"))});
        t.print(out);
      };
      return run_list(ctx, "/jobs" + seg(ev->id) + "/events", {}, ev->limit, ev->after, table, "events");
    };
  });
}

}  // namespace gpurent
