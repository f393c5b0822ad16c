#include "model/contract.h"

#include "model/record_codec.h"

#include <algorithm>
#include <set>

namespace gpurent {

int64_t most_defaulted(const std::vector<CommitmentDefault>& defaults) {
  int64_t most = 0;
  for (const auto& at : defaults) {  // the sum is largest at some default's start
    int64_t n = 0;
    for (const auto& d : defaults)
      if (d.from <= at.from && at.from < d.to) n += d.gpus;
    most = std::max(most, n);
  }
  return most;
}

int64_t most_withheld_from(const ContractCommitment& m, TimeMs from) {
  std::vector<CommitmentDefault> all = m.defaults;
  for (const auto& x : m.resales) all.push_back({x.gpus, x.from, x.to, "", "", std::nullopt, std::nullopt});
  for (auto& x : all) x.from = std::max(x.from, from);
  all.erase(std::remove_if(all.begin(), all.end(), [](const auto& x) { return x.to <= x.from; }), all.end());
  return most_defaulted(all);
}

std::vector<CommitmentDefault> read_commitment_defaults(Fields& f, int64_t gpus, TimeMs start, TimeMs end,
                                                        Currency currency) {
  std::vector<CommitmentDefault> out;
  f.objects("defaults", false, kMaxCommitmentDefaults, [&](Fields& df, size_t) {
    CommitmentDefault d;
    d.gpus = df.integer("gpus", 1, gpus);
    d.from = df.time("from");
    d.to = df.time("to");
    d.reason = df.opt_str("reason", {.max_len = 1024}).value_or("");
    d.node = df.opt_str("node", {.max_len = 63}).value_or("");
    d.compensation_price_per_gpu_hour = df.opt_money("compensation_price_per_gpu_hour", currency);
    d.compensation_pct = df.opt_integer("compensation_pct", 0, 1000);
    if (d.compensation_price_per_gpu_hour && d.compensation_price_per_gpu_hour->micros() <= 0)
      df.error("compensation_price_per_gpu_hour", Message("contract.commitment.price_positive"));
    if (d.to <= d.from) df.error("to", Message("contract.commitment.ends_after_start"));
    else if (d.from < start || d.to > end) df.error("from", Message("contract.commitment.default_in_window"));
    df.finish();
    out.push_back(std::move(d));
  });
  return out;
}

std::vector<CommitmentResale> read_commitment_resales(Fields& f, int64_t gpus, Currency currency) {
  std::vector<CommitmentResale> out;
  f.objects("resales", false, kMaxCommitmentResales, [&](Fields& rf, size_t) {
    CommitmentResale x;
    x.gpus = rf.integer("gpus", 1, gpus);
    x.from = rf.time("from");
    x.to = rf.time("to");
    x.price_per_gpu_hour = rf.money("price_per_gpu_hour", currency);
    x.trade = rf.str("trade", {.max_len = 63});
    if (x.to <= x.from) rf.error("to", Message("contract.commitment.ends_after_start"));
    rf.objects("undelivered", false, kMaxCommitmentDefaults, [&](Fields& uf, size_t) {
      ResaleUndelivered u;
      u.gpus = uf.integer("gpus", 1, x.gpus);
      u.from = uf.time("from");
      u.to = uf.time("to");
      u.node = uf.opt_str("node", {.max_len = 63}).value_or("");
      if (u.to <= u.from)
        uf.error("to", Message("contract.commitment.ends_after_start"));
      else if (u.from < x.from || u.to > x.to)
        uf.error("from", Message("contract.commitment.default_in_window"));
      uf.finish();
      x.undelivered.push_back(std::move(u));
    });
    std::vector<CommitmentDefault> as_defaults;
    for (const auto& u : x.undelivered)
      as_defaults.push_back({u.gpus, u.from, u.to, "", u.node, std::nullopt, std::nullopt});
    if (most_defaulted(as_defaults) > x.gpus)
      rf.error("undelivered", Message("contract.commitment.defaults_exceed").arg("gpus", std::to_string(x.gpus)));
    rf.finish();
    out.push_back(std::move(x));
  });
  return out;
}

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
  f.objects("commitments", false, kMaxContractCommitments, [&](Fields& cf, size_t) {
    ContractCommitment m;
    m.name = cf.str("name", slug);
    if (!m.name.empty() && !names.insert(m.name).second) cf.error("name", Message("contract.commitment.name_taken"));
    m.offer = cf.str("offer", ref);
    m.gpus = cf.integer("gpus", 1, 1'000'000);
    m.starts_at = cf.time("starts_at");
    m.prepaid = cf.boolean("prepaid", false);
    m.ends_at = cf.opt_time("ends_at");
    m.price_per_gpu_hour = cf.opt_money("price_per_gpu_hour", c.currency);
    if (m.ends_at || m.price_per_gpu_hour) {  // a market commitment: a window at a price, no term
      m.term_months = 0;
      if (!m.ends_at) cf.error("ends_at", Message("contract.commitment.market_pair"));
      if (!m.price_per_gpu_hour) cf.error("price_per_gpu_hour", Message("contract.commitment.market_pair"));
      else if (m.price_per_gpu_hour->micros() <= 0) cf.error("price_per_gpu_hour", Message("contract.commitment.price_positive"));
      if (m.ends_at && *m.ends_at <= m.starts_at) cf.error("ends_at", Message("contract.commitment.ends_after_start"));
      if (cf.has("term_months")) cf.error("term_months", Message("contract.commitment.market_no_term"));
      cf.ignore({"term_months"});
      if (m.prepaid) cf.error("prepaid", Message("contract.commitment.market_not_prepaid"));
      m.trade = cf.opt_str("trade", {.max_len = 63, .pattern = kRefPattern, .pattern_help = kRefHelp}).value_or("");
      m.defaults = read_commitment_defaults(cf, m.gpus, m.starts_at, m.ends_at.value_or(m.starts_at), c.currency);
      m.resales = read_commitment_resales(cf, m.gpus, c.currency);
      if (most_defaulted(m.defaults) > m.gpus)
        cf.error("defaults", Message("contract.commitment.defaults_exceed").arg("gpus", std::to_string(m.gpus)));
    } else {
      m.term_months = cf.integer("term_months", 1, 36);
      if (m.term_months != 1 && m.term_months != 12 && m.term_months != 36)
        cf.error("term_months", Message("contract.commitment.term"));
      for (const char* k : {"trade", "defaults", "resales"})
        if (cf.has(k)) cf.error(k, Message("contract.commitment.market_only"));
      cf.ignore({"trade", "defaults", "resales"});
    }
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
  for (const auto& m : c.commitments) {
    json j = {{"name", m.name}, {"offer", m.offer}, {"gpus", m.gpus}, {"starts_at", format_rfc3339(m.starts_at)},
              {"prepaid", m.prepaid}};
    if (!m.market()) {
      j["term_months"] = m.term_months;
    } else {
      j["ends_at"] = format_rfc3339(*m.ends_at);
      j["price_per_gpu_hour"] = m.price_per_gpu_hour->amount_string();
      if (!m.trade.empty()) j["trade"] = m.trade;
      json ds = json::array();
      for (const auto& d : m.defaults) {
        json dj = {{"gpus", d.gpus}, {"from", format_rfc3339(d.from)}, {"to", format_rfc3339(d.to)}};
        if (!d.reason.empty()) dj["reason"] = d.reason;
        if (!d.node.empty()) dj["node"] = d.node;
        if (d.compensation_price_per_gpu_hour)
          dj["compensation_price_per_gpu_hour"] = d.compensation_price_per_gpu_hour->amount_string();
        if (d.compensation_pct) dj["compensation_pct"] = *d.compensation_pct;
        ds.push_back(std::move(dj));
      }
      if (!ds.empty()) j["defaults"] = std::move(ds);
      json rs = json::array();
      for (const auto& x : m.resales) {
        json xj = {{"gpus", x.gpus},
                   {"from", format_rfc3339(x.from)},
                   {"to", format_rfc3339(x.to)},
                   {"price_per_gpu_hour", x.price_per_gpu_hour.amount_string()},
                   {"trade", x.trade}};
        for (const auto& u : x.undelivered) {
          json uj = {{"gpus", u.gpus}, {"from", format_rfc3339(u.from)}, {"to", format_rfc3339(u.to)}};
          if (!u.node.empty()) uj["node"] = u.node;
          xj["undelivered"].push_back(std::move(uj));
        }
        rs.push_back(std::move(xj));
      }
      if (!rs.empty()) j["resales"] = std::move(rs);
    }
    commitments.push_back(std::move(j));
  }
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
