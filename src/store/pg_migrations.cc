// Schema of the PostgreSQL store, versioned like the SQLite one (migrations.cc explains the
// single `objects` table; the same reasoning holds here) and recorded the same way in
// schema_migrations. Its versions are its own: it starts from what the SQLite schema became after
// its five migrations (scoped idempotency keys and coded job-event reasons from the start), so
// version 3 here stores what version 5 stores there.
//
// Differences from the SQLite schema, and why:
// * body is jsonb: the document is checked to be JSON on the way in and can be indexed later.
//   jsonb keeps numbers as `numeric` (exact, any size), so what comes back parses to the same
//   nlohmann::json (store_test.cc BodiesRoundTripAsTheSameJson); it drops duplicate object keys
//   (nlohmann never writes any) and refuses the character U+0000 (the store answers kInvalid "body").
// * Every text column that is compared or ordered is COLLATE "C": byte order, as SQLite's BINARY,
//   so keyset pagination (id > after ORDER BY id) and every "ordered by id" read come back in the
//   same order on both backends whatever the database's locale.
// * Append order (job_events, audit_log, usage_batches) comes from identity columns.
// * Raw usage samples are partitioned by month (declarative RANGE partitioning on `at`, UTC
//   months in milliseconds since the epoch). A month's partition is created on demand, by
//   usage_ensure_month_partitions(), in the transaction that inserts its first sample (pg_usage.cc),
//   as a plain table then ATTACHed: attaching takes a lock readers of the parent do not wait for,
//   where CREATE TABLE ... PARTITION OF would block them until the ingest commits. The rollup folds
//   old samples into the per-minute tables and then drops the months it emptied
//   (usage_drop_empty_partitions) instead of leaving a table per month behind. usage_partitions
//   lists the partitions and their bounds. No DEFAULT partition: a sample never lands in a catch-all
//   that a later month's partition would then have to be carved out of.
// Never edit a migration that has shipped: add a new one.
#include <functional>
#include <string>

#include "store/pg_queries.h"

namespace gpurent {
namespace {

constexpr const char* kV1 = R"sql(
CREATE TABLE objects (
  kind        text COLLATE "C" NOT NULL,
  id          text COLLATE "C" NOT NULL,
  name        text COLLATE "C",
  tenant_id   text COLLATE "C" NOT NULL DEFAULT '',
  supplier_id text COLLATE "C" NOT NULL DEFAULT '',
  project_id  text COLLATE "C" NOT NULL DEFAULT '',
  state       text COLLATE "C" NOT NULL DEFAULT '',
  region      text COLLATE "C" NOT NULL DEFAULT '',
  gpu_model   text COLLATE "C" NOT NULL DEFAULT '',
  scope       text COLLATE "C" GENERATED ALWAYS AS (
                CASE WHEN tenant_id <> '' THEN tenant_id
                     WHEN supplier_id <> '' THEN supplier_id
                     ELSE '' END) STORED,
  created_at  bigint NOT NULL,
  updated_at  bigint NOT NULL,
  version     bigint NOT NULL CHECK (version >= 1),
  body        jsonb NOT NULL,
  CONSTRAINT objects_pkey PRIMARY KEY (kind, id)
);
CREATE UNIQUE INDEX objects_name_in_scope ON objects (kind, scope, name);
CREATE INDEX objects_by_name ON objects (kind, name, id);
CREATE INDEX objects_by_tenant ON objects (kind, tenant_id, id);
CREATE INDEX objects_by_supplier ON objects (kind, supplier_id, id);
CREATE INDEX objects_by_project ON objects (kind, project_id, id);
CREATE INDEX objects_by_state ON objects (kind, state, id);
CREATE INDEX objects_by_region ON objects (kind, region, id);
CREATE INDEX objects_by_gpu_model ON objects (kind, gpu_model, id);

CREATE TABLE api_tokens (
  id          text COLLATE "C" NOT NULL,
  user_id     text COLLATE "C" NOT NULL,
  tenant_id   text COLLATE "C" NOT NULL DEFAULT '',
  supplier_id text COLLATE "C" NOT NULL DEFAULT '',
  role        text NOT NULL,
  name        text NOT NULL DEFAULT '',
  secret_hash text COLLATE "C" NOT NULL,
  created_at  bigint NOT NULL,
  expires_at  bigint NOT NULL DEFAULT 0,
  revoked     boolean NOT NULL DEFAULT false,
  CONSTRAINT api_tokens_pkey PRIMARY KEY (id),
  CONSTRAINT api_tokens_secret_hash_key UNIQUE (secret_hash)
);
CREATE INDEX api_tokens_by_user ON api_tokens (user_id);
CREATE INDEX api_tokens_by_tenant ON api_tokens (tenant_id);
CREATE INDEX api_tokens_by_supplier ON api_tokens (supplier_id);

CREATE TABLE job_events (
  seq            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  job_id         text COLLATE "C" NOT NULL,
  at             bigint NOT NULL,
  from_state     text NOT NULL,
  to_state       text NOT NULL,
  reason         text NOT NULL DEFAULT '',
  reason_message text NOT NULL DEFAULT ''
);
CREATE INDEX job_events_by_job ON job_events (job_id, seq);

CREATE TABLE audit_log (
  seq       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at        bigint NOT NULL,
  actor     text NOT NULL,
  action    text NOT NULL,
  kind      text COLLATE "C" NOT NULL,
  object_id text NOT NULL,
  detail    text NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_by_kind ON audit_log (kind, seq);
)sql";

// Usage metering (docs/resources/usage.md); the tables mirror SQLite's (migrations.cc, v2 and v4).
constexpr const char* kV2 = R"sql(
CREATE TABLE usage_batches (
  seq             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  scope           text COLLATE "C" NOT NULL,
  idempotency_key text COLLATE "C" NOT NULL,
  content_sha256  text NOT NULL,
  received_at     bigint NOT NULL,
  submitted_by    text NOT NULL DEFAULT '',
  gpu_samples     bigint NOT NULL CHECK (gpu_samples >= 0),
  job_samples     bigint NOT NULL CHECK (job_samples >= 0),
  CONSTRAINT usage_batches_key UNIQUE (scope, idempotency_key)
);
CREATE INDEX usage_batches_by_received ON usage_batches (received_at);

CREATE TABLE usage_gpu_samples (
  node_id              text COLLATE "C" NOT NULL,
  gpu                  bigint NOT NULL,
  at                   bigint NOT NULL,
  batch                bigint NOT NULL,
  utilization_pct      bigint NOT NULL,
  memory_used_mib      bigint,
  power_mw             bigint,
  sm_clock_mhz         bigint,
  gr_engine_active_pct bigint,
  PRIMARY KEY (node_id, gpu, at, batch)
) PARTITION BY RANGE (at);

CREATE TABLE usage_job_samples (
  job_id           text COLLATE "C" NOT NULL,
  at               bigint NOT NULL,
  batch            bigint NOT NULL,
  ord              bigint NOT NULL,
  storage_io_bytes bigint NOT NULL,
  egress_bytes     bigint NOT NULL,
  input_tokens     bigint NOT NULL,
  output_tokens    bigint NOT NULL,
  requests         bigint NOT NULL,
  PRIMARY KEY (job_id, at, batch, ord)
) PARTITION BY RANGE (at);

CREATE TABLE usage_partitions (
  name   text COLLATE "C" PRIMARY KEY,
  parent text COLLATE "C" NOT NULL,
  lo     bigint NOT NULL,
  hi     bigint NOT NULL
);

CREATE TABLE usage_gpus (
  node_id  text COLLATE "C" NOT NULL,
  gpu      bigint NOT NULL,
  raw_from bigint,
  PRIMARY KEY (node_id, gpu)
);

CREATE TABLE usage_jobs (
  job_id     text COLLATE "C" NOT NULL PRIMARY KEY,
  tenant_id  text COLLATE "C" NOT NULL,
  project_id text COLLATE "C" NOT NULL,
  raw_from   bigint
);
CREATE INDEX usage_jobs_by_tenant ON usage_jobs (tenant_id, job_id);
CREATE INDEX usage_jobs_by_project ON usage_jobs (project_id, job_id);

CREATE TABLE usage_gpu_minutes (
  node_id   text COLLATE "C" NOT NULL,
  gpu       bigint NOT NULL,
  minute    bigint NOT NULL,
  samples   bigint NOT NULL,
  util_sum  bigint NOT NULL, util_max  bigint NOT NULL,
  mem_n     bigint NOT NULL, mem_sum   bigint NOT NULL, mem_max   bigint NOT NULL,
  power_n   bigint NOT NULL, power_sum bigint NOT NULL, power_max bigint NOT NULL,
  clock_n   bigint NOT NULL, clock_sum bigint NOT NULL, clock_max bigint NOT NULL,
  gr_n      bigint NOT NULL, gr_sum    bigint NOT NULL, gr_max    bigint NOT NULL,
  PRIMARY KEY (node_id, gpu, minute)
);

CREATE TABLE usage_job_minutes (
  job_id           text COLLATE "C" NOT NULL,
  minute           bigint NOT NULL,
  samples          bigint NOT NULL,
  storage_io_bytes bigint NOT NULL,
  egress_bytes     bigint NOT NULL,
  input_tokens     bigint NOT NULL,
  output_tokens    bigint NOT NULL,
  requests         bigint NOT NULL,
  PRIMARY KEY (job_id, minute)
);

-- Creates the missing month partitions of `parent` for the sample times `ats` (milliseconds since
-- the epoch, UTC). Identifiers go through format('%I'); the bounds are integers computed here.
CREATE FUNCTION usage_ensure_month_partitions(parent text, ats bigint[]) RETURNS integer
LANGUAGE plpgsql AS $fn$
DECLARE
  m       timestamp;
  part    text;
  lo      bigint;
  hi      bigint;
  created integer := 0;
BEGIN
  FOR m IN SELECT DISTINCT date_trunc('month', 'epoch'::timestamp + a * interval '1 millisecond')
             FROM unnest(ats) AS a LOOP
    part := parent || '_p' || to_char(m, 'YYYYMM');
    CONTINUE WHEN EXISTS (SELECT 1 FROM usage_partitions p WHERE p.name = part);
    -- Servers sharing the database may ingest the month's first samples at once: one creates the
    -- partition, the others wait for its commit here and then find it.
    PERFORM pg_advisory_xact_lock(hashtext('gpurent usage partition ' || part));
    CONTINUE WHEN EXISTS (SELECT 1 FROM usage_partitions p WHERE p.name = part);
    lo := (extract(epoch FROM m) * 1000)::bigint;
    hi := (extract(epoch FROM m + interval '1 month') * 1000)::bigint;
    EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', part, parent);
    EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%s) TO (%s)', parent, part, lo, hi);
    INSERT INTO usage_partitions (name, parent, lo, hi) VALUES (part, parent, lo, hi);
    created := created + 1;
  END LOOP;
  RETURN created;
END
$fn$;

-- Drops the partitions that end at or before `before_ms`. Called by the rollup right after it
-- deleted every raw sample before that time in the same transaction, so they are empty. Dropping
-- a partition locks its parent against readers: one that cannot get the lock within a second is
-- left for the next rollup rather than stalling reads behind it.
CREATE FUNCTION usage_drop_empty_partitions(before_ms bigint) RETURNS integer
LANGUAGE plpgsql AS $fn$
DECLARE
  p       record;
  saved   text := current_setting('lock_timeout');
  dropped integer := 0;
BEGIN
  FOR p IN SELECT name FROM usage_partitions WHERE hi <= before_ms ORDER BY name LOOP
    BEGIN
      PERFORM set_config('lock_timeout', '1s', true);
      EXECUTE format('DROP TABLE %I', p.name);
      DELETE FROM usage_partitions WHERE name = p.name;
      dropped := dropped + 1;
    EXCEPTION WHEN lock_not_available THEN
      NULL;
    END;
  END LOOP;
  PERFORM set_config('lock_timeout', saved, true);
  RETURN dropped;
END
$fn$;
)sql";

// Job metrics (docs/resources/job-metrics.md), as SQLite's v3. double precision is an IEEE double
// like SQLite's REAL; the check keeps out what SQLite cannot store either.
constexpr const char* kV3 = R"sql(
CREATE TABLE job_metric_points (
  job_id           text COLLATE "C" NOT NULL,
  name             text COLLATE "C" NOT NULL,
  at               bigint NOT NULL,
  tenant_id        text COLLATE "C" NOT NULL,
  project_id       text COLLATE "C" NOT NULL,
  value            double precision NOT NULL
                   CHECK (value <> 'NaN' AND value <> 'Infinity' AND value <> '-Infinity'),
  higher_is_better boolean NOT NULL,
  PRIMARY KEY (job_id, name, at)
);
CREATE INDEX job_metric_points_by_tenant ON job_metric_points (tenant_id, at);
)sql";

// Late samples racing the rollup (several servers on one database): a month's partition is
// dropped only while nobody adds to it. An ingest holds a share lock on the month's
// usage_partitions row until it commits; the rollup locks that row for update before it looks
// whether the partition is still empty, so it either waits for the ingest and sees its samples
// (the partition stays, the next rollup folds them) or drops the month first, and the ingest,
// which waited on the row, finds it gone and makes the month again. The rollup's lock waits are
// bounded (500 ms, under PostgreSQL's 1 s deadlock check): a month it cannot lock is left for the
// next rollup.
constexpr const char* kV4 = R"sql(
CREATE OR REPLACE FUNCTION usage_ensure_month_partitions(parent text, ats bigint[]) RETURNS integer
LANGUAGE plpgsql AS $fn$
DECLARE
  m       timestamp;
  part    text;
  lo      bigint;
  hi      bigint;
  created integer := 0;
BEGIN
  FOR m IN SELECT DISTINCT date_trunc('month', 'epoch'::timestamp + a * interval '1 millisecond')
             FROM unnest(ats) AS a LOOP
    part := parent || '_p' || to_char(m, 'YYYYMM');
    PERFORM 1 FROM usage_partitions p WHERE p.name = part FOR SHARE;
    CONTINUE WHEN FOUND;
    -- Servers sharing the database may ingest the month's first samples at once: one creates the
    -- partition, the others wait for its commit here and then find it.
    PERFORM pg_advisory_xact_lock(hashtext('gpurent usage partition ' || part));
    PERFORM 1 FROM usage_partitions p WHERE p.name = part FOR SHARE;
    CONTINUE WHEN FOUND;
    lo := (extract(epoch FROM m) * 1000)::bigint;
    hi := (extract(epoch FROM m + interval '1 month') * 1000)::bigint;
    EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', part, parent);
    EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%s) TO (%s)', parent, part, lo, hi);
    INSERT INTO usage_partitions (name, parent, lo, hi) VALUES (part, parent, lo, hi);
    created := created + 1;
  END LOOP;
  RETURN created;
END
$fn$;

CREATE OR REPLACE FUNCTION usage_drop_empty_partitions(before_ms bigint) RETURNS integer
LANGUAGE plpgsql AS $fn$
DECLARE
  p       record;
  saved   text := current_setting('lock_timeout');
  busy    boolean;
  dropped integer := 0;
BEGIN
  FOR p IN SELECT name FROM usage_partitions WHERE hi <= before_ms ORDER BY name LOOP
    BEGIN
      PERFORM set_config('lock_timeout', '500ms', true);
      PERFORM 1 FROM usage_partitions WHERE name = p.name FOR UPDATE;
      CONTINUE WHEN NOT FOUND;
      EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I)', p.name) INTO busy;
      CONTINUE WHEN busy;  -- late samples came after the fold: the next rollup folds them
      EXECUTE format('DROP TABLE %I', p.name);
      DELETE FROM usage_partitions WHERE name = p.name;
      dropped := dropped + 1;
    EXCEPTION WHEN lock_not_available THEN
      NULL;
    END;
  END LOOP;
  PERFORM set_config('lock_timeout', saved, true);
  RETURN dropped;
END
$fn$;
)sql";

// A tenant's unfinished jobs are counted at each submit (the cap on them, server/api/jobs.cc) and
// its waiting jobs read by the scheduler: by tenant and state (as SQLite's version 6).
constexpr const char* kV5 = R"sql(
CREATE INDEX objects_by_tenant_state ON objects (kind, tenant_id, state, id);
)sql";

// Artifacts and images found by their content digest and summed per tenant without walking them
// (as SQLite's version 7): the partial index the filter "sha256" uses, and `tenant_storage`, kept
// by the object writes (pg_objects.cc), filled here from the records already there.
constexpr const char* kV6 = R"sql(
CREATE INDEX objects_by_sha256 ON objects (kind, (body ->> 'sha256'), id) WHERE kind IN ('artifacts', 'images');
CREATE TABLE tenant_storage (
  tenant_id text COLLATE "C" NOT NULL,
  bytes     bigint NOT NULL,
  CONSTRAINT tenant_storage_pkey PRIMARY KEY (tenant_id)
);
INSERT INTO tenant_storage (tenant_id, bytes)
  SELECT tenant_id,
         sum(CASE WHEN jsonb_typeof(body -> 'size_bytes') = 'number' AND (body ->> 'size_bytes') ~ '^-?[0-9]{1,18}$'
                  THEN (body ->> 'size_bytes')::bigint ELSE 0 END)
  FROM objects WHERE kind IN ('artifacts', 'images') AND tenant_id <> '' GROUP BY tenant_id;
)sql";

// Measurements found by the measurement each corrects (as SQLite's version 8).
constexpr const char* kV7 = R"sql(
CREATE INDEX objects_by_corrects ON objects (kind, (body ->> 'corrects'), id) WHERE kind = 'measurements';
)sql";

// Each stored contract without clauses gets its first offer's template as it is now (as
// SQLite's version 9).
constexpr const char* kV8 = R"sql(
UPDATE objects AS k
   SET body = jsonb_set(k.body, '{clauses}', coalesce(
         (SELECT o.body -> 'contract_template' FROM objects AS o
           WHERE o.kind = 'offers' AND o.id = k.body -> 'offer_ids' ->> 0
             AND jsonb_typeof(o.body -> 'contract_template') = 'object'), '{}'::jsonb)),
       version = k.version + 1
 WHERE k.kind = 'contracts' AND jsonb_typeof(k.body) = 'object'
   AND coalesce(jsonb_typeof(k.body -> 'clauses'), 'null') = 'null';
)sql";

constexpr Migration kMigrations[] = {
    {1, "objects, api_tokens, job_events, audit_log", kV1},
    {2, "usage: ingest batches, raw samples partitioned by month, per-minute rollups", kV2},
    {3, "job metrics: points a job reports about its quality", kV3},
    {4, "usage: a month's partition is dropped only while no ingest adds to it", kV4},
    {5, "objects: an index by tenant and state", kV5},
    {6, "artifacts and images: an index by content digest, each tenant's stored bytes", kV6},
    {7, "measurements: an index by the measurement each corrects", kV7},
    {8, "contracts: clauses copied from the first offer's template", kV8},
};

// Serializes schema changes between processes opening the same database (any fixed key).
constexpr int64_t kMigrationLock = 0x6770757265'6e7401;

constexpr const char* kBootstrap =
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    " version integer PRIMARY KEY, applied_at bigint NOT NULL, description text NOT NULL)";

Status locked_transaction(PgConn& db, const std::string& what, const std::function<Status()>& body) {
  if (auto s = db.script("BEGIN", what); !s) return s;
  Status s = db.query("SELECT pg_advisory_xact_lock($1)", PgParams().add(kMigrationLock), what).ok()
                 ? body()
                 : Status(Error::make(Code::kUnavailable, what + ": could not take the migration lock"));
  if (!s) {
    (void)db.script("ROLLBACK", what);  // the body's error is the one worth reporting
    return s;
  }
  return db.script("COMMIT", what);
}

Status apply_one(PgConn& db, const Migration& m, TimeMs now) {
  const std::string what = "schema migration " + std::to_string(m.version) + " (" + m.description + ")";
  Status s = locked_transaction(db, what, [&]() -> Status {
    auto row = db.query("SELECT 1 FROM schema_migrations WHERE version = $1", PgParams().add(int64_t{m.version}), what);
    if (!row) return row.error();
    if (row->size() > 0) return ok_status();  // another process applied it meanwhile
    if (auto s = db.script(m.sql, what); !s) return s;
    auto ins = db.exec("INSERT INTO schema_migrations (version, applied_at, description) VALUES ($1, $2, $3)",
                       PgParams().add(int64_t{m.version}).add(now).add(m.description), what);
    return ins ? ok_status() : Status(ins.error());
  });
  if (!s) {
    Error e = s.error();
    if (!e.message.starts_with(what)) e.message = what + " failed: " + e.message;
    return e;
  }
  return s;
}

}  // namespace

std::span<const Migration> postgres_migrations() { return kMigrations; }

Result<int> applied_schema_version(PgConn& db) {
  auto row =
      db.query("SELECT coalesce(max(version), 0) FROM schema_migrations", PgParams(), "reading the schema version");
  if (!row) return row.error();
  return schema_version_of(row->integer(0, 0));
}

Result<int> apply_migrations(PgConn& db, std::span<const Migration> migrations, TimeMs now) {
  auto bootstrap = [&] {
    return locked_transaction(db, "creating schema_migrations",
                              [&] { return db.script(kBootstrap, "creating schema_migrations"); });
  };
  return run_migrations(migrations, {bootstrap, [&] { return applied_schema_version(db); },
                                     [&](const Migration& m) { return apply_one(db, m, now); }});
}

}  // namespace gpurent
