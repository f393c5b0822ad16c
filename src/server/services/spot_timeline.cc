#include "server/services/spot_timeline.h"

#include <algorithm>

#include "core/fields.h"
#include "model/offer.h"
#include "server/services/record_faults.h"

namespace gpurent {
namespace {

constexpr const char* kSpotTimelines = "spot-timelines";
constexpr const char* kSpotTimelinesNoted = "spot-timelines-noted";  // the backfill's marker

std::string spot_timeline_id(const std::string& offer_id) { return "spot-of-" + offer_id; }

// {"offer_id", "points": [{"from", "price_micros"}, ...]}, newest first, as note_spot_price writes it.
Result<std::vector<SpotPoint>> decode_spot_points(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  std::vector<SpotPoint> out;
  f.str("offer_id", {.min_len = 1, .max_len = 64});
  f.objects("points", true, 10000, [&](Fields& pf, size_t) {
    SpotPoint p;
    p.from = pf.time("from");
    p.price_micros = pf.integer("price_micros", 1, INT64_MAX);
    pf.finish();
    out.push_back(p);
  });
  f.finish();
  if (!errs.empty()) return errs.to_error();
  return out;
}

json spot_points_json(const std::string& offer_id, const std::vector<SpotPoint>& points) {
  json list = json::array();
  for (const SpotPoint& p : points)
    list.push_back({{"from", format_rfc3339(p.from)}, {"price_micros", p.price_micros}});
  return {{"offer_id", offer_id}, {"points", std::move(list)}};
}

// Newest first, cut after the first point in force at `now` (none older can be in force again).
void keep_from_now(std::vector<SpotPoint>& points, TimeMs now) {
  std::sort(points.begin(), points.end(), [](const SpotPoint& a, const SpotPoint& b) { return a.from > b.from; });
  auto in_force = std::find_if(points.begin(), points.end(), [&](const SpotPoint& p) { return p.from <= now; });
  if (in_force != points.end()) points.erase(in_force + 1, points.end());
}

// The offers' points from the stored prices (the walk the timelines replace): offer id -> points.
Result<std::map<std::string, std::vector<SpotPoint>>> walk_spot_prices(StoreTx& tx,
                                                                       std::map<std::string, std::string> eq) {
  auto all = list_all(tx, "spot-prices", std::move(eq));
  if (!all) return all.error();
  std::map<std::string, std::vector<SpotPoint>> out;
  for (const Record& r : *all) {
    auto e = decode_record(r, decode_spot_price, "placement uses the offer's sheet spot price");
    if (e) out[e->offer_id].push_back({e->from, e->price.micros()});
  }
  return out;
}

Result<bool> backfilled(StoreTx& tx) {
  auto done = tx.get(kSpotTimelines, kSpotTimelinesNoted);
  if (done) return true;
  if (done.error().code != Code::kNotFound) return done.error();
  return false;
}

Record timeline_record(const std::string& offer_id, std::vector<SpotPoint> points, TimeMs now) {
  Record r;
  r.kind = kSpotTimelines;
  r.id = spot_timeline_id(offer_id);
  r.created_at = r.updated_at = now;
  r.version = 1;
  r.body = spot_points_json(offer_id, points);
  return r;
}

}  // namespace

Result<std::vector<SpotPoint>> spot_timeline(StoreTx& tx, const std::string& offer_id) {
  auto rec = tx.get(kSpotTimelines, spot_timeline_id(offer_id));
  if (rec) return decode_record(*rec, decode_spot_points, "no spot price can follow it");
  if (rec.error().code != Code::kNotFound) return rec.error();
  auto done = backfilled(tx);
  if (!done) return done.error();
  if (*done) return std::vector<SpotPoint>();                 // no spot price yet
  auto walked = walk_spot_prices(tx, {{"state", offer_id}});  // the offer's id is the state column
  if (!walked) return walked.error();
  std::vector<SpotPoint> points = std::move((*walked)[offer_id]);
  std::sort(points.begin(), points.end(), [](const SpotPoint& a, const SpotPoint& b) { return a.from > b.from; });
  return points;
}

Status note_spot_price(StoreTx& tx, const std::string& offer_id, SpotPoint p, TimeMs now) {
  auto points = spot_timeline(tx, offer_id);
  if (!points) return points.error();
  points->insert(points->begin(), p);
  keep_from_now(*points, now);
  auto cur = tx.get(kSpotTimelines, spot_timeline_id(offer_id));
  if (!cur && cur.error().code != Code::kNotFound) return cur.error();
  if (!cur) return tx.insert(timeline_record(offer_id, std::move(*points), now));
  Record next = *cur;
  next.body = spot_points_json(offer_id, *points);
  next.updated_at = now;
  return tx.update(next);
}

Result<std::map<std::string, int64_t>> spot_prices_in_force(StoreTx& tx, TimeMs now) {
  std::map<std::string, std::vector<SpotPoint>> by_offer;
  auto done = backfilled(tx);
  if (!done) return done.error();
  if (*done) {
    auto all = list_all(tx, kSpotTimelines, {});
    if (!all) return all.error();
    for (const Record& r : *all) {
      if (r.id == kSpotTimelinesNoted) continue;
      auto points = decode_record(r, decode_spot_points, "placement uses the offer's sheet spot price");
      if (points) by_offer[r.body.value("offer_id", "")] = std::move(*points);
    }
  } else {
    auto walked = walk_spot_prices(tx, {});
    if (!walked) return walked.error();
    by_offer = std::move(*walked);
  }
  std::map<std::string, int64_t> out;
  for (const auto& [offer_id, points] : by_offer) {
    const SpotPoint* best = nullptr;
    for (const SpotPoint& p : points)
      if (p.from <= now && (!best || p.from > best->from)) best = &p;
    if (best) out[offer_id] = best->price_micros;
  }
  return out;
}

Status backfill_spot_timelines(StoreTx& tx, TimeMs now) {
  auto done = backfilled(tx);
  if (!done) return done.error();
  if (*done) return ok_status();
  auto walked = walk_spot_prices(tx, {});
  if (!walked) return walked.error();
  int64_t offers = 0;
  for (auto& [offer_id, points] : *walked) {
    auto cur = tx.get(kSpotTimelines, spot_timeline_id(offer_id));
    if (cur) continue;  // kept since by a create
    if (cur.error().code != Code::kNotFound) return cur.error();
    keep_from_now(points, now);
    if (auto s = tx.insert(timeline_record(offer_id, std::move(points), now)); !s) return s;
    ++offers;
  }
  Record marker;
  marker.kind = kSpotTimelines;
  marker.id = kSpotTimelinesNoted;
  marker.created_at = marker.updated_at = now;
  marker.version = 1;
  marker.body = {{"noted_at", format_rfc3339(now)}, {"offers", offers}};
  return tx.insert(marker);
}

}  // namespace gpurent
