#include "server/services/dcgm_scraper.h"

#include <spdlog/spdlog.h>

#include <set>

#include "meter/dcgm.h"
#include "meter/gpu_health.h"
#include "model/node.h"
#include "server/http/http_client.h"
#include "server/services/access.h"
#include "server/services/record_faults.h"
#include "server/services/usage_ingest.h"

namespace gpurent {

Result<DcgmTarget> parse_dcgm_target(const std::string& spec) {
  const size_t at = spec.rfind('@');
  if (at == std::string::npos || at == 0 || at + 1 == spec.size())
    return Error::invalid("dcgm-target", "'" + spec + "' must be URL@NODE, e.g. http://10.0.0.7:9400/metrics@node-7");
  DcgmTarget t{spec.substr(0, at), spec.substr(at + 1)};
  const size_t scheme = t.url.find("://");
  if (scheme == std::string::npos ||
      (t.url.compare(0, scheme, "http") != 0 && t.url.compare(0, scheme, "https") != 0) || scheme + 3 >= t.url.size() ||
      t.url[scheme + 3] == '/')
    return Error::invalid("dcgm-target", "'" + t.url + "' must be an http:// or https:// URL with a host");
  if (!valid_idempotency_key(t.node) || t.node.size() > 64)
    return Error::invalid("dcgm-target", "'" + t.node + "' is not a node id or name");
  return t;
}

Result<DcgmScrape> dcgm_batch(std::string_view exposition, const std::string& node, TimeMs scraped_at,
                              const NodeCards& cards, std::vector<DcgmCardHealth>* health) {
  auto samples = parse_prometheus_text(exposition, dcgm_metric_read);
  if (!samples) return samples.error();
  auto readings = map_dcgm(*samples);
  if (!readings) return readings.error();
  DcgmScrape out;
  std::map<std::string, int64_t> by_uuid;
  for (const auto& [index, uuid] : cards)
    if (uuid) by_uuid[*uuid] = index;
  // One reading per card: the same card can come twice (series with its UUID and series with only
  // host and index group apart). Its sample is the first. Its health is the series named by its
  // UUID, whatever the order, with the fields only the other has: a value that flips between two
  // series from one scrape to the next would otherwise read as a rise and fire a rule.
  std::map<int64_t, std::pair<size_t, bool>> health_at;  // card -> its entry in out.health, by UUID
  std::set<int64_t> sampled;
  for (const DcgmGpuReading& r : readings->health) {  // the node's cards only, as below
    std::optional<int64_t> index = r.gpu;
    if (index) {
      auto card = cards.find(*index);
      if (card == cards.end() || (card->second && !r.uuid.empty() && *card->second != r.uuid)) continue;
    } else {
      auto it = by_uuid.find(r.uuid);
      if (it == by_uuid.end()) continue;
      index = it->second;
    }
    if (auto seen = health_at.find(*index); seen != health_at.end()) {
      auto& [at, by_uuid_series] = seen->second;
      GpuHealth& h = out.health[at].health;
      if (!by_uuid_series && !r.uuid.empty()) {
        h = merged_health(h, r.health);  // this one's fields, the other's where it has none
        by_uuid_series = true;
      } else {
        h = merged_health(r.health, h);
      }
      continue;
    }
    health_at[*index] = {out.health.size(), !r.uuid.empty()};
    out.health.push_back({*index, "GPU " + std::to_string(*index) + (r.uuid.empty() ? "" : " (" + r.uuid + ")"), r.health});
  }
  if (health) *health = out.health;  // also when nothing can be metered: a card off the bus reports no utilization
  if (readings->gpus.empty() && readings->skipped.empty())
    return Error::invalid("", "the exposition has no GPU with DCGM_FI_DEV_GPU_UTIL or DCGM_FI_PROF_GR_ENGINE_ACTIVE");
  out.skipped = readings->skipped;
  out.batch.idempotency_key = "dcgm:" + node + ":" + std::to_string(scraped_at);
  std::optional<TimeMs> newest;
  for (const DcgmGpuReading& r : readings->gpus) {
    std::optional<int64_t> index = r.gpu;
    const std::string who = "gpu " + (r.gpu ? std::to_string(*r.gpu) : std::string("?")) +
                            (r.uuid.empty() ? "" : " (" + r.uuid + ")");
    if (index) {
      auto card = cards.find(*index);
      if (card == cards.end()) {
        out.skipped.push_back(who + ": " + node + " has no GPU " + std::to_string(*index));
        continue;
      }
      if (card->second && !r.uuid.empty() && *card->second != r.uuid) {
        out.skipped.push_back(who + ": " + node + "'s GPU " + std::to_string(*index) + " is " + *card->second +
                              "; is the target pointed at another node?");
        continue;
      }
    } else {
      auto it = by_uuid.find(r.uuid);
      if (it == by_uuid.end()) {
        out.skipped.push_back(who + ": not a GPU of " + node);
        continue;
      }
      index = it->second;
    }
    if (!sampled.insert(*index).second) {
      out.skipped.push_back(who + ": " + node + "'s GPU " + std::to_string(*index) +
                            " came twice (by UUID and by index): the first reading is kept");
      continue;
    }
    GpuSample s;
    s.at = scraped_at;
    if (r.at && *r.at >= scraped_at - kSampleMaxAgeMs && *r.at <= scraped_at + kSampleMaxAheadMs) s.at = *r.at;
    if (r.at) newest = newest ? std::max(*newest, *r.at) : *r.at;
    s.node = node;
    s.gpu = index;
    s.metrics = r.metrics;
    out.mig_instances += static_cast<int64_t>(r.mig.size());
    out.batch.gpu_samples.push_back(std::move(s));
  }
  // Series stamped outside the accepted window give no lag (their time is not taken either).
  if (newest && *newest >= scraped_at - kSampleMaxAgeMs && *newest <= scraped_at + kSampleMaxAheadMs)
    out.lag_ms = scraped_at - *newest;
  if (out.batch.gpu_samples.empty()) {
    std::string why;
    for (size_t i = 0; i < out.skipped.size() && i < 3; ++i) why += (i ? "; " : "") + out.skipped[i];
    return Error::invalid("", "no GPU of " + node + " in the exposition: " + why);
  }
  return out;
}

static void log_json(spdlog::level::level_enum lvl, const json& j) {
  spdlog::log(lvl, "{}", j.dump(-1, ' ', false, json::error_handler_t::replace));
}

// The target node's id and cards, by id or by name (a name two suppliers share is ambiguous).
Result<std::pair<std::string, NodeCards>> target_cards(StoreReader& store, const std::string& node) {
  std::optional<Record> rec;
  if (looks_like_id(node)) {
    auto r = store.get("nodes", node);
    if (!r && r.error().code != Code::kNotFound) return r.error();
    if (r) rec = *r;
  }
  if (!rec) {
    auto page = store.list(ListQuery{"nodes", {{"name", node}}, "", 2});
    if (!page) return page.error();
    if (page->items.size() > 1)
      return Error::invalid("dcgm-target", "two nodes are named '" + node + "': name the node by its id");
    if (page->items.empty()) return Error::invalid("dcgm-target", "no node '" + node + "'");
    rec = page->items.front();
  }
  auto stored = decode_record(*rec, stored_node_cards, "its DCGM exporter cannot be scraped");
  if (!stored) return stored.error();
  NodeCards cards;
  for (const StoredCard& c : *stored) cards[c.index] = c.uuid;
  return std::make_pair(rec->id, std::move(cards));
}

Result<UsageIngestOutcome> UsageBackground::scrape_once(const DcgmTarget& t) {
  const TimeMs now = app_.clock.now();
  std::vector<DcgmCardHealth> health;  // judged whether or not the scrape could be metered
  std::string node_id;                 // the node, by the id it was first found under
  auto scraped = [&]() -> Result<std::pair<UsageIngestOutcome, DcgmScrape>> {
    std::string pinned;
    {
      std::lock_guard lock(health_mu_);
      if (auto it = node_ids_.find(t.node); it != node_ids_.end()) pinned = it->second;
    }
    auto found = target_cards(app_.store, pinned.empty() ? t.node : pinned);
    if (!found && !pinned.empty()) found = target_cards(app_.store, t.node);  // deleted since: found anew
    if (!found) return found.error();
    {
      std::lock_guard lock(health_mu_);
      node_ids_[t.node] = found->first;
    }
    node_id = found->first;
    const NodeCards* cards = &found->second;
    auto res = send_request({"GET", t.url, {}, "", "", 5000, 10000});
    if (!res) return res.error();
    if (res->status != 200)
      return Error::make(Code::kUnavailable, "GET " + t.url + ": HTTP " + std::to_string(res->status));
    auto scrape = dcgm_batch(res->body, node_id, now, *cards, &health);
    if (!scrape) return scrape.error();
    auto in = ingest_usage(app_, system_principal("dcgm-scraper"), scrape->batch);
    if (!in) return in.error();
    return std::make_pair(*in, std::move(*scrape));
  }();
  if (auto h = check_health(t, health); !h)
    log_json(spdlog::level::warn, {{"event", "gpu_health_failed"}, {"node", t.node}, {"error", h.error().message}});
  if (!scraped) {
    app_.metrics.observe_dcgm_scrape(t.node, false, {});
    return scraped.error();
  }
  const DcgmScrape& d = scraped->second;
  Metrics::DcgmScrapeFigures f;
  f.gpus = static_cast<int64_t>(d.batch.gpu_samples.size());
  f.skipped = static_cast<int64_t>(d.skipped.size());
  f.mig_instances = d.mig_instances;
  f.at_s = static_cast<double>(now) / 1000.0;
  if (d.lag_ms) f.lag_s = static_cast<double>(*d.lag_ms) / 1000.0;
  app_.metrics.observe_dcgm_scrape(t.node, true, f);
  if (!d.skipped.empty())  // one line per scrape, not one per GPU
    log_json(spdlog::level::warn, {{"event", "dcgm_gpus_skipped"},
                                   {"url", t.url},
                                   {"node", t.node},
                                   {"count", d.skipped.size()},
                                   {"why", json(std::vector<std::string>(
                                               d.skipped.begin(), d.skipped.begin() + std::min<size_t>(d.skipped.size(), 5)))}});
  return scraped->first;
}

Result<std::optional<std::string>> UsageBackground::check_health(const DcgmTarget& t,
                                                                const std::vector<DcgmCardHealth>& cards) {
  std::vector<HealthFinding> findings;   // one per card a rule fired for, in the cards' order
  std::map<int64_t, GpuHealth> next;     // the node's new baseline, kept once the findings are applied
  std::map<int64_t, GpuHealth> unfired;  // the same, but the old baseline of the cards that fired
  std::string node_ref = t.node;         // its id where a scrape found it (see node_ids_)
  {
    std::lock_guard lock(health_mu_);
    next = health_[t.node];
    if (auto it = node_ids_.find(t.node); it != node_ids_.end()) node_ref = it->second;
  }
  unfired = next;
  for (const DcgmCardHealth& c : cards) {
    auto it = next.find(c.gpu);
    auto f = judge_gpu_health(it == next.end() ? std::nullopt : std::optional<GpuHealth>(it->second), c.health, c.label);
    next[c.gpu] = it == next.end() ? c.health : merged_health(it->second, c.health);
    if (f)
      findings.push_back(std::move(*f));
    else
      unfired[c.gpu] = next[c.gpu];
  }
  auto keep = [&](std::map<int64_t, GpuHealth>& baseline) {
    std::lock_guard lock(health_mu_);
    health_[t.node] = std::move(baseline);
  };
  if (findings.empty()) {
    keep(next);
    return std::optional<std::string>();
  }
  const HealthFinding* finding = &findings.front();
  const TimeMs now = app_.clock.now();
  // Every card that fired, the first in full (a state_reason holds 500 characters).
  std::string reason = render_en(finding->why);
  for (size_t i = 1; i < findings.size(); ++i) {
    const std::string more = (i == 1 ? "; also " : ", ") + render_en(findings[i].why);
    if (reason.size() + more.size() > 480) {
      reason += "; and " + std::to_string(findings.size() - i) + " more card(s)";
      break;
    }
    reason += more;
  }
  std::string rules;
  for (const HealthFinding& f : findings) rules += (rules.empty() ? "" : ", ") + f.rule;
  bool changed = false;
  Status s = app_.loop.run([&](StoreTx& tx) -> Status {
    auto rec = resolve_ref(tx, "nodes", node_ref, {}, "node");
    if (!rec) return rec.error();
    auto n = decode_record(*rec, [&](const json& b) { return decode_node(b, app_.catalog); },
                           "a failing GPU cannot take it out of service");
    if (!n) return n.error();
    if (n->state == NodeState::kUnavailable) return ok_status();  // out of service already: see below
    n->state = NodeState::kUnavailable;
    n->state_reason = reason;
    Record r = *rec;
    r.state = enum_name(kNodeStates, n->state);
    r.body = to_json(*n);
    r.updated_at = now;
    if (auto st = tx.update(r); !st) return st;
    changed = true;
    return tx.append_audit(
        {now, "system:gpu-health", "update", "nodes", r.id, "gpu health (" + rules + "): " + reason});
  });
  if (!s) return s.error();  // the old baseline stays: the next scrape finds the same rise and tries again
  if (changed) {
    keep(next);
    std::set<std::string> counted;  // a drain counts once per rule that fired
    for (const HealthFinding& f : findings)
      if (counted.insert(f.rule).second) app_.metrics.count_health_drain(t.node, f.rule);
    log_json(spdlog::level::warn,
             {{"event", "gpu_health_drain"}, {"node", t.node}, {"rule", rules}, {"reason", reason}});
  } else {
    // Out of service already (by Slurm, an operator, an earlier finding): the cards that fired keep
    // their old baseline, so the same findings drain the node again if it returns to service before
    // they are fixed.
    keep(unfired);
  }
  return std::optional<std::string>(finding->rule);
}

Result<UsageRollupStats> UsageBackground::roll_up_once(TimeMs now) {
  const TimeMs raw_before = now - app_.opts.usage_retention_hours * kMsPerHour;
  UsageRollupStats stats;
  Status st = app_.loop.run([&](StoreTx& tx) -> Status {
    auto r = tx.roll_up_usage(raw_before, now - kIdempotencyKeyMemoryMs);
    if (!r) return r.error();
    stats = *r;
    return ok_status();
  });
  if (!st) return st.error();
  return stats;
}

bool UsageBackground::wait(int64_t ms) {
  std::unique_lock lock(mu_);
  return !cv_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return stopping_; });
}

Status UsageBackground::start(const std::vector<std::string>& dcgm_targets) {
  std::vector<DcgmTarget> targets;
  for (const auto& spec : dcgm_targets) {
    auto t = parse_dcgm_target(spec);
    if (!t) return t.error();
    targets.push_back(*t);
  }
  for (const DcgmTarget& t : targets) {
    threads_.emplace_back([this, t] {
      const int64_t every = app_.opts.dcgm_interval_s * 1000;
      do {
        Result<UsageIngestOutcome> r = Error::make(Code::kInternal, "not scraped");
        try {  // one target's failure (out of memory on its answer, say) must not end the server
          r = scrape_once(t);
        } catch (const std::exception& e) {
          r = Error::make(Code::kInternal, std::string("the scrape threw: ") + e.what());
        }
        if (!r)
          log_json(spdlog::level::warn,
                   {{"event", "dcgm_scrape_failed"}, {"url", t.url}, {"node", t.node}, {"error", r.error().message}});
        else
          log_json(spdlog::level::debug, {{"event", "dcgm_scrape"},
                                          {"url", t.url},
                                          {"node", t.node},
                                          {"gpu_samples", r->gpu_samples},
                                          {"duplicate", r->duplicate}});
      } while (wait(every));
    });
  }
  threads_.emplace_back([this] {
    while (wait(app_.opts.usage_rollup_interval_s * 1000)) {
      auto r = roll_up_once(app_.clock.now());
      if (!r)
        log_json(spdlog::level::warn, {{"event", "usage_rollup_failed"}, {"error", r.error().message}});
      else if (r->gpu_samples + r->job_samples + r->batches_forgotten > 0)
        log_json(spdlog::level::info, {{"event", "usage_rollup"},
                                       {"gpu_samples", r->gpu_samples},
                                       {"job_samples", r->job_samples},
                                       {"batches_forgotten", r->batches_forgotten}});
    }
  });
  return ok_status();
}

void UsageBackground::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

}  // namespace gpurent
