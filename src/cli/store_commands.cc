// `gpurent backup`, `gpurent restore`, `gpurent migrate`: local, server-side commands like
// `serve`: they open the store themselves (store/backup.h does the work), no API server is
// involved. Exit codes: 0 done, 2 an argument is wrong (malformed, missing, or names something
// that is not a gpurent store or backup), 1 the operation failed or was refused.
#include <initializer_list>
#include <memory>
#include <utility>

#include "cli/commands.h"
#include "cli/output.h"
#include "store/backup.h"
#include "store/store.h"

namespace gpurent {
namespace {

// The store names its arguments ("source", "dest", ...); the user knows them by their flags.
Error with_flags(Error e, std::initializer_list<std::pair<const char*, const char*>> names) {
  for (auto& f : e.fields) {
    for (const auto& [from, to] : names) {
      if (f.field != from) continue;
      if (e.message.starts_with(f.field + ": ")) e.message = to + e.message.substr(f.field.size());
      f.field = to;
      break;
    }
  }
  return e;
}

int fail(CliContext& ctx, const Error& e, std::initializer_list<std::pair<const char*, const char*>> names) {
  return ctx.fail(with_flags(e, names), e.code == Code::kInvalid ? kExitUsage : kExitFailed);
}

void add_backup(CLI::App& app, CliContext& ctx) {
  struct Opts {
    std::string db, to;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand(
      "backup",
      "back up a store into a new file; a server may keep running and writing meanwhile (the backup is "
      "one consistent snapshot)");
  cmd->add_option("--db", o->db, "the store: a SQLite file, or a postgresql:// URL (backed up with pg_dump)")
      ->required();
  cmd->add_option("--to", o->to,
                  "the backup file to write; it must not exist (SQLite: a SQLite database file; PostgreSQL: "
                  "pg_dump's custom format)")
      ->required();
  cmd->callback([&ctx, o] {
    ctx.action = [&ctx, o] {
      auto r = backup_store(o->db, o->to);
      if (!r) return fail(ctx, r.error(), {{"source", "--db"}, {"dest", "--to"}});
      json doc = {{"db", describe_db(o->db)},
                  {"to", o->to},
                  {"backend", r->backend},
                  {"schema_version", r->schema_version},
                  {"bytes", r->bytes}};
      return ctx.emit(doc, [&](std::ostream& out) {
        out << "backed up " << describe_db(o->db) << " (" << r->backend << " store, schema version "
            << r->schema_version << ") to " << o->to << ": " << r->bytes << " bytes\n";
      });
    };
  });
}

void add_restore(CLI::App& app, CliContext& ctx) {
  struct Opts {
    std::string from, db;
    bool force = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand(
      "restore", "restore a backup made by `gpurent backup` into a store (stop any server using that store first)");
  cmd->add_option("--from", o->from, "the backup file")->required();
  cmd->add_option("--db", o->db,
                  "where to restore: a SQLite file (created if missing) for a SQLite backup; an existing "
                  "postgresql:// database for a PostgreSQL one")
      ->required();
  cmd->add_flag("--force", o->force,
                "replace an existing database that is not empty (SQLite: the whole file; PostgreSQL, a gpurent "
                "database only: every table of its public schema is dropped and the backup's recreated)");
  cmd->callback([&ctx, o] {
    ctx.action = [&ctx, o] {
      auto r = restore_store(o->from, o->db, {.force = o->force});
      if (!r) return fail(ctx, r.error(), {{"backup", "--from"}, {"dest", "--db"}});
      json doc = {{"from", o->from},
                  {"db", describe_db(o->db)},
                  {"backend", r->backend},
                  {"backup_schema_version", r->backup_schema_version},
                  {"schema_version", r->schema_version}};
      return ctx.emit(doc, [&](std::ostream& out) {
        out << "restored " << o->from << " (" << r->backend << " backup, schema version " << r->backup_schema_version
            << ") into " << describe_db(o->db) << "; it opens at schema version " << r->schema_version << "\n";
      });
    };
  });
}

void add_migrate(CLI::App& app, CliContext& ctx) {
  struct Opts {
    std::string from, to;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("migrate",
                                 "copy every record of a SQLite store into an empty PostgreSQL database in one "
                                 "transaction, verified before it commits (stop the server first: later writes "
                                 "are not copied)");
  cmd->add_option("--from", o->from, "the SQLite store file (left unchanged)")->required();
  cmd->add_option("--to", o->to,
                  "the PostgreSQL database, a postgresql:// URL; it must exist, and its gpurent tables must be "
                  "empty (they are created when missing)")
      ->required();
  cmd->callback([&ctx, o] {
    ctx.action = [&ctx, o] {
      if (!is_postgres_url(o->to))
        return ctx.fail(Error::invalid("--to", "must be a postgresql:// URL (the database to move the store to)"),
                        kExitUsage);
      auto r = migrate_store(o->from, o->to);
      if (!r) return fail(ctx, r.error(), {{"sqlite_path", "--from"}, {"postgres_url", "--to"}});
      json tables = json::array();
      int64_t rows = 0;
      for (const auto& t : r->tables) {
        tables.push_back({{"table", t.table}, {"rows", t.rows}});
        rows += t.rows;
      }
      json doc = {{"from", o->from},
                  {"to", describe_db(o->to)},
                  {"sqlite_schema_version", r->sqlite_schema_version},
                  {"postgres_schema_version", r->postgres_schema_version},
                  {"tables", tables},
                  {"objects_verified", r->objects_verified}};
      return ctx.emit(doc, [&](std::ostream& out) {
        out << "migrated " << o->from << " (SQLite schema version " << r->sqlite_schema_version << ") to "
            << describe_db(o->to) << " (PostgreSQL schema version " << r->postgres_schema_version << ")\n";
        Table t({{"TABLE"}, {"ROWS", Align::kRight}});
        for (const auto& c : r->tables) t.add_row({c.table, std::to_string(c.rows)});
        t.print(out);
        out << "verified: the row counts of " << r->tables.size() << " tables (" << rows << " rows) and "
            << r->objects_verified << " objects field by field\n";
      });
    };
  });
}

}  // namespace

void add_store_commands(CLI::App& app, CliContext& ctx) {
  add_backup(app, ctx);
  add_restore(app, ctx);
  add_migrate(app, ctx);
}

}  // namespace gpurent
