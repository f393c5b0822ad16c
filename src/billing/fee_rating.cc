// Commitments (reserved billing), storage I/O and egress beyond free allowances, images kept per
// GB-month, per-token and per-QPS-month charges of served models.
#include <algorithm>
#include <set>

#include "billing/rating_impl.h"
#include "core/message.h"

namespace gpurent::billing_detail {

Result<int64_t> commitment_price(const Offer& offer, const Commitment& cm) {
  if (cm.price) return *cm.price;  // a market commitment: its trade price
  const std::optional<Money> p = offer.prices.reserved_for(cm.term_months);
  if (!p)
    return Error::invalid(
        "commitments." + cm.id + ".term_months",
        Message("rating.no_reserved_price").arg("offer", offer.name).arg("months", std::to_string(cm.term_months)));
  return p->micros();
}

TimeMs commitment_end(const Ctx& c, const Commitment& cm) { return c.exit ? std::min(cm.end, *c.exit) : cm.end; }

Status rate_commitments(Ctx& c) {
  for (const auto& cm : c.in.commitments) {
    const Offer& o = offer_in_force(c.in, cm.offer, cm.start);  // a commitment keeps the price it was made at
    auto price = commitment_price(o, cm);
    if (!price) return price.error();
    Message what(cm.price
                     ? (cm.trade.empty() ? "invoice_line.market_commitment" : "invoice_line.market_commitment.trade")
                     : "invoice_line.reserved_commitment");
    what.arg("id", cm.id).arg("gpus", std::to_string(cm.gpus)).arg("offer", o.name);
    if (!cm.price)
      what.arg("months", std::to_string(cm.term_months));
    else
      what.arg("from", format_rfc3339(cm.start)).arg("to", format_rfc3339(cm.end));
    if (cm.price && !cm.trade.empty()) what.arg("trade", cm.trade);
    const char* rule = cm.price ? "market_commitment" : "reserved_commitment";
    const TimeMs t0 = std::max(cm.start, c.in.from), t1 = std::min(commitment_end(c, cm), c.in.to);
    if (t0 < t1) {
      const __int128 milli_ms = static_cast<__int128>(cm.gpus) * 1000 * (t1 - t0);
      bool overflow = false;
      const int64_t share = div_round_half_even(*price * milli_ms, kMilliMsPerGpuHour, &overflow);
      if (overflow)
        return Error::make(Code::kInvalid, Message("rating.amount_overflow").arg("rule", rule).arg("allocation", cm.id));
      c.shares.push_back({cm.id, o.name, render_en(what), t0, t1, cm.gpus, *price, cm.prepaid, Money(share, c.cur)});
    }
    if (cm.prepaid) {
      // A term that starts at or after an effective exit is never delivered: never charged.
      if (cm.start >= c.in.from && cm.start < c.in.to && !(c.exit && cm.start >= *c.exit))
        c.book.add({1, "", "", cm.id, o.name, "reserved", "reserved_prepaid", *price, "", cm.id},
                   static_cast<__int128>(cm.gpus) * 1000 * (cm.end - cm.start), cm.start, cm.end, kMilliMsPerGpuHour, 6,
                   "GPU-second", "GPU-hour", Message("invoice_line.prepaid_term").arg("what", std::move(what)));
      continue;
    }
    if (t0 < t1)
      c.book.add({1, "", "", cm.id, o.name, "reserved", rule, *price, "", cm.id},
                 static_cast<__int128>(cm.gpus) * 1000 * (t1 - t0), t0, t1, kMilliMsPerGpuHour, 6, "GPU-second",
                 "GPU-hour", Message("invoice_line.used_or_not").arg("what", std::move(what)));
  }
  return ok_status();
}

namespace {

std::string month_label(TimeMs t) { return format_rfc3339(month_start(t)).substr(0, 7); }

// What a fee's rule charges for, as a noun starting its lines' descriptions.
Message noun_of(const std::string& rule) {
  if (rule == "storage_io") return Message("invoice_line.noun.storage_io");
  if (rule == "egress") return Message("invoice_line.noun.egress");
  if (rule == "image_storage") return Message("invoice_line.noun.image_storage");
  if (rule == "artifact_storage") return Message("invoice_line.noun.artifact_storage");
  return Message("invoice_line.noun.volume_storage");
}

// One volume fee of offer `name` (fee_of picks storage I/O or egress from a version): records of
// its allocations, each priced by the offer version in force at its time, the month's free
// allowance (of that version) used first come first served, counted from the month's start even
// when the period starts later. Records are summed per (month, allocation, price) — or per (UTC day,
// allocation, price) with lines_per_day — before they reach the line book.
void volume_fee(Ctx& c, const std::map<std::string, const Allocation*>& allocs, const std::string& name,
                const std::optional<VolumeFee>& (*fee_of)(const Offer&), const char* rule,
                int64_t VolumeUsage::*bytes_of) {
  struct Rec {
    TimeMs at;
    const std::string* allocation;
    int64_t bytes;
    bool billed;  // false: another input's (volume_elsewhere), counted toward the allowance only
  };
  std::vector<Rec> recs;
  const TimeMs since = month_start(c.in.from);
  for (const auto& v : c.in.volume)
    if (v.at < c.in.to && v.at >= since && v.*bytes_of > 0 && allocs.at(v.allocation)->offer == name)
      recs.push_back({v.at, &v.allocation, v.*bytes_of, true});
  for (const auto& v : c.in.volume_elsewhere) {
    const int64_t bytes = bytes_of == &VolumeUsage::egress_bytes ? v.egress_bytes : v.storage_io_bytes;
    if (v.at < c.in.to && v.at >= since && bytes > 0 && v.offer == name) recs.push_back({v.at, &v.allocation, bytes, false});
  }
  std::stable_sort(recs.begin(), recs.end(), [](const Rec& x, const Rec& y) { return std::tie(x.at, *x.allocation) < std::tie(y.at, *y.allocation); });
  struct Sum {
    __int128 free = 0, charged = 0;
    TimeMs from = INT64_MAX, to = INT64_MIN;
    int64_t free_gb = 0;
  };
  std::map<std::tuple<TimeMs, std::string, int64_t>, Sum> sums;  // (month or day start, allocation, price)
  TimeMs month = INT64_MIN, month_end = INT64_MIN;
  __int128 used = 0;
  for (const Rec& v : recs) {
    const std::optional<VolumeFee>& fee = fee_of(offer_in_force(c.in, name, v.at));
    if (!fee) continue;  // the version in force then charged nothing for it
    if (v.at >= month_end) {  // records are in time order: a new month resets the allowance
      month = month_start(v.at);
      month_end = add_months(month, 1);
      used = 0;
    }
    const __int128 n = v.bytes;
    const __int128 free_part = std::clamp<__int128>(static_cast<__int128>(fee->free_gb) * kBytesPerGb - used, 0, n);
    used += n;
    if (v.at < c.in.from || !v.billed) continue;  // counted toward the allowance only
    Sum& s = sums[{c.in.lines_per_day ? day_start(v.at) : month, *v.allocation, fee->per_gb.micros()}];
    s.free += free_part;
    s.charged += n - free_part;
    s.from = std::min(s.from, v.at);
    s.to = std::max(s.to, v.at);
    s.free_gb = fee->free_gb;
  }
  for (const auto& [key, s] : sums) {
    const auto& [start, alloc, price] = key;
    const Allocation& a = *allocs.at(alloc);
    const std::string label = c.in.lines_per_day ? format_rfc3339(start).substr(0, 10) : month_label(start);
    const Message base = Message(c.in.lines_per_day ? "invoice_line.volume_fee.day" : "invoice_line.volume_fee.month")
                             .arg("what", noun_of(rule))
                             .arg("job", a.job)
                             .arg("offer", name)
                             .arg("period", label);
    if (s.free > 0)
      c.book.add({2, a.project, a.job, a.id, name, "", std::string(rule) + "_free", 0, label}, s.free, s.from, s.to,
                 kBytesPerGb, 9, "GB", "GB",
                 Message("invoice_line.free_per_month").arg("what", base).arg("gb", std::to_string(s.free_gb)));
    if (s.charged > 0)
      c.book.add({2, a.project, a.job, a.id, name, "", rule, price, label}, s.charged, s.from, s.to, kBytesPerGb, 9,
                 "GB", "GB", Message("invoice_line.beyond_free").arg("what", base));
  }
}

const std::optional<VolumeFee>& storage_io_of(const Offer& o) { return o.fees.storage_io; }
const std::optional<VolumeFee>& egress_of(const Offer& o) { return o.fees.egress; }

const ServedModel& served(const Offer& o, const std::string& model) {
  for (const auto& m : o.served_models)
    if (m.model == model) return m;
  throw std::logic_error("served model checked by rate()");
}

}  // namespace

Status rate_volumes(Ctx& c) {
  if (c.in.volume.empty()) return ok_status();
  std::map<std::string, const Allocation*> allocs;
  for (const auto& a : c.in.allocations) allocs[a.id] = &a;
  for (const auto& [name, o] : c.in.offers) {
    volume_fee(c, allocs, name, storage_io_of, "storage_io", &VolumeUsage::storage_io_bytes);
    volume_fee(c, allocs, name, egress_of, "egress", &VolumeUsage::egress_bytes);
  }
  return ok_status();
}

// Images (or artifacts) kept for an offer's nodes: bytes × time per item, offer and calendar month,
// at the fee's price per GB-month (730 h) of the offer version in force. At every moment the free
// allowance (free_gb) covers the items kept longest first (then by id), those of the tenant's other
// sections on the offer (elsewhere) too; the rest of this section's is charged.
// `rule` is the line's rule (and rule + "_free"); the description starts with invoice_line.noun.<rule>.
static Status rate_kept(Ctx& c, const std::vector<StoredImage>& items, std::optional<StorageFee> OfferFees::*fee_of,
                        const std::string& rule) {
  for (const auto& [name, o] : c.in.offers) {
    std::vector<const StoredImage*> imgs;
    for (const auto& im : items)
      if (im.offer == name && im.bytes > 0 && im.from < c.in.to && (!im.to || *im.to > c.in.from)) imgs.push_back(&im);
    if (imgs.empty()) continue;
    std::stable_sort(imgs.begin(), imgs.end(), [](auto* x, auto* y) { return std::tie(x->from, x->id) < std::tie(y->from, y->id); });
    std::set<TimeMs> cuts{c.in.from, c.in.to};
    for (const auto* im : imgs) {
      if (im->from > c.in.from) cuts.insert(im->from);
      if (im->to && *im->to < c.in.to) cuts.insert(*im->to);
    }
    for (TimeMs m = add_months(month_start(c.in.from), 1); m < c.in.to; m = add_months(m, 1)) cuts.insert(m);
    for (auto [v0, v1] : version_cuts(c.in, name, c.in.from, c.in.to)) cuts.insert(v0);
    const int64_t den = kBytesPerGb * kMsPerBillingMonth;
    for (auto it = cuts.begin(); std::next(it) != cuts.end(); ++it) {
      const TimeMs t0 = *it, t1 = *std::next(it);
      const Offer& v = offer_in_force(c.in, name, t0);
      if (!(v.fees.*fee_of)) continue;
      const StorageFee& fee = *(v.fees.*fee_of);
      const __int128 free_bytes = static_cast<__int128>(fee.free_gb) * kBytesPerGb;
      const std::string label = month_label(t0);
      __int128 left = free_bytes;
      for (const auto* im : imgs) {
        if (im->from > t0 || (im->to && *im->to < t1)) continue;  // not kept over the whole piece
        const __int128 free_part = std::min<__int128>(left, im->bytes);
        left -= free_part;
        if (im->elsewhere) continue;  // its lines are its own section's
        const std::string key = label + " " + im->id + " " + std::to_string(im->bytes);  // a grown volume: a line per size
        const Message base = Message("invoice_line.kept")
                                 .arg("what", noun_of(rule))
                                 .arg("name", im->image)
                                 .arg("bytes", std::to_string(im->bytes))
                                 .arg("offer", o.name)
                                 .arg("month", label);
        if (free_part > 0)
          c.book.add({2, "", "", "", o.name, "", rule + "_free", 0, key}, free_part * (t1 - t0), t0, t1, den, 12,
                     "GB-second", "GB-month (730 h)",
                     Message("invoice_line.free").arg("what", base).arg("gb", std::to_string(fee.free_gb)));
        if (im->bytes > free_part)
          c.book.add({2, "", "", "", o.name, "", rule, fee.per_gb_month.micros(), key},
                     (im->bytes - free_part) * (t1 - t0), t0, t1, den, 12, "GB-second", "GB-month (730 h)",
                     Message("invoice_line.beyond_free").arg("what", base));
      }
    }
  }
  return ok_status();
}

Status rate_images(Ctx& c) {
  if (auto s = rate_kept(c, c.in.images, &OfferFees::image_storage, "image_storage"); !s) return s;
  if (auto s = rate_kept(c, c.in.artifacts, &OfferFees::artifact_storage, "artifact_storage"); !s) return s;
  return rate_kept(c, c.in.volumes, &OfferFees::volume_storage, "volume_storage");
}

Status rate_served(Ctx& c) {
  for (const auto& t : c.in.tokens) {
    if (t.at < c.in.from || t.at >= c.in.to) continue;
    const Offer& o = offer_in_force(c.in, t.offer, t.at);
    const ServedModel& m = served(o, t.model);
    if (t.input_tokens > 0)
      c.book.add(
          {0, t.project, "", "", o.name, "per_token", "tokens_input", m.per_million_input_tokens->micros(), t.model},
          t.input_tokens, t.at, t.at, kTokensPerPrice, 0, "token", "1M tokens",
          Message("invoice_line.tokens_input").arg("model", t.model).arg("offer", o.name));
    if (t.output_tokens > 0)
      c.book.add(
          {0, t.project, "", "", o.name, "per_token", "tokens_output", m.per_million_output_tokens->micros(), t.model},
          t.output_tokens, t.at, t.at, kTokensPerPrice, 0, "token", "1M tokens",
          Message("invoice_line.tokens_output").arg("model", t.model).arg("offer", o.name));
    if (t.requests > 0)
      c.book.add({0, t.project, "", "", o.name, "per_request", "requests", m.per_million_requests->micros(), t.model},
                 t.requests, t.at, t.at, kTokensPerPrice, 0, "request", "1M requests",
                 Message("invoice_line.requests").arg("model", t.model).arg("offer", o.name));
  }
  for (const auto& q : c.in.qps) {
    const TimeMs from = std::max(q.from, c.in.from), to = std::min(q.to, c.in.to);
    for (auto [t0, t1] : version_cuts(c.in, q.offer, from, to)) {
      const Offer& o = offer_in_force(c.in, q.offer, t0);
      const ServedModel& m = served(o, q.model);
      c.book.add({0, q.project, "", "", o.name, "per_qps", "qps_month", m.per_qps_month->micros(), q.model},
                 static_cast<__int128>(q.qps) * (t1 - t0), t0, t1, kMsPerQpsMonth, 3, "QPS-second", "QPS-month (730 h)",
                 Message("invoice_line.qps_month").arg("model", q.model).arg("offer", o.name));
    }
  }
  return ok_status();
}

}  // namespace gpurent::billing_detail
