// rate(): validation of cross-references, the parts in order, line finishing and totals.
#include "billing/rating.h"

#include <algorithm>
#include <set>

#include "billing/rating_impl.h"
#include "core/message.h"

namespace gpurent {
namespace {


struct Civil {
  int64_t y;
  unsigned m, d;
};

Civil civil_from_days(int64_t z) {  // H. Hinnant's algorithm, proleptic Gregorian
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t y = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  return {y + (m <= 2), m, d};
}

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

unsigned days_in_month(int64_t y, unsigned m) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

}  // namespace

TimeMs month_start(TimeMs t) {
  const int64_t days = floor_div(t, kMsPerDay);
  const Civil c = civil_from_days(days);
  return days_from_civil(c.y, c.m, 1) * kMsPerDay;
}

TimeMs day_start(TimeMs t) { return floor_div(t, kMsPerDay) * kMsPerDay; }

TimeMs add_months(TimeMs t, int64_t months) {
  const int64_t days = floor_div(t, kMsPerDay);
  const TimeMs in_day = t - days * kMsPerDay;
  const Civil c = civil_from_days(days);
  const int64_t idx = c.y * 12 + (c.m - 1) + months;
  const int64_t y = floor_div(idx, 12);
  const unsigned m = static_cast<unsigned>(idx - y * 12 + 1);
  const unsigned d = std::min(c.d, days_in_month(y, m));
  return days_from_civil(y, m, d) * kMsPerDay + in_day;
}

std::optional<TimeMs> effective_exit(const ContractTerms& c) {
  if (!c.exit_at && !c.exit_notice_at) return std::nullopt;
  const TimeMs notice = c.exit_notice_at.value_or(*c.exit_at);
  const TimeMs earliest = notice + c.clauses.exit_notice_days * kMsPerDay;
  return std::max(c.exit_at.value_or(earliest), earliest);
}

const Offer& offer_in_force(const RatingInput& in, const std::string& name, TimeMs t) {
  if (auto h = in.offer_history.find(name); h != in.offer_history.end())
    for (const auto& v : h->second)
      if (t < v.until) return v.offer;
  return in.offers.at(name);
}

std::vector<std::pair<TimeMs, TimeMs>> version_cuts(const RatingInput& in, const std::string& name, TimeMs t0,
                                                    TimeMs t1) {
  std::vector<std::pair<TimeMs, TimeMs>> out;
  TimeMs t = t0;
  if (auto h = in.offer_history.find(name); h != in.offer_history.end())
    for (const auto& v : h->second)
      if (v.until > t && v.until < t1) {
        out.push_back({t, v.until});
        t = v.until;
      }
  if (t < t1) out.push_back({t, t1});
  return out;
}

std::string format_scaled(__int128 v, int scale) {
  const bool neg = v < 0;
  if (neg) v = -v;
  __int128 p = 1;
  for (int i = 0; i < scale; ++i) p *= 10;
  auto to_str = [](__int128 x) {
    std::string s;
    do {
      s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(x % 10)));
      x /= 10;
    } while (x > 0);
    return s;
  };
  std::string out = (neg ? "-" : "") + to_str(v / p);
  if (scale > 0 && v % p != 0) {
    std::string f = to_str(v % p);
    f.insert(0, static_cast<size_t>(scale) - f.size(), '0');
    while (f.back() == '0') f.pop_back();
    out += "." + f;
  }
  return out;
}

// When an offer starts billing: the API's key in English ("api_call"), its name in other languages
// (a cold start's invoice line and the quote advisor's explanation say it so).
Message billing_start_message(BillingStart b) {
  switch (b) {
    case BillingStart::kApiCall:
      return Message("advisor.quotes.billing_start.api_call");
    case BillingStart::kRunning:
      return Message("advisor.quotes.billing_start.running");
    case BillingStart::kReady:
      break;
  }
  return Message("advisor.quotes.billing_start.ready");
}

namespace billing_detail {

const char* mode_name(BillingMode m) { return enum_name(kBillingModeNames, m); }

void describe_line(ChargeLine& l, Message m) {
  l.description = render_en(m);
  l.description_message = std::move(m);
}

void LineBook::add_direct(ChargeLine line) { direct_.push_back(std::move(line)); }

Result<std::vector<ChargeLine>> LineBook::finish(Currency c) const {
  std::vector<ChargeLine> out;
  out.reserve(acc_.size() + direct_.size());
  for (const auto& [k, a] : acc_) {
    bool overflow = false;
    const int64_t micros = div_round_half_even(static_cast<__int128>(k.price) * a.qty, a.den, &overflow);
    if (overflow)
      return Error::make(Code::kInvalid,
                         Message("rating.amount_overflow").arg("rule", k.rule).arg("allocation", k.allocation));
    ChargeLine l;
    l.kind = static_cast<LineKind>(k.kind);
    l.rule = k.rule;
    l.project = k.project;
    l.job = k.job;
    l.allocation = k.allocation;
    l.offer = k.offer;
    l.billing_mode = k.mode;
    l.quantity = format_scaled(a.qty, a.qty_scale);
    l.unit = a.unit;
    l.unit_price = Money(k.price, c).amount_string();
    l.price_unit = a.price_unit;
    l.from = a.from;
    l.to = a.to;
    l.amount_exact = Money(micros, c);
    describe_line(l, a.description);
    l.commitment = k.commitment;
    if (k.list_price != 0 && k.list_price != k.price) {
      l.list_unit_price = Money(k.list_price, c).amount_string();
      const int64_t list = div_round_half_even(static_cast<__int128>(k.list_price) * a.qty, a.den, &overflow);
      if (overflow)
        return Error::make(Code::kInvalid,
                           Message("rating.amount_overflow").arg("rule", k.rule).arg("allocation", k.allocation));
      l.list_amount = Money(list, c).round_to_cents();
    }
    if (a.value != 0) {
      const int64_t value = div_round_half_even(a.value, a.den, &overflow);
      if (overflow)
        return Error::make(Code::kInvalid,
                           Message("rating.value_overflow").arg("rule", k.rule).arg("allocation", k.allocation));
      l.covered_value = Money(value, c);
    }
    out.push_back(std::move(l));
  }
  for (const auto& l : direct_) out.push_back(l);
  for (auto& l : out) {
    l.amount = l.amount_exact.round_to_cents();
    if (l.covered_value.micros() == 0) l.covered_value = Money(0, c);
    if (l.list_amount.micros() == 0) l.list_amount = Money(0, c);
  }
  std::stable_sort(out.begin(), out.end(), [](const ChargeLine& x, const ChargeLine& y) {
    return std::tie(x.kind, x.project, x.job, x.allocation, x.rule, x.from) <
           std::tie(y.kind, y.project, y.job, y.allocation, y.rule, y.from);
  });
  return out;
}

std::string period_text(TimeMs from, TimeMs to) { return format_rfc3339(from) + " .. " + format_rfc3339(to); }

}  // namespace billing_detail

namespace {

using namespace billing_detail;

// An invalid-input status naming field f.
Status bad(const std::string& f, Message r) { return Status(Error::invalid(f, std::move(r))); }
Message unknown_offer(const std::string& offer) { return Message("rating.unknown_offer").arg("offer", offer); }
Message unknown_allocation(const std::string& a) { return Message("rating.unknown_allocation").arg("allocation", a); }

// Each allocation: a unique id (collected into ids), a known offer, a price for its mode, ordered
// times and utilization samples.
Status check_allocations(const RatingInput& in, std::set<std::string>& ids) {
  for (size_t i = 0; i < in.allocations.size(); ++i) {
    const auto& a = in.allocations[i];
    const std::string f = "allocations[" + std::to_string(i) + "]";
    if (!ids.insert(a.id).second) return bad(f + ".id", Message("rating.duplicate_allocation").arg("id", a.id));
    auto o = in.offers.find(a.offer);
    if (o == in.offers.end()) return bad(f + ".offer", unknown_offer(a.offer));
    if (a.gpu_milli < 0) return bad(f + ".gpu_milli", Message("rating.positive"));
    if (a.gpu_milli == 0 && a.cpu_cores <= 0) return bad(f + ".cpus", Message("rating.cpu_only_cores"));
    if (a.gpu_milli > 0 && (a.cpu_cores != 0 || a.memory_gib != 0))
      return bad(f + ".cpus", Message("rating.cpu_with_gpus"));
    // The sheet in force when it was requested says what it may be billed as (a later sheet
    // reprices nothing: docs/api.md, price history).
    const Offer& sheet = offer_in_force(in, a.offer, a.requested_at);
    if (a.gpu_milli == 0 && !sheet.prices.cpu_core_hour)
      return bad(f + ".offer", Message("rating.no_cpu_price").arg("offer", a.offer));
    if (a.mode == BillingMode::kSpot && !sheet.prices.spot && !in.spot_prices.count(a.offer))
      return bad(f + ".mode", Message("rating.no_spot").arg("offer", a.offer));
    if (a.running_at && *a.running_at < a.requested_at)
      return bad(f + ".running_at", Message("rating.before_requested"));
    if (a.ready_at && *a.ready_at < a.running_at.value_or(a.requested_at))
      return bad(f + ".ready_at", Message("rating.before_running"));
    if (a.ended_at && *a.ended_at < a.requested_at) return bad(f + ".ended_at", Message("rating.before_requested"));
    for (size_t k = 0; k < a.utilization.size(); ++k) {
      if (k > 0 && a.utilization[k].at < a.utilization[k - 1].at)
        return bad(f + ".utilization[" + std::to_string(k) + "].at", Message("rating.samples_order"));
      if (a.utilization[k].utilization_pct < 0 || a.utilization[k].utilization_pct > 100)
        return bad(f + ".utilization[" + std::to_string(k) + "].pct", Message("rating.pct_range"));
    }
  }
  return ok_status();
}

// Each commitment: a known offer with a price for its term; defaults within its GPUs.
Status check_commitments(const RatingInput& in) {
  for (size_t i = 0; i < in.commitments.size(); ++i) {
    const auto& cm = in.commitments[i];
    const std::string f = "commitments[" + std::to_string(i) + "]";
    auto o = in.offers.find(cm.offer);
    if (o == in.offers.end()) return bad(f + ".offer", unknown_offer(cm.offer));
    if (auto p = commitment_price(offer_in_force(in, cm.offer, cm.start), cm); !p) return bad(f + ".term_months", p.error().fields.at(0).coded);
    if (most_defaulted(cm.defaults) > cm.gpus)
      return bad(f + ".defaults", Message("contract.commitment.defaults_exceed").arg("gpus", std::to_string(cm.gpus)));
  }
  return ok_status();
}

// The offer serves the model and pick(model) says it has the prices the usage needs.
// `at`: when the usage happened (the offer's version in force then prices it).
template <typename Pick>
Status served_price(const RatingInput& in, const std::string& offer, const std::string& model, TimeMs at,
                    const std::string& f, Pick pick) {
  if (!in.offers.count(offer)) return bad(f + ".offer", unknown_offer(offer));
  for (const auto& m : offer_in_force(in, offer, at).served_models)
    if (m.model == model)
      return pick(m) ? ok_status() : bad(f, Message("rating.no_model_price").arg("offer", offer).arg("model", model));
  return bad(f + ".model", Message("rating.model_not_served").arg("offer", offer).arg("model", model));
}

// Token and QPS usage: priced by a served model of a known offer.
Status check_served(const RatingInput& in) {
  for (size_t i = 0; i < in.tokens.size(); ++i) {
    const auto& t = in.tokens[i];
    const std::string f = "usage.tokens[" + std::to_string(i) + "]";
    if (auto s = served_price(in, t.offer, t.model, t.at, f, [&](const ServedModel& m) {
          return (t.input_tokens == 0 || m.per_million_input_tokens) && (t.output_tokens == 0 || m.per_million_output_tokens) &&
                 (t.requests == 0 || m.per_million_requests);
        });
        !s)
      return s;
  }
  for (size_t i = 0; i < in.qps.size(); ++i) {
    const auto& q = in.qps[i];
    const std::string f = "usage.qps[" + std::to_string(i) + "]";
    if (q.from >= q.to) return bad(f + ".to", Message("time.after_from"));
    for (auto [t0, t1] : version_cuts(in, q.offer, q.from, q.to))
      if (auto s = served_price(in, q.offer, q.model, t0, f, [](const ServedModel& m) { return m.per_qps_month.has_value(); });
          !s)
        return s;
  }
  return ok_status();
}

// Incidents (a node or a known allocation) and NCCL measurements: non-empty periods.
Status check_measurements(const RatingInput& in, const std::set<std::string>& ids) {
  for (size_t i = 0; i < in.incidents.size(); ++i) {
    const auto& x = in.incidents[i];
    const std::string f = "measurements.incidents[" + std::to_string(i) + "]";
    if (x.from >= x.to) return bad(f + ".to", Message("time.after_from"));
    if (x.node.empty() == x.allocation.empty()) return bad(f, Message("rating.node_or_allocation"));
    if (!x.allocation.empty() && !ids.count(x.allocation))
      return bad(f + ".allocation", unknown_allocation(x.allocation));
  }
  for (size_t i = 0; i < in.nccl.size(); ++i)
    if (in.nccl[i].from >= in.nccl[i].to)
      return bad("measurements.nccl[" + std::to_string(i) + "].to", Message("time.after_from"));
  return ok_status();
}

Status check(const RatingInput& in) {
  if (in.from >= in.to) return bad("period", Message("rating.period_order"));
  if (in.offers.empty()) return bad("offers", Message("rating.no_offers"));
  for (const auto& [name, o] : in.offers)
    if (o.currency != in.contract.currency)
      return bad("offers." + name + ".currency", Message("rating.offer_currency")
                                                     .arg("currency", currency_code(o.currency))
                                                     .arg("contract", currency_code(in.contract.currency)));
  std::set<std::string> ids;
  if (auto s = check_allocations(in, ids); !s) return s;
  if (auto s = check_commitments(in); !s) return s;
  for (size_t i = 0; i < in.volume.size(); ++i)
    if (!ids.count(in.volume[i].allocation))
      return bad("usage.volume[" + std::to_string(i) + "].allocation", unknown_allocation(in.volume[i].allocation));
  if (auto s = check_served(in); !s) return s;
  for (const auto& [key, list] : {std::pair{"usage.images[", &in.images}, std::pair{"usage.artifacts[", &in.artifacts},
                                   std::pair{"usage.volumes[", &in.volumes}})
    for (size_t i = 0; i < list->size(); ++i) {
      const StoredImage& im = (*list)[i];
      const std::string f = key + std::to_string(i) + "]";
      if (!in.offers.count(im.offer)) return bad(f + ".offer", unknown_offer(im.offer));
      if (im.bytes < 0) return bad(f + ".bytes", Message("rating.positive"));
      if (im.to && *im.to <= im.from) return bad(f + ".to", Message("time.after_from"));
    }
  for (const auto& [name, versions] : in.offer_history) {
    if (!in.offers.count(name)) return bad("offer_history." + name, Message("rating.unknown_offer_key"));
    for (size_t k = 0; k < versions.size(); ++k) {
      if (k > 0 && versions[k].until <= versions[k - 1].until)
        return bad("offer_history." + name, Message("rating.history_order"));
      if (versions[k].offer.currency != in.contract.currency)
        return bad("offer_history." + name + ".currency", Message("rating.offer_currency")
                                                            .arg("currency", currency_code(versions[k].offer.currency))
                                                            .arg("contract", currency_code(in.contract.currency)));
    }
  }
  for (const auto& [offer, prices] : in.spot_prices) {
    if (!in.offers.count(offer)) return bad("spot_prices." + offer, Message("rating.unknown_offer_key"));
    for (size_t k = 1; k < prices.size(); ++k)
      if (prices[k].from <= prices[k - 1].from) return bad("spot_prices." + offer, Message("rating.spot_order"));
  }
  return check_measurements(in, ids);
}

Result<RatingResult> run(const RatingInput& in, bool with_credits) {
  if (auto s = check(in); !s) return s.error();
  Ctx c{in, in.contract.currency, effective_exit(in.contract), {}, {}};
  for (auto part : {rate_allocations, rate_commitments, rate_volumes, rate_images, rate_served})
    if (auto s = part(c); !s) return s.error();
  if (with_credits)
    if (auto s = rate_credits(c); !s) return s.error();
  auto lines = c.book.finish(c.cur);
  if (!lines) return lines.error();
  RatingResult r;
  r.currency = c.cur;
  r.from = in.from;
  r.to = in.to;
  r.lines = std::move(*lines);
  r.commitments = std::move(c.shares);
  std::sort(r.commitments.begin(), r.commitments.end(), [](const auto& x, const auto& y) { return x.id < y.id; });
  int64_t charges = 0, credits = 0;
  for (const auto& l : r.lines)  // overflow is an error (docs/money.md), never a wrapped total
    if (__builtin_add_overflow(l.kind == LineKind::kCredit ? credits : charges, l.amount.micros(),
                               &(l.kind == LineKind::kCredit ? credits : charges)))
      return Error::make(Code::kInvalid, Message("rating.amount_overflow")
                                             .arg("rule", l.kind == LineKind::kCredit ? "credits" : "charges")
                                             .arg("allocation", "the period"));
  // A prepaid term is billed whole on its first month: the months it covers count its share, to
  // the cent as every line is (so the cap below, and the total, stay in whole cents).
  int64_t delivered = charges;
  bool delivered_overflow = false;
  for (const auto& l : r.lines)
    if (l.kind != LineKind::kCredit && l.rule == "reserved_prepaid")
      delivered_overflow |= __builtin_sub_overflow(delivered, l.amount.micros(), &delivered);
  for (const auto& s : r.commitments)
    if (s.prepaid)
      delivered_overflow |= __builtin_add_overflow(delivered, s.amortized.round_to_cents().micros(), &delivered);
  if (delivered_overflow)
    return Error::make(Code::kInvalid,
                       Message("rating.amount_overflow").arg("rule", "charges").arg("allocation", "the period"));
  int64_t sla = 0;
  for (const auto& l : r.lines)
    if (l.kind == LineKind::kCredit && l.rule != "exit_refund" && l.rule != "market_resale" &&
        l.rule != "market_resale_undelivered")
      sla += l.amount.micros();
  if (with_credits && in.contract.cap_credits && -sla > delivered) {
    ChargeLine cap;
    cap.kind = LineKind::kCredit;
    cap.rule = "credit_cap";
    cap.quantity = Money(-sla - delivered, c.cur).amount_string();
    cap.unit = currency_code(c.cur);
    cap.unit_price = "1";
    cap.price_unit = "of credit";
    cap.from = in.from;
    cap.to = in.to;
    cap.amount_exact = Money(-sla - delivered, c.cur);
    cap.amount = cap.amount_exact;
    cap.covered_value = Money(0, c.cur);
    cap.list_amount = Money(0, c.cur);
    describe_line(cap, Message("invoice_line.credit_cap").arg("charges", Money(delivered, c.cur).to_string()));
    credits += cap.amount.micros();
    r.lines.push_back(std::move(cap));
  }
  r.charges = Money(charges, c.cur);
  r.delivered = Money(delivered, c.cur);
  r.credits = Money(credits, c.cur);
  r.total = Money(charges + credits, c.cur);
  return r;
}

}  // namespace

Result<Money> billing_detail::month_charges(const RatingInput& in, TimeMs from, TimeMs to) {
  RatingInput copy = in;
  copy.from = from;
  copy.to = to;
  auto r = run(copy, false);
  if (!r) return r.error();
  return r->delivered;
}

Result<RatingResult> rate(const RatingInput& in) { return run(in, true); }

}  // namespace gpurent
