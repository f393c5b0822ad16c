// Store::gpu_usage_buckets: GPU utilization summed per (node, GPU, time bucket) in SQL, over the
// raw samples and the rolled-up minutes together, so the dashboard's heatmap reads one row per
// cell instead of every point. Ranges follow the series reads: a raw sample counts when its time
// lies in [from, to), a rolled-up minute when its start does.
#include <array>

#include "core/fields.h"
#include "store/sqlite_usage.h"

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


Status check_query(const GpuBucketQuery& q) {
  FieldErrors errs;
  if (q.to <= q.from) errs.add("to", "must be after from");
  if (q.bucket_ms <= 0 || q.bucket_ms % kMsPerMinute != 0)
    errs.add("bucket_ms",
             "must be a positive whole number of minutes in milliseconds (got " + std::to_string(q.bucket_ms) + ")");
  if (q.gpu < -1) errs.add("gpu", "must be a GPU index, or -1 for every GPU");
  if (q.gpu >= 0 && q.node_id.empty()) errs.add("gpu", "a GPU index needs a node_id");
  if (!errs.empty()) return errs.to_error();
  return ok_status();
}

}  // namespace

Result<std::vector<GpuBucket>> query_gpu_usage_buckets(Db& db, const GpuBucketQuery& q) {
  if (auto s = check_query(q); !s) return s.error();
  const std::string& sql = q.node_id.empty() ? kBucketSql[0] : q.gpu < 0 ? kBucketSql[1] : kBucketSql[2];
  auto st = db.query(sql);
  if (!st) return st.error();
  if (!q.node_id.empty()) st->bind(1, q.node_id);
  if (q.gpu >= 0) st->bind(2, q.gpu);
  st->bind(3, q.from).bind(4, q.to).bind(5, q.bucket_ms);
  std::vector<GpuBucket> out;
  for (;;) {
    auto row = st->step("summing GPU usage per bucket");
    if (!row) return row.error();
    if (!*row) return out;
    out.push_back({st->text(0), st->integer(1), st->integer(2), st->integer(3), st->integer(4), st->integer(5)});
  }
}

}  // namespace gpurent
