// PostgreSQL backups: pg_dump's custom format out, pg_restore in (pg_tools.h runs them). Before a
// restore touches the target, the dump itself is read: its table of contents must hold the
// gpurent schema, and the rows of its schema_migrations (pg_restore can print one table's data)
// give the schema version it was taken at. Into an empty database pg_restore restores directly,
// in one transaction; over an existing one (--force) see restore_over.
#include <algorithm>
#include <charconv>
#include <set>
#include <sstream>

#include "store/backup_files.h"
#include "store/backup_impl.h"
#include "store/pg_queries.h"
#include "store/pg_tools.h"

namespace gpurent {
namespace {

constexpr int kConnectTimeoutS = 10;

std::vector<std::string> password_env(const PgToolConnection& c) {
  if (c.password.empty()) return {};
  return {"PGPASSWORD=" + c.password};
}

// The connection for a client program, errors naming `field`.
Result<PgToolConnection> tool_connection(const std::string& field, const std::string& url) {
  if (url.empty()) return Error::invalid(field, "is required");
  auto c = pg_tool_connection(url);
  if (!c) return Error::invalid(field, c.error().fields.empty() ? c.error().message : c.error().fields[0].reason);
  return c;
}

// The gpurent schema version of the connected database; kInvalid naming `field` when the
// database has no gpurent schema.
Result<int> gpurent_version(PgConn& db, const std::string& field, const std::string& url) {
  auto has = db.query(
      "SELECT to_regclass('public.schema_migrations') IS NOT NULL AND to_regclass('public.objects') IS NOT NULL",
      PgParams(), "reading the schema");
  if (!has) return has.error();
  if (!has->boolean(0, 0))
    return Error::invalid(field, pg_describe(url) +
                                     " is not a gpurent database (it has no schema_migrations and "
                                     "objects tables)");
  return applied_schema_version(db);
}

// The tables in the target's public schema (partitions left out), and which of them are
// partitioned: what a restore would meet.
struct TargetTables {
  std::vector<std::string> all, partitioned;
};

Result<TargetTables> public_tables(PgConn& db) {
  auto rows = db.query(
      "SELECT c.relname, c.relkind = 'p' FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
      " WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1",
      PgParams(), "listing the target's tables");
  if (!rows) return rows.error();
  TargetTables out;
  for (int i = 0; i < rows->size(); ++i) {
    out.all.push_back(rows->text(i, 0));
    if (rows->boolean(i, 1)) out.partitioned.push_back(rows->text(i, 0));
  }
  return out;
}

std::string quote_ident(const std::string& name) {
  std::string out = "\"";
  for (char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// What a dump holds, read before a restore touches the target.
struct DumpInfo {
  int schema_version = 0;
  std::set<std::string> tables;  // the tables of its public schema, partitions included
};

// Reads the dump's table of contents (it must hold the gpurent schema; kInvalid naming "backup"
// when it does not) and the rows of its schema_migrations (pg_restore prints one table's data).
Result<DumpInfo> read_dump(const std::string& pg_restore, const std::string& backup) {
  auto toc = run_tool({pg_restore, "--list", backup}, {}, /*capture_out=*/true);
  if (!toc) return toc.error();
  if (toc->exit_code != 0) return Error::invalid("backup", tool_failure("pg_restore --list", *toc).message);
  DumpInfo info;
  std::istringstream lines(toc->out);
  std::string line;
  while (std::getline(lines, line)) {  // "217; 1259 16390 TABLE public objects postgres"
    const size_t at = line.find(" TABLE public ");
    if (line.starts_with(";") || at == std::string::npos) continue;
    const size_t name = at + 14;
    info.tables.insert(line.substr(name, line.find(' ', name) - name));
  }
  for (const char* table : {"schema_migrations", "objects"}) {
    if (!info.tables.contains(table))
      return Error::invalid("backup", backup + " is a PostgreSQL dump but not of a gpurent database (it has no " +
                                          std::string(table) + " table)");
  }
  auto data = run_tool({pg_restore, "--data-only", "--table=schema_migrations", "--file=-", backup}, {}, true);
  if (!data) return data.error();
  if (data->exit_code != 0) return tool_failure("pg_restore", *data);
  // COPY public.schema_migrations (version, applied_at, description) FROM stdin;  rows  \.
  std::istringstream in(data->out);
  bool rows = false;
  int seen = 0;
  while (std::getline(in, line)) {
    if (!rows) {
      rows = line.starts_with("COPY public.schema_migrations (version,");
      continue;
    }
    if (line == "\\.") break;
    int v = 0;
    const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), v);
    if (ec != std::errc() || end == line.data() || v < 0)  // not a version gpurent writes (past int: a crafted dump)
      return Error::invalid("backup",
                            backup + " holds a schema version gpurent never writes: '" + line.substr(0, 40) + "'");
    info.schema_version = std::max(info.schema_version, v);
    ++seen;
  }
  if (seen == 0)
    return Error::invalid("backup", backup + " is a PostgreSQL dump of a gpurent database with no schema version");
  return info;
}

// Replaces a gpurent database's tables with the dump's: every table of its public schema is
// dropped first — the dump's own (pg_restore --clean cannot drop the primary keys of attached
// month partitions: they are the parent's), month partitions newer than the backup, and tables a
// later schema version added, which the migrations run after the restore would otherwise meet
// already made — then pg_restore's script runs, all in one psql transaction.
Status restore_over(const std::string& pg_restore, const std::string& backup, const PgToolConnection& conn,
                    const TargetTables& target) {
  auto psql = find_pg_tool("psql");
  if (!psql) return psql.error();
  std::vector<std::string> consumer = {
      *psql, "-X", "-q", "--no-password", "-v", "ON_ERROR_STOP=1", "--single-transaction"};
  std::string drop;
  for (const auto& t : target.all) drop += (drop.empty() ? "" : ", ") + std::string("public.") + quote_ident(t);
  if (!drop.empty()) consumer.insert(consumer.end(), {"-c", "DROP TABLE IF EXISTS " + drop + " CASCADE"});
  consumer.insert(consumer.end(), {"-f", "-", "--dbname=" + conn.conninfo});
  auto runs = run_pipeline({pg_restore, "--clean", "--if-exists", "--no-owner", "--file=-", backup}, consumer,
                           password_env(conn));
  if (!runs) return runs.error();
  if (runs->first.exit_code != 0) return tool_failure("pg_restore", runs->first);
  if (runs->second.exit_code != 0) return tool_failure("psql (running pg_restore's script)", runs->second);
  return ok_status();
}

}  // namespace

Result<BackupReport> backup_postgres(const std::string& url, const std::string& dest) {
  auto conn = tool_connection("source", url);
  if (!conn) return conn.error();
  if (auto s = check_new_file("dest", dest); !s) return s.error();
  int version = 0;
  {
    auto db = PgConn::connect(url, kConnectTimeoutS, /*read_only=*/true);
    if (!db) return db.error();
    auto v = gpurent_version(*db, "source", url);
    if (!v) return v.error();
    version = *v;
  }
  auto pg_dump = find_pg_tool("pg_dump");
  if (!pg_dump) return pg_dump.error();
  const std::string partial = partial_path(dest);
  auto run = run_tool({*pg_dump, "--format=custom", "--no-password", "--file=" + partial, "--dbname=" + conn->conninfo},
                      password_env(*conn));
  auto fail = [&](Error e) {
    remove_with_companions(partial);
    return e;
  };
  if (!run) return fail(run.error());
  if (run->exit_code != 0) return fail(tool_failure("pg_dump", *run));
  auto kind = backup_kind("dest", partial);
  if (!kind) return fail(kind.error());
  if (*kind != BackupKind::kPgDump) return fail(Error::make(Code::kInternal, "pg_dump wrote no custom-format dump"));
  if (auto s = publish_file(partial, dest); !s) return fail(s.error());
  return BackupReport{"postgres", version, file_size(dest)};
}

Result<RestoreReport> restore_postgres(const std::string& backup, const std::string& url, bool force) {
  if (auto s = check_backup_kind(backup, BackupKind::kPgDump); !s) return s.error();
  auto conn = tool_connection("dest", url);
  if (!conn) return conn.error();
  auto pg_restore = find_pg_tool("pg_restore");
  if (!pg_restore) return pg_restore.error();
  auto dump = read_dump(*pg_restore, backup);
  if (!dump) return dump.error();
  if (auto s = check_schema_not_newer(dump->schema_version, postgres_migrations()); !s)
    return Error::invalid("backup", backup + ": " + s.error().message);
  TargetTables target;
  {
    auto db = PgConn::connect(url, kConnectTimeoutS, /*read_only=*/false);
    if (!db) return db.error();
    auto tables = public_tables(*db);
    if (!tables) return tables.error();
    target = std::move(tables).value();
    if (!target.all.empty() && !force)
      return Error::make(Code::kConflict,
                         pg_describe(url) + " is not empty (" + std::to_string(target.all.size()) + " tables, e.g. " +
                             target.all.front() +
                             "); restore into an empty database, or, if it is a gpurent database, drop every table "
                             "of its public schema and restore with --force (stop any server "
                             "using it first)");
    // --force replaces a gpurent database, never someone else's tables.
    if (!target.all.empty())
      if (auto v = gpurent_version(*db, "dest", url); !v) {
        if (v.error().code != Code::kInvalid) return v.error();
        return Error::invalid("dest", pg_describe(url) +
                                          " is not a gpurent database (it has tables, but no schema_migrations and "
                                          "objects): --force replaces only a gpurent database's tables; restore "
                                          "into an empty database");
      }
  }
  if (target.all.empty()) {
    auto run = run_tool({*pg_restore, "--clean", "--if-exists", "--no-owner", "--single-transaction", "--exit-on-error",
                         "--no-password", "--dbname=" + conn->conninfo, backup},
                        password_env(*conn));
    if (!run) return run.error();
    if (run->exit_code != 0) return tool_failure("pg_restore", *run);
  } else if (auto s = restore_over(*pg_restore, backup, *conn, target); !s) {
    return s.error();
  }
  auto store = open_postgres_store({.url = url});
  if (!store) return store.error();
  return RestoreReport{"postgres", dump->schema_version, (*store)->schema_version()};
}

}  // namespace gpurent
