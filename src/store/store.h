// Store: durable home of every resource. Resources are kept as documents (the canonical JSON the
// API returns) plus a few indexed columns used for scoping and filtering; see docs/architecture.md
// for why. Two implementations behind the same interface and the same test suite
// (src/store/store_test.cc and its siblings run every test against both):
//  * SqliteStore (sqlite_*.cc, open_sqlite_store): embedded, one file in WAL mode; the default.
//  * PostgresStore (pg_*.cc, open_postgres_store): a PostgreSQL 15+ server through libpq; bodies
//    as jsonb, raw usage samples partitioned by month (pg_migrations.cc); `gpurent serve --db
//    postgresql://…` (several servers may share one: docs/deployment.md).
// The interface has no SQL in it; each backend has its own versioned schema (migrations.cc,
// pg_migrations.cc), applied on open.
//
// Concurrency contract: exactly one writer (the server's control loop) calls write(); reads
// (get/list/token lookups) may be called from any thread concurrently with the writer.
// A write() whose callback returns ok is committed durably before write() returns.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "core/message.h"
#include "core/result.h"
#include "store/usage_types.h"

namespace gpurent {

// One stored resource. Index columns are empty strings when they do not apply to the kind.
struct Record {
  std::string kind;          // "suppliers", "nodes", "offers", "tenants", "projects", "users", "jobs", ...
  std::string id;            // "<prefix>_<hex>", unique within kind
  std::string name;          // user-chosen, unique within (kind, scope) where scope = tenant_id or supplier_id or global
  std::string tenant_id;     // owning tenant for tenant-scoped kinds
  std::string supplier_id;   // owning supplier for supplier-scoped kinds
  std::string project_id;    // owning project (jobs)
  std::string state;         // lifecycle state where the kind has one (jobs, nodes)
  std::string region;        // suppliers, nodes, offers
  std::string gpu_model;     // nodes, offers, jobs (first allowed model)
  TimeMs created_at = 0;
  TimeMs updated_at = 0;
  int64_t version = 0;       // starts at 1, +1 on each update (optimistic concurrency)
  nlohmann::json body;       // the canonical document
};

// Filterable index columns: "name", "tenant_id", "supplier_id", "project_id", "state", "region", "gpu_model";
// and "sha256", the content digest of artifacts and images, and "corrects", the measurement a
// measurement corrects (body keys, indexed; never matching another kind).
struct ListQuery {
  std::string kind;
  std::map<std::string, std::string> eq;  // column -> exact value
  std::string after_id;                   // keyset pagination: ids strictly greater than this
  int limit = 100;                        // 1..1000
  TimeMs updated_since = 0;               // > 0: only records written at or after this (updated_at)
};

struct Page {
  std::vector<Record> items;
  std::string next_after;  // empty when this is the last page
};

struct TokenRow {
  std::string id;
  std::string user_id;
  std::string tenant_id;    // empty for operator/supplier users
  std::string supplier_id;  // set for supplier users
  std::string role;
  std::string name;
  std::string secret_hash;  // sha256 hex of the secret; the secret itself is never stored
  TimeMs created_at = 0;
  TimeMs expires_at = 0;    // 0 = never
  bool revoked = false;
};

struct JobEvent {
  std::string job_id;
  TimeMs at = 0;
  std::string from_state;
  std::string to_state;
  Message reason;
};

struct AuditEntry {
  TimeMs at = 0;
  std::string actor;   // user id
  std::string action;  // "create", "update", "delete", "cancel", ...
  std::string kind;
  std::string object_id;
  std::string detail;
};

// --- job metrics (sqlite_metrics.cc; docs/resources/job-metrics.md) ---
// One point of a quality metric a job reports (val_accuracy, loss, ...). Metrics are not money, so
// value is a double (always finite). tenant_id and project_id are the job's, copied for scoping.
struct JobMetricRow {
  std::string job_id, tenant_id, project_id, name;
  TimeMs at = 0;
  double value = 0;
  bool higher_is_better = true;
};
// Points with at in [from, to) of one job (job_id set), or of every job of a tenant (tenant_id set,
// job_id empty); both set: that job, if it is the tenant's.
// ends_only: only the first and the last point of each (job, name) series in the range (one when
// they are the same), aggregated in the database so a read never holds a tenant's every point.
struct JobMetricFilter {
  std::string job_id, tenant_id;
  TimeMs from = 0, to = 0;
  bool ends_only = false;
};
// What a job may keep: past either, insert_job_metrics refuses the batch (kInvalid naming points).
inline constexpr int64_t kMaxJobMetricPoints = 100'000;
inline constexpr int64_t kMaxJobMetricNames = 100;
// --- end job metrics ---

// Operations available inside one write transaction.
class StoreTx {
 public:
  virtual ~StoreTx() = default;
  // Sets version=1. kConflict if (kind,id) exists or (kind, scope, name) is taken.
  virtual Status insert(const Record& r) = 0;
  // Requires r.version == stored version; stores version+1. kNotFound / kConflict.
  virtual Status update(const Record& r) = 0;
  virtual Status remove(const std::string& kind, const std::string& id) = 0;
  virtual Result<Record> get(const std::string& kind, const std::string& id) = 0;
  // get(), and no other writer may change or remove the record until this transaction ends
  // (PostgreSQL: SELECT … FOR UPDATE, so another server's update waits for the commit; SQLite's
  // one writer holds the whole database already). Used by the leader lease's fence.
  virtual Result<Record> get_locked(const std::string& kind, const std::string& id) = 0;
  // get(), and no other writer may change or remove the record until this transaction ends, though
  // other transactions may hold it shared too (PostgreSQL: SELECT … FOR SHARE; SQLite: get()). A
  // child's write holds its parents so: a parent's delete, which takes get_locked, waits for it
  // and then counts the child, or runs first and the child's write finds the parent gone.
  virtual Result<Record> get_shared(const std::string& kind, const std::string& id) = 0;
  virtual Result<Page> list(const ListQuery& q) = 0;
  virtual Result<int64_t> count(const std::string& kind, const std::map<std::string, std::string>& eq) = 0;
  // Every id of `kind` matching `eq` (the same columns as list()), in id order, unpaged, without
  // reading the bodies: the scheduler's per-tick look at which jobs are where.
  virtual Result<std::vector<std::string>> list_ids(const std::string& kind,
                                                    const std::map<std::string, std::string>& eq) = 0;
  // The bytes the tenant's artifacts and images declare (each one's size_bytes when an integer),
  // kept by the database as they are written (migrations.cc version 7): one read however many
  // records the tenant has. 0 for a tenant with none.
  virtual Result<int64_t> tenant_stored_bytes(const std::string& tenant_id) = 0;
  virtual Status insert_token(const TokenRow& t) = 0;
  virtual Status revoke_token(const std::string& token_id) = 0;
  // Same filters as Store::tokens, inside the transaction.
  virtual Result<std::vector<TokenRow>> list_tokens(const std::map<std::string, std::string>& eq) = 0;
  // Revokes every token of a user (0 tokens is fine).
  virtual Status revoke_user_tokens(const std::string& user_id) = 0;
  // Deletes the user's dead tokens (revoked, or expired at `now`) but the `keep` newest (by
  // created_at, then id): their rows would otherwise pile up without end. Returns how many went.
  virtual Result<int64_t> prune_dead_tokens(const std::string& user_id, TimeMs now, int64_t keep) = 0;
  virtual Status append_job_event(const JobEvent& e) = 0;
  virtual Status append_audit(const AuditEntry& a) = 0;

  // --- usage (sqlite_usage.cc) ---
  // Stores a batch of resolved samples under its idempotency key. A key already stored with the
  // same content_sha256 is a duplicate: nothing is stored and the outcome says so (with the stored
  // batch's counts); with another digest it is kConflict naming the key.
  virtual Result<UsageIngestOutcome> insert_usage_batch(const UsageBatchRows& b) = 0;
  // Folds every raw sample with at < raw_before (floored to a whole minute, so no minute is cut)
  // into the per-minute tables, merging with minutes already there, and deletes those raw rows;
  // forgets idempotency keys received before keys_before.
  virtual Result<UsageRollupStats> roll_up_usage(TimeMs raw_before, TimeMs keys_before) = 0;

  // --- job metrics (sqlite_metrics.cc) ---
  // Stores points; one value per (job_id, name, at): a point at an instant already stored replaces
  // its value (so a retried report is harmless). Every row's higher_is_better must agree with the
  // stored points of its job and name and with the earlier rows of the batch, else kConflict naming
  // "rows[i].higher_is_better"; an empty id or name, or a value that is not finite, is kInvalid
  // naming rows[i].<field>.
  virtual Status insert_job_metrics(const std::vector<JobMetricRow>& rows) = 0;
};

// The read side of a store: what every holder but the single writer gets (the server's services,
// routes and read models hold a StoreReader; only the control loop holds the Store).
class StoreReader {
 public:
  virtual ~StoreReader() = default;
  // Reads: safe from any thread; they see the last committed state.
  virtual Result<Record> get(const std::string& kind, const std::string& id) = 0;
  virtual Result<Page> list(const ListQuery& q) = 0;
  virtual Result<int64_t> count(const std::string& kind, const std::map<std::string, std::string>& eq) = 0;
  virtual Result<int64_t> tenant_stored_bytes(const std::string& tenant_id) = 0;  // as StoreTx's
  // nullopt: no such token. An error: the store could not say (the caller answers 503, not 401).
  virtual Result<std::optional<TokenRow>> token_by_hash(const std::string& secret_hash) = 0;
  virtual Result<std::vector<TokenRow>> tokens(const std::map<std::string, std::string>& eq) = 0;  // user_id/tenant_id
  virtual Result<std::vector<JobEvent>> job_events(const std::string& job_id) = 0;
  virtual Result<std::vector<AuditEntry>> audit(const std::string& kind, int limit) = 0;
  // Usage reads. Ranges are [from, to); points come in time order (raw samples and rolled-up
  // minutes merged), at most `limit` of them (1..1000000).
  virtual Result<std::vector<GpuUsagePoint>> gpu_usage(const std::string& node_id, int64_t gpu, TimeMs from, TimeMs to,
                                                       int limit) = 0;
  virtual Result<std::vector<JobUsagePoint>> job_usage(const std::string& job_id, TimeMs from, TimeMs to,
                                                       int limit) = 0;
  // Every job of the tenant's points in [from, to), as job_usage gives them, ordered by job id then
  // time; at most `limit` (1..10000000) points in all (one read where an invoice would otherwise
  // ask per run).
  virtual Result<std::vector<std::pair<std::string, JobUsagePoint>>> tenant_job_usage(const std::string& tenant_id,
                                                                                     TimeMs from, TimeMs to,
                                                                                     int limit) = 0;
  // Totals per job (jobs with no usage in the range are left out), ordered by job id.
  virtual Result<std::vector<JobUsageTotals>> job_usage_totals(const JobUsageFilter& f) = 0;
  // Job metric points matching f (see JobMetricFilter), ordered by job_id, name, at. kInvalid when
  // f.to <= f.from or neither job_id nor tenant_id is given.
  virtual Result<std::vector<JobMetricRow>> job_metrics(const JobMetricFilter& f) = 0;
  // --- dashboard: GPU utilization per time bucket (sqlite_usage_buckets.cc) ---
  // Sums of utilization per (node, GPU, bucket) over raw samples and rolled-up minutes together,
  // aggregated in SQL so a heatmap never reads the points. See GpuBucketQuery for the filters.
  virtual Result<std::vector<GpuBucket>> gpu_usage_buckets(const GpuBucketQuery& q) = 0;
  virtual int schema_version() = 0;
  virtual bool healthy() = 0;  // a trivial read succeeds
};

class Store : public StoreReader {
 public:
  // Runs fn in one transaction on the single writer connection; commits (durably) when fn returns
  // ok, rolls back otherwise and returns fn's error.
  virtual Status write(const std::function<Status(StoreTx&)>& fn) = 0;
};

// Every record of `kind` matching `eq`, following the pages; `reader` is a Store (any thread) or
// the StoreTx of a write.
template <class Reader>
Result<std::vector<Record>> list_all(Reader& reader, const std::string& kind, std::map<std::string, std::string> eq = {}) {
  std::vector<Record> out;
  ListQuery q{kind, std::move(eq), "", 1000};
  for (;;) {
    auto page = reader.list(q);
    if (!page) return page.error();
    for (auto& r : page->items) out.push_back(std::move(r));
    if (page->next_after.empty()) return out;
    q.after_id = page->next_after;
  }
}

// Locks row (fresh.kind, fresh.id) until the transaction ends, inserting `fresh` first when it is
// not there: a row whose lock serializes writers that check something across many records before
// they write (several servers on one PostgreSQL database). Another transaction inserting it at
// the same moment makes this insert wait for that one's commit and then conflict; the row is
// there then, and locked here.
inline Result<Record> lock_or_insert(StoreTx& tx, const Record& fresh) {
  auto cur = tx.get_locked(fresh.kind, fresh.id);
  if (cur || cur.error().code != Code::kNotFound) return cur;
  if (Status s = tx.insert(fresh); !s && s.error().code != Code::kConflict) return s.error();
  return tx.get_locked(fresh.kind, fresh.id);
}

// lock_or_insert of row (write-locks, id), whose body says what its lock serializes.
inline Status take_write_lock(StoreTx& tx, const std::string& id, const std::string& serializes) {
  Record r;
  r.kind = "write-locks";
  r.id = id;
  r.name = id;
  r.body = {{"serializes", serializes}};
  auto l = lock_or_insert(tx, r);
  return l ? ok_status() : Status(l.error());
}

struct SqliteOptions {
  std::string path;           // file path; created if missing
  bool synchronous_full = true;  // fsync each commit (acknowledged == durable, also on power loss)
  int busy_timeout_ms = 5000;
};

// Opens (creating if needed) the file in WAL mode and applies pending schema migrations.
Result<std::unique_ptr<Store>> open_sqlite_store(const SqliteOptions& opts);

struct PostgresOptions {
  // "postgresql://user:secret@host:5432/gpurent?sslmode=require" or a libpq key=value string
  // ("host=/run/postgresql dbname=gpurent"). The database must exist; its schema is created.
  std::string url;
  int readers = 4;             // reader connections at most (1..64), opened as reads need them
  int connect_timeout_s = 10;  // per connection attempt (1..3600)
};

// Connects the writer (and one reader, to fail early), then applies pending schema migrations.
// Commits are durable when write() returns (synchronous_commit is on for the writer's session).
// Errors: kInvalid naming "url", "readers" or "connect_timeout_s" for bad options; kUnavailable
// when the server cannot be reached (the message names host, port, database and user, never the
// password).
Result<std::unique_ptr<Store>> open_postgres_store(const PostgresOptions& opts);

// Whether a `--db` argument names a PostgreSQL database (a postgresql:// or postgres:// URL)
// rather than an SQLite file.
bool is_postgres_url(std::string_view db);
// A `--db` argument fit for logs and messages: a URL's password (user:PASSWORD@ or a password=
// parameter) replaced by "***"; a file path as given.
std::string describe_db(const std::string& db);

}  // namespace gpurent
