#include "model/contract.h"

#include "model/record_codec.h"

#include <set>

namespace gpurent {

Result<Contract> parse_contract(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  Contract c;
  const StrRule ref{.max_len = 63, .pattern = kRefPattern, .pattern_help = kRefHelp};
  const StrRule slug{.max_len = 63, .pattern = kSlug, .pattern_help = kSlugHelp};
  c.name = f.str("name", slug);
  c.tenant = f.str("tenant", ref);
  c.supplier = f.str("supplier", ref);
  const size_t before = errs.list().size();
  c.offers = f.str_list("offers", ref, /*required=*/true);
  if (errs.list().size() == before) {
    if (c.offers.empty()) f.error("offers", Message("contract.offers.empty"));
    if (c.offers.size() > 64) f.error("offers", Message("contract.offers.too_many").arg("max", "64"));
    std::set<std::string> seen;
    for (size_t i = 0; i < c.offers.size(); ++i)
      if (!seen.insert(c.offers[i]).second) f.error("offers[" + std::to_string(i) + "]", Message("contract.offers.listed_twice"));
  }
  c.currency = [&] {
    auto s = f.str("currency", {.min_len = 3, .max_len = 3});
    auto cur = parse_currency(s);
    if (!cur && !s.empty()) f.error("currency", Message("contract.currency.unknown"));
    return cur ? *cur : Currency::kUSD;
  }();
  f.object("clauses", false, [&](Fields& cf) {
    c.clauses = parse_contract_template(cf, nullptr);
    cf.finish();
  });
  c.nccl_compensation_pct = f.opt_integer("nccl_compensation_pct", 0, 1000).value_or(200);
  c.performance_remedy =
      f.enumeration("performance_remedy", kPerformanceRemedyNames, std::optional(PerformanceRemedy::kProportional));
  c.cap_credits = f.boolean("cap_credits", true);
  c.reserved_overflow =
      f.enumeration("reserved_overflow", kReservedOverflowNames, std::optional(ReservedOverflow::kOnDemand));
  std::set<std::string> names;
  f.objects("commitments", false, 256, [&](Fields& cf, size_t) {
    ContractCommitment m;
    m.name = cf.str("name", slug);
    if (!m.name.empty() && !names.insert(m.name).second) cf.error("name", Message("contract.commitment.name_taken"));
    m.offer = cf.str("offer", ref);
    m.gpus = cf.integer("gpus", 1, 1'000'000);
    m.term_months = cf.integer("term_months", 1, 36);
    if (m.term_months != 1 && m.term_months != 12 && m.term_months != 36)
      cf.error("term_months", Message("contract.commitment.term"));
    m.starts_at = cf.time("starts_at");
    m.prepaid = cf.boolean("prepaid", false);
    cf.finish();
    if (!m.offer.empty() && std::find(c.offers.begin(), c.offers.end(), m.offer) == c.offers.end())
      cf.error("offer", Message("contract.commitment.offer_not_listed"));
    c.commitments.push_back(std::move(m));
  });
  c.starts_at = f.time("starts_at");
  f.object("exit", false, [&](Fields& ef) {
    c.exit_notice_at = ef.time("notice_at");
    c.exit_at = ef.opt_time("exit_at");
    ef.finish();
  });
  ignore_server_keys(f);
  f.ignore({"tenant_id", "supplier_id", "offer_ids"});
  f.finish();
  if (!errs.empty()) return errs.to_error();
  return c;
}

Result<Contract> decode_contract(const json& body) {
  return with_server_keys(parse_contract(body), body, [](Fields& f, Contract& c) {
    c.tenant_id = f.opt_str("tenant_id", kServerText).value_or("");
    c.supplier_id = f.opt_str("supplier_id", kServerText).value_or("");
    c.offer_ids = f.str_list("offer_ids", kServerText);
  });
}

json to_json(const Contract& c) {
  json commitments = json::array();
  for (const auto& m : c.commitments)
    commitments.push_back({{"name", m.name},
                           {"offer", m.offer},
                           {"gpus", m.gpus},
                           {"term_months", m.term_months},
                           {"starts_at", format_rfc3339(m.starts_at)},
                           {"prepaid", m.prepaid}});
  json j = {{"name", c.name},
            {"tenant", c.tenant},
            {"supplier", c.supplier},
            {"offers", c.offers},
            {"currency", currency_code(c.currency)},
            {"nccl_compensation_pct", c.nccl_compensation_pct},
            {"performance_remedy", enum_name(kPerformanceRemedyNames, c.performance_remedy)},
            {"cap_credits", c.cap_credits},
            {"reserved_overflow", enum_name(kReservedOverflowNames, c.reserved_overflow)},
            {"commitments", std::move(commitments)},
            {"starts_at", format_rfc3339(c.starts_at)}};
  if (c.clauses) j["clauses"] = to_json(*c.clauses);
  if (c.exit_notice_at) {
    j["exit"] = {{"notice_at", format_rfc3339(*c.exit_notice_at)}};
    if (c.exit_at) j["exit"]["exit_at"] = format_rfc3339(*c.exit_at);
  }
  if (!c.tenant_id.empty()) j["tenant_id"] = c.tenant_id;
  if (!c.supplier_id.empty()) j["supplier_id"] = c.supplier_id;
  if (!c.offer_ids.empty()) j["offer_ids"] = c.offer_ids;
  return j;
}

IndexCols index_of(const Contract& c) {
  IndexCols i;
  i.name = c.name;
  i.tenant_id = c.tenant_id;
  i.supplier_id = c.supplier_id;
  return i;
}

}  // namespace gpurent
