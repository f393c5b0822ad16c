// Store::gpu_usage_buckets: GPU utilization summed per (node, GPU, time bucket) in SQL, over the
// raw samples and the rolled-up minutes together, so the dashboard's heatmap reads one row per
// cell instead of every point. Ranges follow the series reads: a raw sample counts when its time
// lies in [from, to), a rolled-up minute when its start does.
#include <array>

#include "store/sqlite_usage.h"
#include "store/store_rows.h"

namespace gpurent {
namespace {

// Three statement texts, one per filter shape (every node / one node / one GPU of a node), so each
// is prepared once per connection and its filter is an index prefix of both tables' keys.
// ((t % b) + b) % b floors negative times too.
std::string bucket_sql(bool node, bool gpu) {
  std::string where;
  if (node) where += " node_id = ?1 AND";
  if (gpu) where += " gpu = ?2 AND";
  const std::string minutes =
      "SELECT node_id, gpu, minute - ((minute % ?5) + ?5) % ?5 AS b, samples AS n, util_sum AS s, util_max AS m"
      " FROM usage_gpu_minutes WHERE" +
      where + " minute >= ?3 AND minute < ?4";
  const std::string raw =
      "SELECT node_id, gpu, at - ((at % ?5) + ?5) % ?5, 1, utilization_pct, utilization_pct"
      " FROM usage_gpu_samples WHERE" +
      where + " at >= ?3 AND at < ?4";
  return "SELECT node_id, gpu, b, sum(n), sum(s), max(m) FROM (" + minutes + " UNION ALL " + raw +
         ") GROUP BY node_id, gpu, b ORDER BY node_id, gpu, b";
}

const std::array<std::string, 3> kBucketSql = {bucket_sql(false, false), bucket_sql(true, false),
                                               bucket_sql(true, true)};

}  // namespace

Result<std::vector<GpuBucket>> query_gpu_usage_buckets(Db& db, const GpuBucketQuery& q) {
  if (auto s = check_bucket_query(q); !s) return s.error();
  const std::string& sql = q.node_id.empty() ? kBucketSql[0] : q.gpu < 0 ? kBucketSql[1] : kBucketSql[2];
  auto st = db.query(sql);
  if (!st) return st.error();
  if (!q.node_id.empty()) st->bind(1, q.node_id);
  if (q.gpu >= 0) st->bind(2, q.gpu);
  st->bind(3, q.from).bind(4, q.to).bind(5, q.bucket_ms);
  return st->collect("summing GPU usage per bucket", [](Query& r) { return read_bucket(r); });
}

}  // namespace gpurent
