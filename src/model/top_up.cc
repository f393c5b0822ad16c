#include "model/top_up.h"

#include "model/enums_supply.h"

namespace gpurent {
namespace {

constexpr StrRule kReference{
    .min_len = 1, .max_len = 128, .pattern = "[A-Za-z0-9][A-Za-z0-9._:/-]*", .pattern_help = "pattern.reference"};

void check_amount(Fields& f, const std::optional<Money>& a) {
  if (!a) return;
  if (a->micros() == 0) f.error("amount", Message("top_up.amount_zero"));
  if (a->micros() > kMaxTopUpUnits * 1'000'000 || a->micros() < -kMaxTopUpUnits * 1'000'000)
    f.error("amount", Message("top_up.amount_range").arg("max", std::to_string(kMaxTopUpUnits)));
}

}  // namespace

Result<TopUp> parse_top_up(const json& body, Currency c) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  TopUp t;
  t.tenant = f.str("tenant", {.max_len = 63, .pattern = kRefPattern, .pattern_help = kRefHelp});
  if (f.has("currency")) {
    const size_t before = errs.list().size();
    const Currency given = f.enumeration("currency", kCurrencies);
    if (errs.list().size() == before) c = given;
  }
  auto amount = f.opt_money("amount", c, true);
  if (!amount && !f.has("amount")) f.error("amount", FieldReason{"field.required"});
  check_amount(f, amount);
  t.amount = amount.value_or(Money::zero(c));
  t.reference = f.str("reference", kReference);
  t.note = f.opt_str("note", {.min_len = 0, .max_len = 500}).value_or("");
  if (amount && amount->micros() < 0 && t.note.empty()) f.error("note", Message("top_up.note_for_correction"));
  f.finish();
  if (!errs.empty()) return errs.to_error();
  return t;
}

Result<TopUp> decode_top_up(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  TopUp t;
  t.tenant_id = f.str("tenant_id", {.min_len = 1, .max_len = 64});
  const Currency c = f.enumeration("currency", kCurrencies);
  t.amount = f.opt_money("amount", c, true).value_or(Money::zero(c));
  t.reference = f.str("reference", {.min_len = 1, .max_len = 128});
  t.note = f.opt_str("note", {.min_len = 0, .max_len = 500}).value_or("");
  t.source = f.enumeration("source", kTopUpSourceNames, std::optional(TopUpSource::kOperator));
  t.by = f.opt_str("by", {.min_len = 0, .max_len = 64}).value_or("");
  if (!errs.empty()) return errs.to_error();
  return t;
}

json to_json(const TopUp& t) {
  return {{"tenant_id", t.tenant_id},
          {"currency", currency_code(t.amount.currency())},
          {"amount", t.amount.amount_string()},
          {"reference", t.reference},
          {"note", t.note},
          {"source", enum_name(kTopUpSourceNames, t.source)},
          {"by", t.by}};
}

}  // namespace gpurent
