// `gpurent rate -f scenario.yaml`: rates a self-contained scenario (offers, contract, commitments,
// allocations, usage, measurements, period; docs/billing.md) locally with the same engine the
// server uses, and prints the lines and totals. No server involved. Bad input exits 2.
#include <memory>

#include "billing/rating_input_parse.h"
#include "billing/rating_output.h"
#include "catalog/gpu_catalog.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "io/files.h"

namespace gpurent {
namespace {

struct RateOpts {
  std::string file;
  std::string catalog;
  std::string export_format;  // "", csv, focus
};

void print_lines(std::ostream& out, const RatingResult& r) {
  Table t({{"KIND"}, {"RULE"}, {"PROJECT"}, {"JOB"}, {"ALLOCATION"}, {"QUANTITY", Align::kRight}, {"UNIT"},
           {"UNIT PRICE", Align::kRight}, {"PER"}, {"AMOUNT", Align::kRight}});
  for (const auto& l : r.lines)
    t.add_row({enum_name(kLineKindNames, l.kind), l.rule, l.project, l.job, l.allocation, l.quantity, l.unit, l.unit_price,
               l.price_unit, l.amount.amount_string()});
  t.print(out);
  const std::string cur = currency_code(r.currency);
  out << "\nperiod   " << format_rfc3339(r.from) << " .. " << format_rfc3339(r.to) << "\n"
      << "charges  " << r.charges.amount_string() << " " << cur << "\n"
      << "credits  " << r.credits.amount_string() << " " << cur << "\n"
      << "total    " << r.total.amount_string() << " " << cur << "\n";
}

int run_rate(CliContext& ctx, const RateOpts& o) {
  auto doc = ctx.read_document(o.file);
  if (!doc) return ctx.fail(doc.error(), kExitUsage);
  auto catalog = load_catalog_file(o.catalog.empty() ? default_catalog_path() : o.catalog);
  if (!catalog) return ctx.fail(catalog.error(), kExitUsage);
  auto input = parse_rating_input(*doc, *catalog);
  if (!input) return ctx.fail(input.error(), kExitUsage);
  auto rated = rate(*input);
  if (!rated) return ctx.fail(rated.error(), kExitUsage);
  if (o.export_format == "csv") {
    ctx.out() << to_csv(*rated);
    return kExitOk;
  }
  if (o.export_format == "focus") {
    ctx.out() << to_focus_csv(*rated, scenario_parties(*input));
    return kExitOk;
  }
  return ctx.emit(to_json(*rated), [&](std::ostream& out) { print_lines(out, *rated); });
}

}  // namespace

void add_rate_command(CLI::App& app, CliContext& ctx) {
  auto o = std::make_shared<RateOpts>();
  auto* cmd = app.add_subcommand("rate", "rate a billing scenario file locally (docs/billing.md): lines and totals");
  cmd->add_option("-f,--file", o->file, "scenario file, YAML or JSON ('-' = standard input)")->required();
  cmd->add_option("--catalog", o->catalog, "GPU catalog file (default: the one shipped with gpurent)");
  cmd->add_option("--export", o->export_format, "print the lines as csv, or as FinOps FOCUS columns (focus)")
      ->check(CLI::IsMember({"csv", "focus"}));
  cmd->callback([&ctx, o] { ctx.action = [&ctx, o] { return run_rate(ctx, *o); }; });
}

}  // namespace gpurent
