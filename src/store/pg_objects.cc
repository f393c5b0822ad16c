// The `objects` table on PostgreSQL: resources as jsonb documents plus index columns
// (pg_migrations.cc). Same contract as sqlite_objects.cc.
#include <array>
#include <string_view>

#include "store/pg_queries.h"

namespace gpurent {
namespace {

constexpr std::array<std::string_view, 7> kFilterColumns = {"name",  "tenant_id", "supplier_id", "project_id",
                                                            "state", "region",    "gpu_model"};

constexpr const char* kSelectColumns =
    "SELECT kind, id, coalesce(name, ''), tenant_id, supplier_id, project_id, state, region, gpu_model,"
    " created_at, updated_at, version, body FROM objects";

std::string path_of(const std::string& kind, const std::string& id) { return kind + "/" + id; }

Error not_found(const std::string& kind, const std::string& id) {
  return Error::make(Code::kNotFound, path_of(kind, id) + " not found");
}

Error conflict(std::string field, std::string reason) {
  Error e{Code::kConflict, field + ": " + reason, {}, {}};
  e.fields.push_back({std::move(field), std::move(reason), {}});
  return e;
}

Status check_key(const std::string& kind, const std::string& id) {
  if (kind.empty()) return Error::invalid("kind", "is required");
  if (id.empty()) return Error::invalid("id", "is required");
  return ok_status();
}

// PostgreSQL text holds no NUL character (SQLite's does): refuse it naming the field rather than
// let libpq cut the value short.
Status check_text(const Record& r) {
  const std::pair<const char*, const std::string*> fields[] = {{"kind", &r.kind},
                                                               {"id", &r.id},
                                                               {"name", &r.name},
                                                               {"tenant_id", &r.tenant_id},
                                                               {"supplier_id", &r.supplier_id},
                                                               {"project_id", &r.project_id},
                                                               {"state", &r.state},
                                                               {"region", &r.region},
                                                               {"gpu_model", &r.gpu_model}};
  for (const auto& [field, value] : fields)
    if (value->find('\0') != std::string::npos) return Error::invalid(field, "must not contain a NUL character");
  return ok_status();
}

Result<std::string> dump_body(const nlohmann::json& body) {
  try {
    return body.dump();
  } catch (const nlohmann::json::exception& e) {  // e.g. a string that is not valid UTF-8
    return Error::invalid("body", e.what());
  }
}

Result<Record> read_record(const PgRows& q, int i) {
  Record r;
  r.kind = q.text(i, 0);
  r.id = q.text(i, 1);
  r.name = q.text(i, 2);
  r.tenant_id = q.text(i, 3);
  r.supplier_id = q.text(i, 4);
  r.project_id = q.text(i, 5);
  r.state = q.text(i, 6);
  r.region = q.text(i, 7);
  r.gpu_model = q.text(i, 8);
  r.created_at = q.integer(i, 9);
  r.updated_at = q.integer(i, 10);
  r.version = q.integer(i, 11);
  try {
    r.body = nlohmann::json::parse(q.text(i, 12));
  } catch (const nlohmann::json::exception& e) {
    return Error::make(Code::kInternal, "stored body of " + path_of(r.kind, r.id) + " is not JSON: " + e.what());
  }
  return r;
}

// Unnamed objects store NULL, so they never collide in the unique name index.
PgParams& add_name(PgParams& p, const std::string& name) { return name.empty() ? p.add_null() : p.add(name); }

PgParams& add_index_columns(PgParams& p, const Record& r) {
  return p.add(r.tenant_id).add(r.supplier_id).add(r.project_id).add(r.state).add(r.region).add(r.gpu_model);
}

// Turns a failed write into the error the caller can act on.
Error write_error(const PgConn& db, const Error& e, const Record& r) {
  if (db.last_sqlstate() == "23505" && db.last_constraint() == "objects_name_in_scope")
    return conflict("name", "'" + r.name + "' already exists");
  if (db.last_sqlstate() == "23505" && db.last_constraint() == "objects_pkey")
    return conflict("id", path_of(r.kind, r.id) + " already exists");
  if (db.last_sqlstate() == "22P05")  // jsonb: "\u0000 cannot be converted to text"
    return Error::invalid("body", "holds the character U+0000, which PostgreSQL's jsonb cannot store");
  return e;
}

// " AND col = $N" for each filter, parameters added to `p`. Column names come from the allow-list,
// never from the caller's string. An empty name matches unnamed objects (NULL).
Result<std::string> where_eq(const std::map<std::string, std::string>& eq, PgParams& p) {
  std::string sql;
  for (const auto& [column, value] : eq) {
    const std::string_view* known = nullptr;
    for (const auto& c : kFilterColumns)
      if (c == column) known = &c;
    if (known == nullptr) {
      return Error::invalid(column,
                            "is not a filterable column (expected one of: name, tenant_id, supplier_id, "
                            "project_id, state, region, gpu_model)");
    }
    sql += " AND ";
    sql += *known;
    if (*known == "name" && value.empty()) {
      sql += " IS NULL";
      continue;
    }
    p.add(value);
    sql += " = $" + std::to_string(p.size());
  }
  return sql;
}

}  // namespace

Status pg_check_limit(int limit) {
  if (limit < 1 || limit > 1000)
    return Error::invalid("limit", "must be between 1 and 1000 (got " + std::to_string(limit) + ")");
  return ok_status();
}

Status pg_insert_object(PgConn& db, const Record& r) {
  if (auto s = check_key(r.kind, r.id); !s) return s;
  if (auto s = check_text(r); !s) return s;
  auto body = dump_body(r.body);
  if (!body) return body.error();
  PgParams p;
  p.add(r.kind).add(r.id);
  add_name(p, r.name);
  add_index_columns(p, r).add(r.created_at).add(r.updated_at).add(*body);
  auto n = db.exec(
      "INSERT INTO objects (kind, id, name, tenant_id, supplier_id, project_id, state, region, gpu_model,"
      " created_at, updated_at, version, body) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 1, $12::jsonb)",
      p, "inserting " + path_of(r.kind, r.id));
  if (!n) return write_error(db, n.error(), r);
  return ok_status();
}

Status pg_update_object(PgConn& db, const Record& r) {
  if (auto s = check_key(r.kind, r.id); !s) return s;
  if (auto s = check_text(r); !s) return s;
  auto body = dump_body(r.body);
  if (!body) return body.error();
  PgParams p;
  add_name(p, r.name);
  add_index_columns(p, r).add(r.updated_at).add(*body).add(r.kind).add(r.id).add(r.version);
  auto n = db.exec(
      "UPDATE objects SET name = $1, tenant_id = $2, supplier_id = $3, project_id = $4, state = $5,"
      " region = $6, gpu_model = $7, updated_at = $8, body = $9::jsonb, version = version + 1"
      " WHERE kind = $10 AND id = $11 AND version = $12",
      p, "updating " + path_of(r.kind, r.id));
  if (!n) return write_error(db, n.error(), r);
  if (*n == 1) return ok_status();
  // Nothing matched: tell a missing object from a stale version.
  auto row = db.query("SELECT version FROM objects WHERE kind = $1 AND id = $2", PgParams().add(r.kind).add(r.id),
                      "reading the version of " + path_of(r.kind, r.id));
  if (!row) return row.error();
  if (row->size() == 0) return not_found(r.kind, r.id);
  return conflict("version", "version " + std::to_string(r.version) + " is stale; current is " +
                                 std::to_string(row->integer(0, 0)));
}

Status pg_remove_object(PgConn& db, const std::string& kind, const std::string& id) {
  if (auto s = check_key(kind, id); !s) return s;
  auto n = db.exec("DELETE FROM objects WHERE kind = $1 AND id = $2", PgParams().add(kind).add(id),
                   "deleting " + path_of(kind, id));
  if (!n) return n.error();
  if (*n == 0) return not_found(kind, id);
  return ok_status();
}

Result<Record> pg_get_object(PgConn& db, const std::string& kind, const std::string& id) {
  auto rows = db.query(std::string(kSelectColumns) + " WHERE kind = $1 AND id = $2", PgParams().add(kind).add(id),
                       "reading " + path_of(kind, id));
  if (!rows) return rows.error();
  if (rows->size() == 0) return not_found(kind, id);
  return read_record(*rows, 0);
}

Result<Page> pg_list_objects(PgConn& db, const ListQuery& lq) {
  if (lq.kind.empty()) return Error::invalid("kind", "is required");
  if (auto s = pg_check_limit(lq.limit); !s) return s.error();
  PgParams p;
  p.add(lq.kind);
  auto where = where_eq(lq.eq, p);
  if (!where) return where.error();
  std::string sql = std::string(kSelectColumns) + " WHERE kind = $1" + *where;
  if (!lq.after_id.empty()) {
    p.add(lq.after_id);
    sql += " AND id > $" + std::to_string(p.size());
  }
  p.add(int64_t{lq.limit} + 1);  // one row past the page tells whether another page exists
  sql += " ORDER BY id LIMIT $" + std::to_string(p.size());
  auto rows = db.query(sql, p, "listing " + lq.kind);
  if (!rows) return rows.error();
  Page page;
  for (int i = 0; i < rows->size(); ++i) {
    if (static_cast<int>(page.items.size()) == lq.limit) {
      page.next_after = page.items.back().id;
      break;
    }
    auto rec = read_record(*rows, i);
    if (!rec) return rec.error();
    page.items.push_back(std::move(rec).value());
  }
  return page;
}

Result<int64_t> pg_count_objects(PgConn& db, const std::string& kind, const std::map<std::string, std::string>& eq) {
  if (kind.empty()) return Error::invalid("kind", "is required");
  PgParams p;
  p.add(kind);
  auto where = where_eq(eq, p);
  if (!where) return where.error();
  auto rows = db.query("SELECT count(*) FROM objects WHERE kind = $1" + *where, p, "counting " + kind);
  if (!rows) return rows.error();
  return rows->integer(0, 0);
}

}  // namespace gpurent
