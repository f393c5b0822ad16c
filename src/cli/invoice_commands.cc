// `gpurent invoices show --month 2026-11`: a tenant's invoice (GET /api/v1/invoices) as a table
// per contract section with totals per currency, as JSON (-o json), or exported as CSV or FinOps
// FOCUS columns (--export csv|focus). Issued invoices: `invoices close --month` (operators),
// `invoices pay|void|verify|print ID` (the list and get views are `gpurent issued-invoices`).
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/output.h"

namespace gpurent {
namespace {

struct InvoiceOpts {
  std::string tenant, month, from, to, export_format;
};

void print_invoice(std::ostream& out, const json& inv) {
  out << "tenant   " << inv.value("tenant", "") << "\n"
      << "period   " << at_path(inv, "period/from").get<std::string>() << " .. "
      << at_path(inv, "period/to").get<std::string>() << "\n";
  for (const auto& s : inv.value("sections", json::array())) {
    out << "\n" << s.value("contract", "") << " (" << s.value("currency", "") << ")\n";
    Table t({{"KIND"}, {"RULE"}, {"PROJECT"}, {"JOB"}, {"QUANTITY", Align::kRight}, {"UNIT"}, {"UNIT PRICE", Align::kRight},
             {"PER"}, {"AMOUNT", Align::kRight}});
    for (const auto& l : s.value("lines", json::array()))
      t.add_row({l.value("kind", ""), l.value("rule", ""), l.value("project", ""), l.value("job", ""),
                 l.value("quantity", ""), l.value("unit", ""), l.value("unit_price", ""), l.value("price_unit", ""),
                 l.value("amount", "")});
    t.print(out, 2);
    out << "  total " << at_path(s, "totals/total").get<std::string>() << " " << s.value("currency", "") << "\n";
  }
  out << "\n";
  const json totals = inv.value("totals", json::object());
  for (const auto& [cur, t] : totals.items())
    out << "charges " << t.value("charges", "") << "  credits " << t.value("credits", "") << "  total "
        << t.value("total", "") << " " << cur << "\n";
  if (inv.value("sections", json::array()).empty()) out << "nothing billed in this period\n";
  const auto unpriced = inv.value("unpriced_allocations", json::array());
  if (!unpriced.empty())
    out << "note: " << unpriced.size() << " allocation(s) ran on nodes no offer sells; they are not billed\n";
}

}  // namespace

void add_invoice_commands(CLI::App& app, CliContext& ctx) {
  auto* inv = app.add_subcommand("invoices", "a tenant's invoices: lines by project, job, billing mode, fee and credit");
  inv->require_subcommand(1);
  auto o = std::make_shared<InvoiceOpts>();
  auto* show = inv->add_subcommand("show", "rate and show the invoice of a month or a period");
  show->add_option("--month", o->month, "calendar month, YYYY-MM (UTC; default: this month)");
  show->add_option("--from", o->from, "period start (RFC 3339), with --to");
  show->add_option("--to", o->to, "period end (RFC 3339, exclusive)");
  show->add_option("--tenant", o->tenant, "tenant id or name (operators; tenant tokens see their own)");
  show->add_option("--export", o->export_format, "print the lines as csv, or as FinOps FOCUS columns (focus)")
      ->check(CLI::IsMember({"csv", "focus"}));
  show->callback([&ctx, o] {
    ctx.action = [&ctx, o] {
      if (!o->month.empty() && (!o->from.empty() || !o->to.empty()))
        return ctx.fail(Error::invalid("--month", "give --month YYYY-MM, or both --from and --to, not both"),
                        kExitUsage);
      if (o->from.empty() != o->to.empty())
        return ctx.fail(Error::invalid(o->from.empty() ? "--from" : "--to", "give both --from and --to"), kExitUsage);
      std::string month = o->month;
      if (month.empty() && o->from.empty()) month = format_rfc3339(ctx.now()).substr(0, 7);  // this UTC month
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      Query q;
      if (!month.empty()) q.push_back({"month", month});
      if (!o->from.empty()) q.push_back({"from", o->from});
      if (!o->to.empty()) q.push_back({"to", o->to});
      if (!o->tenant.empty()) q.push_back({"tenant", o->tenant});
      if (!o->export_format.empty()) q.push_back({"format", o->export_format});
      auto r = c->get("/invoices", q);
      if (!r) return ctx.fail(r.error());
      if (r->is_string()) {
        ctx.out() << r->get<std::string>();
        return kExitOk;
      }
      return ctx.emit(*r, [&](std::ostream& out) { print_invoice(out, *r); });
    };
  });

  auto month = std::make_shared<std::string>();
  auto* close = inv->add_subcommand("close", "issue every tenant's invoices for an ended month now (operators)");
  close->add_option("--month", *month, "the month, YYYY-MM (UTC); it must have ended")->required();
  close->callback([&ctx, month] {
    ctx.action = [&ctx, month] {
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      auto r = c->post("/invoices/close", json{{"month", *month}});
      if (!r) return ctx.fail(r.error());
      return ctx.emit(*r, [&](std::ostream& out) {
        if (r->value("already_closed", false)) out << "month " << *month << " was already closed\n";
        else out << "closed " << *month << ": " << r->at("issued").size() << " invoice(s) issued\n";
        for (const auto& t : r->value("failed_tenants", json::array()))
          out << "not rated (see the server log): tenant " << t.get<std::string>() << "\n";
      });
    };
  });

  struct StateOpts {
    std::string id, text;
  };
  for (const bool pay : {true, false}) {
    auto so = std::make_shared<StateOpts>();
    auto* cmd = inv->add_subcommand(pay ? "pay" : "void", pay ? "record an issued invoice as paid (operators)"
                                                               : "void an unpaid, uncredited issued invoice (operators)");
    cmd->add_option("id", so->id, "issued invoice id or number")->required();
    if (pay)
      cmd->add_option("--reference", so->text, "the payment's reference (bank transfer id)");
    else
      cmd->add_option("--reason", so->text, "why it is void")->required();
    cmd->callback([&ctx, so, pay] {
      ctx.action = [&ctx, so, pay] {
        int rc = kExitOk;
        ApiClient* c = ctx.client(&rc);
        if (!c) return rc;
        json body = json::object();
        if (!so->text.empty()) body[pay ? "reference" : "reason"] = so->text;
        auto r = c->post("/issued-invoices" + seg(so->id) + (pay ? "/pay" : "/void"), body);
        if (!r) return ctx.fail(r.error());
        return ctx.emit(*r, [&](std::ostream& out) {
          out << "invoice " << r->value("number", "") << " is " << r->value("state", "") << "\n";
        });
      };
    });
  }

  auto vid = std::make_shared<std::string>();
  auto* verify = inv->add_subcommand("verify", "recompute an issued invoice's content hash and compare it");
  verify->add_option("id", *vid, "issued invoice id or number")->required();
  verify->callback([&ctx, vid] {
    ctx.action = [&ctx, vid] {
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      auto r = c->get("/issued-invoices" + seg(*vid) + "/verify");
      if (!r) return ctx.fail(r.error());
      const bool ok = r->value("verified", false);
      const int code = ctx.emit(*r, [&](std::ostream& out) {
        out << r->value("number", "") << (ok ? ": hash verified " : ": HASH MISMATCH, stored ") << r->value("hash", "")
            << "\n";
      });
      return ok ? code : kExitFailed;
    };
  });

  struct PrintOpts {
    std::string id, lang = "en";
  };
  auto po = std::make_shared<PrintOpts>();
  auto* print = inv->add_subcommand("print", "write an issued invoice as HTML that prints to A4 (redirect to a file)");
  print->add_option("id", po->id, "issued invoice id or number")->required();
  print->add_option("--lang", po->lang, "en or zh")->check(CLI::IsMember({"en", "zh"}))->capture_default_str();
  print->callback([&ctx, po] {
    ctx.action = [&ctx, po] {
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      auto r = c->get("/issued-invoices" + seg(po->id) + "/print", {{"lang", po->lang}});
      if (!r) return ctx.fail(r.error());
      ctx.out() << (r->is_string() ? r->get<std::string>() : r->dump());
      return kExitOk;
    };
  });

  // `gpurent balance TENANT`: the balances live; `gpurent billing TENANT ...`: how it pays.
  auto bt = std::make_shared<std::string>();
  auto* bal = app.add_subcommand("balance", "a tenant's balances live: top-ups, invoices, drafts, burn per hour, runway");
  bal->add_option("tenant", *bt, "tenant id or name")->required();
  bal->callback([&ctx, bt] {
    ctx.action = [&ctx, bt] {
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      auto r = c->get("/tenants" + seg(*bt) + "/balance");
      if (!r) return ctx.fail(r.error());
      return ctx.emit(*r, [&](std::ostream& out) {
        out << "tenant   " << r->value("tenant", "") << " (" << r->value("payment", "") << ", "
            << (r->value("watched", false) ? "watched" : "not watched") << ")\n\n";
        Table t({{"CURRENCY"}, {"TOP-UPS", Align::kRight}, {"INVOICED", Align::kRight}, {"ACCRUING", Align::kRight},
                 {"LIMIT", Align::kRight}, {"AVAILABLE", Align::kRight}, {"BURN/H", Align::kRight}, {"RUNWAY", Align::kRight}});
        for (const auto& b : r->value("balances", json::array()))
          t.add_row({b.value("currency", ""), b.value("top_ups", ""), b.value("invoiced", ""), b.value("accruing", ""),
                     b.value("credit_limit", "-"), b.value("available", "-"), b.value("burn_per_hour", ""),
                     b.contains("runway_minutes") ? std::to_string(b["runway_minutes"].get<int64_t>()) + " min" : "-"});
        t.print(out);
      });
    };
  });

  struct BillingOpts {
    std::string tenant, payment, credit_limit;
    std::optional<int64_t> runway, stop;
  };
  auto bo = std::make_shared<BillingOpts>();
  auto* bill = app.add_subcommand("billing", "set how a tenant pays and when its work stops (operators; a tenant's "
                                             "admin: its runway alert)");
  bill->add_option("tenant", bo->tenant, "tenant id or name")->required();
  bill->add_option("--payment", bo->payment, "prepaid or postpaid")->check(CLI::IsMember({"prepaid", "postpaid"}))->required();
  bill->add_option("--credit-limit", bo->credit_limit, "postpaid: the most it may owe, in its currency");
  bill->add_option("--runway-alert-minutes", bo->runway, "alert when the money left covers fewer minutes (0: none)");
  bill->add_option("--stop-minutes", bo->stop, "stop running work when the money left covers fewer minutes");
  bill->callback([&ctx, bo] {
    ctx.action = [&ctx, bo] {
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      json body = {{"payment", bo->payment}};
      if (!bo->credit_limit.empty()) body["credit_limit"] = bo->credit_limit;
      if (bo->runway) body["runway_alert_minutes"] = *bo->runway;
      if (bo->stop) body["stop_minutes"] = *bo->stop;
      auto r = c->put("/tenants" + seg(bo->tenant) + "/billing", body);
      if (!r) return ctx.fail(r.error());
      return ctx.emit(*r, [&](std::ostream& out) { out << r->dump(2) << "\n"; });
    };
  });

  // `gpurent procurement TENANT [--set SUPPLIER=PERMILLE ...|--clear] [--from --to]`: the tenant's
  // procurement split against what it achieved; --set/--clear replace the split first.
  struct ProcurementOpts {
    std::string tenant, from, to;
    std::vector<std::string> set;
    bool clear = false;
  };
  auto pr = std::make_shared<ProcurementOpts>();
  auto* proc = app.add_subcommand("procurement", "a tenant's procurement split (the advisor's, adopted) against the "
                                                 "shares it achieved; --set or --clear changes it");
  proc->add_option("tenant", pr->tenant, "tenant id or name")->required();
  auto* set_opt = proc->add_option("--set", pr->set,
                                   "SUPPLIER=PERMILLE, once per supplier (e.g. --set huadong=600 --set runpod=400): "
                                   "replaces the split (operators and the tenant's admin)");
  proc->add_flag("--clear", pr->clear, "remove the split")->excludes(set_opt);
  proc->add_option("--from", pr->from, "start of the GPU-hours window (default: this UTC month)");
  proc->add_option("--to", pr->to, "end of the window (default: now)");
  proc->callback([&ctx, pr] {
    ctx.action = [&ctx, pr] {
      json split = json::array();
      for (const std::string& kv : pr->set) {
        const auto eq = kv.find('=');
        const std::string n = eq == std::string::npos ? "" : kv.substr(eq + 1);
        if (eq == std::string::npos || eq == 0 || n.empty() || n.size() > 4 ||
            n.find_first_not_of("0123456789") != std::string::npos || std::stoll(n) < 1 || std::stoll(n) > 1000)
          return ctx.fail(Error::invalid("--set", "expected SUPPLIER=PERMILLE (an integer 1..1000), got " + kv), kExitUsage);
        split.push_back({{"supplier", kv.substr(0, eq)}, {"share_permille", std::stoll(n)}});
      }
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      std::string q;
      if (!pr->from.empty()) q += "from=" + url_encode(pr->from);  // a '+' of a UTC offset stays a '+'
      if (!pr->to.empty()) q += std::string(q.empty() ? "" : "&") + "to=" + url_encode(pr->to);
      const std::string path = "/tenants" + seg(pr->tenant) + "/procurement" + (q.empty() ? "" : "?" + q);
      auto r = pr->clear || !pr->set.empty() ? c->put(path, json{{"procurement_split", split}}) : c->get(path);
      if (!r)
        return ctx.fail(name_flags(r.error(), {{"procurement_split", "--set"}, {"from", "--from"}, {"to", "--to"}}));
      return ctx.emit(*r, [&](std::ostream& out) {
        out << "tenant   " << r->value("tenant", "") << (r->value("split", false) ? "" : " (no procurement split)")
            << "\nwindow   " << r->value("from", "") << " .. " << r->value("to", "") << "\n\n";
        Table t({{"SUPPLIER"}, {"TARGET ‰", Align::kRight}, {"HELD GPUS", Align::kRight}, {"HELD ‰", Align::kRight},
                 {"GPU-HOURS", Align::kRight}, {"GPU-HOURS ‰", Align::kRight}});
        for (const auto& w : r->value("suppliers", json::array())) {
          const std::string name = w.value("supplier_name", "");
          t.add_row({name.empty() ? w.value("supplier", "") : name, std::to_string(w.value("target_permille", 0)),
                     w.value("held_gpus", ""), std::to_string(w.value("held_permille", 0)), w.value("gpu_hours", ""),
                     std::to_string(w.value("gpu_hours_permille", 0))});
        }
        t.print(out);
        out << "total    " << r->value("held_gpus", "") << " GPUs held, " << r->value("gpu_hours", "") << " GPU-hours\n";
      });
    };
  });
}

}  // namespace gpurent
