// Schema of the SQLite store.
//
// Why one `objects` table rather than one table per resource kind: every kind is stored the same
// way (the canonical JSON document plus the same handful of index columns from IndexCols), and
// new kinds keep arriving (instances, endpoints, reservations, market orders...). A single table
// means a new kind needs no migration and no new SQL, get/list/update are one code path, the
// name-uniqueness rule is one index, and the PostgreSQL store mirrors it with a jsonb body
// (pg_migrations.cc). The cost, indexes shared across kinds, is paid for by putting `kind` first in
// every index, so each kind's rows form their own contiguous key range.
//
// Design notes:
// * A rowid table (not WITHOUT ROWID): bodies are documents of several hundred bytes to a few KB,
//   past the size at which SQLite recommends WITHOUT ROWID.
// * Secondary indexes end in `id` so a filtered list walks the index in id order and keyset
//   pagination (id > after_id ... ORDER BY id LIMIT n) never sorts.
// * Names are unique per (kind, scope), scope = tenant_id if set, else supplier_id if set, else ''
//   (global). `scope` is a generated column so it can never disagree with its inputs. Kinds
//   without a name store NULL there, and NULLs never collide in a UNIQUE index.
// * STRICT tables: a value of the wrong type is an error, not silently coerced.
// * job_events and audit_log are append-only; their INTEGER PRIMARY KEY (the rowid) gives the
//   order of appends, which timestamps alone cannot (equal milliseconds).
// Never edit a migration that has shipped: add a new one.
#include "store/migrations.h"

#include <limits>
#include <string>

namespace gpurent {
namespace {

constexpr const char* kV1 = R"sql(
CREATE TABLE objects (
  kind        TEXT NOT NULL,
  id          TEXT NOT NULL,
  name        TEXT,
  tenant_id   TEXT NOT NULL DEFAULT '',
  supplier_id TEXT NOT NULL DEFAULT '',
  project_id  TEXT NOT NULL DEFAULT '',
  state       TEXT NOT NULL DEFAULT '',
  region      TEXT NOT NULL DEFAULT '',
  gpu_model   TEXT NOT NULL DEFAULT '',
  scope       TEXT GENERATED ALWAYS AS (
                CASE WHEN tenant_id <> '' THEN tenant_id
                     WHEN supplier_id <> '' THEN supplier_id
                     ELSE '' END) VIRTUAL,
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL,
  version     INTEGER NOT NULL CHECK (version >= 1),
  body        TEXT NOT NULL,
  PRIMARY KEY (kind, id)
) STRICT;
CREATE UNIQUE INDEX objects_name_in_scope ON objects (kind, scope, name);
CREATE INDEX objects_by_name ON objects (kind, name, id);
CREATE INDEX objects_by_tenant ON objects (kind, tenant_id, id);
CREATE INDEX objects_by_supplier ON objects (kind, supplier_id, id);
CREATE INDEX objects_by_project ON objects (kind, project_id, id);
CREATE INDEX objects_by_state ON objects (kind, state, id);
CREATE INDEX objects_by_region ON objects (kind, region, id);
CREATE INDEX objects_by_gpu_model ON objects (kind, gpu_model, id);

CREATE TABLE api_tokens (
  id          TEXT NOT NULL PRIMARY KEY,
  user_id     TEXT NOT NULL,
  tenant_id   TEXT NOT NULL DEFAULT '',
  supplier_id TEXT NOT NULL DEFAULT '',
  role        TEXT NOT NULL,
  name        TEXT NOT NULL DEFAULT '',
  secret_hash TEXT NOT NULL UNIQUE,
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL DEFAULT 0,
  revoked     INTEGER NOT NULL DEFAULT 0 CHECK (revoked IN (0, 1))
) STRICT;
CREATE INDEX api_tokens_by_user ON api_tokens (user_id);
CREATE INDEX api_tokens_by_tenant ON api_tokens (tenant_id);
CREATE INDEX api_tokens_by_supplier ON api_tokens (supplier_id);

CREATE TABLE job_events (
  seq        INTEGER PRIMARY KEY,
  job_id     TEXT NOT NULL,
  at         INTEGER NOT NULL,
  from_state TEXT NOT NULL,
  to_state   TEXT NOT NULL,
  reason     TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX job_events_by_job ON job_events (job_id, seq);

CREATE TABLE audit_log (
  seq       INTEGER PRIMARY KEY,
  at        INTEGER NOT NULL,
  actor     TEXT NOT NULL,
  action    TEXT NOT NULL,
  kind      TEXT NOT NULL,
  object_id TEXT NOT NULL,
  detail    TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX audit_log_by_kind ON audit_log (kind, seq);
)sql";

// Usage metering (docs/resources/usage.md). Raw samples are keyed so that one GPU's (one job's)
// rows are one contiguous key range in time order: series reads and the rollup are range scans.
// WITHOUT ROWID: the key is the row's natural order and the rows are small. `batch` (the
// usage_batches seq) keeps equal times from different batches apart. usage_gpus / usage_jobs list
// what has raw rows and since when (raw_from, NULL when none), so the rollup visits only those
// instead of scanning the sample tables; usage_jobs also carries each job's tenant and project for
// per-tenant and per-project totals. Minutes keep count/sum/max per metric so they merge exactly.
constexpr const char* kV2 = R"sql(
CREATE TABLE usage_batches (
  seq             INTEGER PRIMARY KEY,
  idempotency_key TEXT NOT NULL UNIQUE,
  content_sha256  TEXT NOT NULL,
  received_at     INTEGER NOT NULL,
  submitted_by    TEXT NOT NULL DEFAULT '',
  gpu_samples     INTEGER NOT NULL CHECK (gpu_samples >= 0),
  job_samples     INTEGER NOT NULL CHECK (job_samples >= 0)
) STRICT;
CREATE INDEX usage_batches_by_received ON usage_batches (received_at);

CREATE TABLE usage_gpu_samples (
  node_id              TEXT NOT NULL,
  gpu                  INTEGER NOT NULL,
  at                   INTEGER NOT NULL,
  batch                INTEGER NOT NULL,
  utilization_pct      INTEGER NOT NULL,
  memory_used_mib      INTEGER,
  power_mw             INTEGER,
  sm_clock_mhz         INTEGER,
  gr_engine_active_pct INTEGER,
  PRIMARY KEY (node_id, gpu, at, batch)
) STRICT, WITHOUT ROWID;

CREATE TABLE usage_job_samples (
  job_id           TEXT NOT NULL,
  at               INTEGER NOT NULL,
  batch            INTEGER NOT NULL,
  ord              INTEGER NOT NULL,
  storage_io_bytes INTEGER NOT NULL,
  egress_bytes     INTEGER NOT NULL,
  input_tokens     INTEGER NOT NULL,
  output_tokens    INTEGER NOT NULL,
  requests         INTEGER NOT NULL,
  PRIMARY KEY (job_id, at, batch, ord)
) STRICT, WITHOUT ROWID;

CREATE TABLE usage_gpus (
  node_id  TEXT NOT NULL,
  gpu      INTEGER NOT NULL,
  raw_from INTEGER,
  PRIMARY KEY (node_id, gpu)
) STRICT, WITHOUT ROWID;

CREATE TABLE usage_jobs (
  job_id     TEXT NOT NULL PRIMARY KEY,
  tenant_id  TEXT NOT NULL,
  project_id TEXT NOT NULL,
  raw_from   INTEGER
) STRICT, WITHOUT ROWID;
CREATE INDEX usage_jobs_by_tenant ON usage_jobs (tenant_id, job_id);
CREATE INDEX usage_jobs_by_project ON usage_jobs (project_id, job_id);

CREATE TABLE usage_gpu_minutes (
  node_id   TEXT NOT NULL,
  gpu       INTEGER NOT NULL,
  minute    INTEGER NOT NULL,
  samples   INTEGER NOT NULL,
  util_sum  INTEGER NOT NULL, util_max  INTEGER NOT NULL,
  mem_n     INTEGER NOT NULL, mem_sum   INTEGER NOT NULL, mem_max   INTEGER NOT NULL,
  power_n   INTEGER NOT NULL, power_sum INTEGER NOT NULL, power_max INTEGER NOT NULL,
  clock_n   INTEGER NOT NULL, clock_sum INTEGER NOT NULL, clock_max INTEGER NOT NULL,
  gr_n      INTEGER NOT NULL, gr_sum    INTEGER NOT NULL, gr_max    INTEGER NOT NULL,
  PRIMARY KEY (node_id, gpu, minute)
) STRICT, WITHOUT ROWID;

CREATE TABLE usage_job_minutes (
  job_id           TEXT NOT NULL,
  minute           INTEGER NOT NULL,
  samples          INTEGER NOT NULL,
  storage_io_bytes INTEGER NOT NULL,
  egress_bytes     INTEGER NOT NULL,
  input_tokens     INTEGER NOT NULL,
  output_tokens    INTEGER NOT NULL,
  requests         INTEGER NOT NULL,
  PRIMARY KEY (job_id, minute)
) STRICT, WITHOUT ROWID;
)sql";

// Job metrics (docs/resources/job-metrics.md): the quality a job reports about itself
// (val_accuracy, loss, ...), one value per job, metric name and instant. WITHOUT ROWID keyed
// (job_id, name, at): one series is one contiguous key range in time order, which is what per-job
// reads and the direction check (one row of the job and name) walk. tenant_id and project_id are
// copied from the job so a tenant's points over a range are one scan of (tenant_id, at) with no
// join to objects. value is REAL: metrics are not money, and SQLite stores no NaN (NOT NULL).
constexpr const char* kV3 = R"sql(
CREATE TABLE job_metric_points (
  job_id           TEXT NOT NULL,
  name             TEXT NOT NULL,
  at               INTEGER NOT NULL,
  tenant_id        TEXT NOT NULL,
  project_id       TEXT NOT NULL,
  value            REAL NOT NULL,
  higher_is_better INTEGER NOT NULL CHECK (higher_is_better IN (0, 1)),
  PRIMARY KEY (job_id, name, at)
) STRICT, WITHOUT ROWID;
CREATE INDEX job_metric_points_by_tenant ON job_metric_points (tenant_id, at);
)sql";

// Usage idempotency keys belong to their caller (docs/resources/usage.md): one tenant's key can
// neither take nor reveal another's. `scope` is "tenant:<id>", "supplier:<id>" or "platform"
// (operators and the server's own meters); the key is unique within its scope. SQLite cannot
// change a table's UNIQUE constraint, so the table is rebuilt; existing batches get the scope of
// the user who sent them (platform when that user is gone).
constexpr const char* kV4 = R"sql(
CREATE TABLE usage_batches_v4 (
  seq             INTEGER PRIMARY KEY,
  scope           TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  content_sha256  TEXT NOT NULL,
  received_at     INTEGER NOT NULL,
  submitted_by    TEXT NOT NULL DEFAULT '',
  gpu_samples     INTEGER NOT NULL CHECK (gpu_samples >= 0),
  job_samples     INTEGER NOT NULL CHECK (job_samples >= 0),
  UNIQUE (scope, idempotency_key)
) STRICT;
INSERT INTO usage_batches_v4 (seq, scope, idempotency_key, content_sha256, received_at, submitted_by, gpu_samples,
                              job_samples)
  SELECT b.seq,
         coalesce((SELECT CASE WHEN o.tenant_id <> '' THEN 'tenant:' || o.tenant_id
                               WHEN o.supplier_id <> '' THEN 'supplier:' || o.supplier_id
                               ELSE 'platform' END
                     FROM objects o WHERE o.kind = 'users' AND o.id = b.submitted_by), 'platform'),
         b.idempotency_key, b.content_sha256, b.received_at, b.submitted_by, b.gpu_samples, b.job_samples
    FROM usage_batches b;
DROP TABLE usage_batches;
ALTER TABLE usage_batches_v4 RENAME TO usage_batches;
CREATE INDEX usage_batches_by_received ON usage_batches (received_at);
)sql";

// Job events keep their reason as a message code with arguments (src/core/message.h), so it can
// be read in any language; "reason" stays its English text. Events written before keep ''.
constexpr const char* kV5 = R"sql(
ALTER TABLE job_events ADD COLUMN reason_message TEXT NOT NULL DEFAULT '';
)sql";

// A tenant's unfinished jobs are counted at each submit (the cap on them, server/api/jobs.cc) and
// its waiting jobs read by the scheduler: by tenant and state, without walking the tenant's whole
// history or every tenant's waiting jobs.
constexpr const char* kV6 = R"sql(
CREATE INDEX objects_by_tenant_state ON objects (kind, tenant_id, state, id);
)sql";

// Artifacts and images (docs/resources/artifacts.md) without walking them: found by their content
// digest (a delete keeps the file while another record names it; the filter "sha256": a partial
// index, so other kinds' writes neither parse their bodies nor add an entry) and summed per tenant
// (its storage quota, checked in the single writer at each create) in `tenant_storage`, which
// the object writes keep (sqlite_objects.cc: the bytes each record's integer size_bytes declares,
// platform images, with no tenant, not counted). Kept by the code rather than by triggers: a
// trigger on `objects` costs every write of every kind (5-10 us a row, measured), and only
// these two kinds need it.
constexpr const char* kV7 = R"sql(
CREATE INDEX objects_by_sha256 ON objects (kind, (body ->> 'sha256'), id) WHERE kind IN ('artifacts', 'images');
CREATE TABLE tenant_storage (
  tenant_id TEXT NOT NULL PRIMARY KEY,
  bytes     INTEGER NOT NULL
) STRICT;
INSERT INTO tenant_storage (tenant_id, bytes)
  SELECT tenant_id, sum(CASE json_type(body, '$.size_bytes') WHEN 'integer' THEN body ->> 'size_bytes' ELSE 0 END)
  FROM objects WHERE kind IN ('artifacts', 'images') AND tenant_id <> '' GROUP BY tenant_id;
)sql";

// A measurement's correction (docs/resources/measurements.md) is checked against the others of the
// same measurement in the single writer: found by the measurement it corrects (the filter
// "corrects"), not by walking the supplier's every measurement.
constexpr const char* kV8 = R"sql(
CREATE INDEX objects_by_corrects ON objects (kind, (body ->> 'corrects'), id) WHERE kind = 'measurements';
)sql";

// A contract's clauses are what was signed: one created without its own had followed its first
// offer's contract_template as the template changed (a supplier could lower an SLA floor for
// signed contracts). They are copied in at signing now (server/api/contracts.cc); this copies the
// template as it is at the upgrade into each stored contract without clauses (every default when
// the offer is gone or its template is not an object). A body that is not a JSON object is left
// for its reader to report.
constexpr const char* kV9 = R"sql(
UPDATE objects
   SET body = json_set(body, '$.clauses', json(coalesce(
         (SELECT o.body -> '$.contract_template' FROM objects AS o
           WHERE o.kind = 'offers' AND o.id = objects.body ->> '$.offer_ids[0]' AND json_valid(o.body)
             AND json_type(o.body, '$.contract_template') = 'object'), '{}'))),
       version = version + 1
 WHERE kind = 'contracts'
   AND CASE WHEN json_valid(body) AND json_type(body) = 'object'
            THEN coalesce(json_type(body, '$.clauses'), 'null') = 'null' ELSE 0 END;
)sql";

constexpr Migration kMigrations[] = {
    {1, "objects, api_tokens, job_events, audit_log", kV1},
    {2, "usage: ingest batches, raw GPU and job samples, per-minute rollups", kV2},
    {3, "job metrics: points a job reports about its quality", kV3},
    {4, "usage: idempotency keys scoped to their caller", kV4},
    {5, "job events: reasons as message codes", kV5},
    {6, "objects: an index by tenant and state", kV6},
    {7, "artifacts and images: an index by content digest, each tenant's stored bytes", kV7},
    {8, "measurements: an index by the measurement each corrects", kV8},
    {9, "contracts: clauses copied from the first offer's template", kV9},
};

constexpr const char* kBootstrap =
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    " version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL, description TEXT NOT NULL)";

// Runs one migration and records it, all in one transaction. Another process may have applied it
// since we read the version; the check inside the write lock makes that a no-op.
Status apply_one(Db& db, const Migration& m, TimeMs now) {
  const std::string what = "schema migration " + std::to_string(m.version) + " (" + m.description + ")";
  if (auto s = db.exec("BEGIN IMMEDIATE"); !s) return s;
  auto body = [&]() -> Status {
    auto q = db.query("SELECT 1 FROM schema_migrations WHERE version = ?1");
    if (!q) return q.error();
    q->bind(1, int64_t{m.version});
    auto row = q->step(what);
    if (!row) return row.error();
    if (*row) return ok_status();  // applied meanwhile
    if (auto s = db.exec(m.sql); !s) return s;
    auto ins = db.query("INSERT INTO schema_migrations (version, applied_at, description) VALUES (?1, ?2, ?3)");
    if (!ins) return ins.error();
    ins->bind(1, int64_t{m.version}).bind(2, now).bind(3, m.description);
    return ins->run(what);
  };
  Status s = body();
  if (!s) {
    (void)db.exec("ROLLBACK");  // the migration's error is the one worth reporting
    Error e = s.error();
    e.message = what + " failed: " + e.message;
    return e;
  }
  return db.exec("COMMIT");
}

}  // namespace

std::span<const Migration> sqlite_migrations() { return kMigrations; }

Result<int> applied_schema_version(Db& db) {
  auto q = db.query("SELECT coalesce(max(version), 0) FROM schema_migrations");
  if (!q) return q.error();
  auto row = q->step("reading the schema version");
  if (!row) return row.error();
  return schema_version_of(q->integer(0));
}

Result<int> schema_version_of(int64_t stored) {
  // Read whole: a version past int (a crafted backup) must not wrap to an old one and pass the
  // newer-than-this-binary check.
  if (stored < 0 || stored > std::numeric_limits<int>::max())
    return Error::make(Code::kInternal,
                       "database schema version " + std::to_string(stored) + " is not a version gpurent writes");
  return static_cast<int>(stored);
}

Status check_schema_not_newer(int current, std::span<const Migration> migrations) {
  const int known = migrations.empty() ? 0 : migrations.back().version;
  if (current <= known) return ok_status();
  return Error::make(Code::kInternal, "database schema version " + std::to_string(current) +
                                          " is newer than this binary supports (" + std::to_string(known) +
                                          "); it was written by a newer gpurent: upgrade gpurent to open it");
}

Result<int> run_migrations(std::span<const Migration> migrations, const MigrationSteps& steps) {
  int prev = 0;
  for (const Migration& m : migrations) {
    if (m.version <= prev)
      return Error::make(Code::kInternal, "schema migrations out of order at version " + std::to_string(m.version));
    prev = m.version;
  }
  if (auto s = steps.bootstrap(); !s) return s.error();
  auto current = steps.read_version();
  if (!current) return current;
  if (auto s = check_schema_not_newer(*current, migrations); !s) return s.error();
  for (const Migration& m : migrations) {
    if (m.version <= *current) continue;
    if (auto s = steps.apply_one(m); !s) return s.error();
  }
  return steps.read_version();
}

Result<int> apply_migrations(Db& db, std::span<const Migration> migrations, TimeMs now) {
  return run_migrations(migrations, {[&] { return db.exec(kBootstrap); }, [&] { return applied_schema_version(db); },
                                     [&](const Migration& m) { return apply_one(db, m, now); }});
}

}  // namespace gpurent
