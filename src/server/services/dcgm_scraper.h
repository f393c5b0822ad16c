// Scraping NVIDIA dcgm-exporter endpoints into usage batches. `gpurent serve --dcgm-target
// URL@NODE` names an exporter and the node it runs on; every --dcgm-interval-s the scraper GETs the
// URL, maps the exposition (meter/dcgm.h) to GPU samples of NODE (the exporter's `gpu` label is
// the GPU index, checked against the node's cards and their UUIDs; series with only a UUID are
// matched to the node's card with that UUID), counts the scrape in /metrics, and ingests them
// through the same path as POST /api/v1/usage, with the idempotency key
// "dcgm:<NODE>:<scrape time ms>".
// parse_dcgm_target and dcgm_batch are pure; DcgmScraper owns one thread per target and is
// thread-safe to start/stop from the server's main thread.
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "meter/gpu_health.h"
#include "meter/usage.h"
#include "server/services/context.h"

namespace gpurent {

struct DcgmTarget {
  std::string url;   // "http://10.0.0.7:9400/metrics"
  std::string node;  // node id or name
};

// "URL@NODE", split at the last '@'. The URL must be http:// or https:// with a host.
Result<DcgmTarget> parse_dcgm_target(const std::string& spec);

// What one scrape becomes: the batch, and the GPUs left out with why.
// One of the node's cards as the scrape's health fields show it.
struct DcgmCardHealth {
  int64_t gpu = 0;    // the node's GPU index
  std::string label;  // "GPU 3 (GPU-…)", for the words
  GpuHealth health;
};

struct DcgmScrape {
  UsageBatch batch;
  std::vector<DcgmCardHealth> health;  // the node's cards that reported health fields
  std::vector<std::string> skipped;
  int64_t mig_instances = 0;       // folded into the batch's GPUs
  std::optional<int64_t> lag_ms;   // scraped_at minus the newest series timestamp, when stamped
};

// The node's GPUs as registered: index -> UUID (nullopt: registered without one).
using NodeCards = std::map<int64_t, std::optional<std::string>>;

// The batch one scrape becomes. Each GPU's time is the exposition's timestamp when it has one
// within the accepted window, else scraped_at. A GPU is metered only if it is one of the node's:
// its `gpu` index is among `cards` and, when both sides know it, its UUID is the card's (a target
// pointed at the wrong node is refused, not metered as this one); a series with only a UUID must
// be one of the node's cards. Errors: a malformed exposition (naming the line), no GPU with a
// utilization in it, or no GPU of the node (the skipped ones named). `health`, when given, gets
// the node's cards' health fields whenever the exposition parses, even when nothing in it can be
// metered (a card that fell off the bus reports an XID but no utilization).
Result<DcgmScrape> dcgm_batch(std::string_view exposition, const std::string& node, TimeMs scraped_at,
                              const NodeCards& cards, std::vector<DcgmCardHealth>* health = nullptr);

// Runs the scrapes and the periodic usage rollup of the server.
class UsageBackground {
 public:
  explicit UsageBackground(ServiceContext& app) : app_(app) {}
  ~UsageBackground() { stop(); }
  UsageBackground(const UsageBackground&) = delete;
  UsageBackground& operator=(const UsageBackground&) = delete;

  // Starts one thread per DCGM target and the rollup thread (kInvalid for a malformed target).
  Status start(const std::vector<std::string>& dcgm_targets);
  void stop();

  // One scrape of `t`, ingested; what happened, for the log and the tests.
  Result<UsageIngestOutcome> scrape_once(const DcgmTarget& t);
  // One rollup pass at `now` (raw samples older than the retention window become minutes).
  Result<UsageRollupStats> roll_up_once(TimeMs now);
  // Judges the cards' health against their previous readings (meter/gpu_health.h); on the first
  // finding takes the node out of service (state unavailable, the finding as its reason, an audit
  // entry): the scheduler then requeues its jobs elsewhere and records the fault. Returns the rule
  // that fired, if any.
  Result<std::optional<std::string>> check_health(const DcgmTarget& t, const std::vector<DcgmCardHealth>& cards);

 private:
  // Sleeps up to ms; false when stopping.
  bool wait(int64_t ms);

  ServiceContext& app_;
  std::mutex health_mu_;
  std::map<std::string, std::map<int64_t, GpuHealth>> health_;  // target node -> GPU -> last reading
  // A target's node as first found by its name, pinned to its id (under health_mu_): a node of
  // another supplier given the same name later cannot make the target ambiguous.
  std::map<std::string, std::string> node_ids_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace gpurent
