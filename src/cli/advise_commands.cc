// `gpurent advise fingerprint|tco|mix|quotes|suppliers|poc|hedge -f input.yaml`: the advisor's
// calculators (POST /api/v1/advise/<calculator>, docs/advisor.md). The input is YAML or JSON;
// the answer prints as its summary, the key figures and (unless --brief) every step of its arithmetic, in the
// locale's language or the one --lang names (the server words the texts), or whole with -o json|yaml.
#include <memory>

#include "cli/commands.h"
#include "cli/output.h"

namespace gpurent {
namespace {

struct AdviseOpts {
  std::string file, lang;  // lang: "" follows the locale (Accept-Language)
  bool brief = false;      // the summary and key figures only, not the arithmetic
};

// A text the server worded in the request's language: a string, or an object's "text".
std::string text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("text") && v["text"].is_string()) return v["text"].get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

std::string str(const json& v) { return v.is_string() ? v.get<std::string>() : v.is_null() ? "" : v.dump(); }

void key_figures(std::ostream& out, const std::string& calc, const json& r) {
  if (calc == "quotes") {
    // The true-cost ranking, with the month's total so two offers' gap reads in money.
    const std::string cur = str(r.value("currency", json()));
    Table t({{"RANK", Align::kRight},
             {"OFFER"},
             {"PLAN"},
             {"MONTH TOTAL " + cur, Align::kRight},
             {"PER USEFUL GPU-HOUR", Align::kRight},
             {"LIST PRICE", Align::kRight},
             {"LIST RANK", Align::kRight}});
    for (const auto& o : r.value("ranking", json::array()))
      t.add_row({str(o["rank"]), str(o["offer"]), str(o["plan"]), str(o["total"]), str(o["per_useful_gpu_hour"]),
                 str(o["list_price"]), str(o["list_rank"])});
    t.print(out, 0);
    out << text(r.value("misleads", json())) << "\n";
  } else if (calc == "suppliers") {
    Table t({{"SUPPLIER"}, {"SCORE", Align::kRight}, {"BLOCKED BY"}, {"SHARE", Align::kRight}});
    for (const auto& s : r.value("suppliers", json::array())) {
      std::string blocked;
      for (const auto& f : s.value("hard_failures", json::array())) blocked += (blocked.empty() ? "" : ", ") + str(f);
      t.add_row({str(s["name"]), str(s["score"]), blocked, str(s["share_pct"]) + " %"});
    }
    t.print(out, 0);
    out << text(r.value("split", json::object())) << "\n";
  } else if (calc == "poc") {
    Table t({{"SUPPLIER"}, {"VERDICT"}, {"REASON"}});
    for (const auto& s : r.value("suppliers", json::array()))
      t.add_row({str(s["name"]), str(s["verdict"]), text(s.value("reason", json()))});
    t.print(out, 0);
  } else if (calc == "hedge") {
    const std::string cur = str(r.value("currency", json()));
    Table t({{"HEDGED", Align::kRight}, {"GPU-H/PERIOD", Align::kRight}, {"MEAN COST " + cur, Align::kRight},
             {"STDEV", Align::kRight}, {"WASTED GPU-H", Align::kRight}});
    for (const auto& o : r.value("curve", json::array()))
      t.add_row({str(o["share_pct"]) + " %", str(o["hedged_gpu_hours"]), str(o["mean_cost"]), str(o["stdev_cost"]),
                 str(o["wasted_gpu_hours"])});
    t.print(out, 0);
  } else if (calc == "mix") {
    out << "expected cost      " << str(r["expected_cost"]) << " " << str(r["currency"]) << "\n"
        << "pure on-demand     " << str(r["pure_on_demand_cost"]) << "\n"
        << "best single level  "
        << (r["best_single_level"].is_object() ? str(r["best_single_level"].value("cost", json())) : std::string("-"))
        << "\n";
    for (const auto& p : r["plan"].value("reserved", json::array()))
      out << "reserve            " << str(p["gpus"]) << " GPUs " << str(p["mode"]) << " of " << str(p["offer"]) << "\n";
  }
}

}  // namespace

void add_advise_commands(CLI::App& app, CliContext& ctx) {
  auto* adv = app.add_subcommand("advise",
                                 "the advisor: workload fingerprint, rent vs build, reserved/on-demand/spot "
                                 "mix, true-cost quotes, supplier score, POC plan, hedging (docs/advisor.md)");
  adv->require_subcommand(1);
  const std::vector<std::pair<std::string, std::string>> calcs = {
      {"fingerprint", "a job's bottleneck and the GPUs, interconnect and storage that run it cheaper or faster"},
      {"tco", "rent vs build: cost per useful GPU-hour of owning, against offers"},
      {"mix", "the cheapest reserved / on-demand / spot mix for an hourly demand curve"},
      {"quotes", "offers ranked by true cost per useful GPU-hour for a workload, every fee included"},
      {"suppliers", "supplier due-diligence scores and a procurement split"},
      {"poc", "the 48-hour POC acceptance plan per supplier, and its verdict"},
      {"hedge", "the cost and its swings when a share of the GPU-hours is bought forward"}};
  for (const auto& [calc, help] : calcs) {
    auto o = std::make_shared<AdviseOpts>();
    auto* sub = adv->add_subcommand(calc, help);
    sub->add_option("-f,--file", o->file,
                    "YAML or JSON input ('-' reads stdin); schema in docs/advisor/" + calc + ".md")
        ->required();
    sub->add_option("--lang", o->lang, "language of the explanation: en or zh (default: the locale's)")
        ->check(CLI::IsMember({"en", "zh"}));
    sub->add_flag("--brief", o->brief, "print the summary and key figures only, not every step of the arithmetic");
    sub->callback([&ctx, o, calc = calc] {
      ctx.action = [&ctx, o, calc] {
        auto doc = ctx.read_document(o->file);
        if (!doc) return ctx.fail(doc.error());
        int rc = kExitOk;
        ApiClient* c = ctx.client(&rc);
        if (!c) return rc;
        auto r = c->post("/advise/" + calc + (o->lang.empty() ? "" : "?lang=" + o->lang), *doc);
        if (!r) return ctx.fail(r.error());
        return ctx.emit(*r, [&](std::ostream& out) {
          const std::string summary = text(r->value("summary", json()));
          if (!summary.empty() && summary.front() != '{') out << summary << "\n\n";
          key_figures(out, calc, *r);
          if (o->brief) return;
          out << "\n" << (o->lang == "zh" ? "计算过程" : "arithmetic") << ":\n";
          for (const auto& s : r->value("steps", json::array())) {
            out << "  - " << text(s);
            if (s.contains("formula")) out << ": " << str(s["formula"]);
            out << "\n";
          }
        });
      };
    });
  }
}

}  // namespace gpurent
