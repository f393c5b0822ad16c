// The `objects` table on PostgreSQL: resources as jsonb documents plus index columns
// (pg_migrations.cc). Same contract as sqlite_objects.cc.
#include <utility>

#include "store/pg_queries.h"
#include "store/store_rows.h"

namespace gpurent {
namespace {

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

// Unnamed objects store NULL, so they never collide in the unique name index.
PgParams& add_name(PgParams& p, const std::string& name) { return name.empty() ? p.add_null() : p.add(name); }

PgParams& add_index_columns(PgParams& p, const Record& r) {
  return p.add(r.tenant_id).add(r.supplier_id).add(r.project_id).add(r.state).add(r.region).add(r.gpu_model);
}

// Turns a failed write into the error the caller can act on.
Error write_error(const PgConn& db, const Error& e, const Record& r) {
  if (db.last_sqlstate() == "23505" && db.last_constraint() == "objects_name_in_scope") return object_name_taken(r);
  if (db.last_sqlstate() == "23505" && db.last_constraint() == "objects_pkey") return object_id_taken(r);
  if (db.last_sqlstate() == "22P05")  // jsonb: "\u0000 cannot be converted to text"
    return Error::invalid("body", "holds the character U+0000, which PostgreSQL's jsonb cannot store");
  return e;
}

// The filters, values added to `p`. An empty name matches unnamed objects (NULL).
Result<std::string> where_eq(const std::map<std::string, std::string>& eq, PgParams& p) {
  return filter_sql(eq, object_filter_column, [&](std::string_view column, const std::string& value) {
    if (column == "name" && value.empty()) return std::string(" IS NULL");
    p.add(value);
    return " = $" + std::to_string(p.size());
  });
}

}  // namespace

Status insert_object(PgConn& db, const Record& r) {
  auto body = checked_body(r);
  if (!body) return body.error();
  if (auto s = check_text(r); !s) return s;
  PgParams p;
  p.add(r.kind).add(r.id);
  add_name(p, r.name);
  add_index_columns(p, r).add(r.created_at).add(r.updated_at).add(*body);
  auto n = db.exec(
      "INSERT INTO objects (kind, id, name, tenant_id, supplier_id, project_id, state, region, gpu_model,"
      " created_at, updated_at, version, body) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 1, $12::jsonb)",
      p, "inserting " + object_path(r.kind, r.id));
  if (!n) return write_error(db, n.error(), r);
  return ok_status();
}

Status update_object(PgConn& db, const Record& r) {
  auto body = checked_body(r);
  if (!body) return body.error();
  if (auto s = check_text(r); !s) return s;
  PgParams p;
  add_name(p, r.name);
  add_index_columns(p, r).add(r.updated_at).add(*body).add(r.kind).add(r.id).add(r.version);
  auto n = db.exec(
      "UPDATE objects SET name = $1, tenant_id = $2, supplier_id = $3, project_id = $4, state = $5,"
      " region = $6, gpu_model = $7, updated_at = $8, body = $9::jsonb, version = version + 1"
      " WHERE kind = $10 AND id = $11 AND version = $12",
      p, "updating " + object_path(r.kind, r.id));
  if (!n) return write_error(db, n.error(), r);
  if (*n == 1) return ok_status();
  // Nothing matched: tell a missing object from a stale version.
  auto row = db.query("SELECT version FROM objects WHERE kind = $1 AND id = $2", PgParams().add(r.kind).add(r.id),
                      "reading the version of " + object_path(r.kind, r.id));
  if (!row) return row.error();
  if (row->size() == 0) return object_not_found(r.kind, r.id);
  return stale_version(r.version, row->integer(0, 0));
}

Status remove_object(PgConn& db, const std::string& kind, const std::string& id) {
  if (auto s = check_object_key(kind, id); !s) return s;
  auto n = db.exec("DELETE FROM objects WHERE kind = $1 AND id = $2", PgParams().add(kind).add(id),
                   "deleting " + object_path(kind, id));
  if (!n) return n.error();
  if (*n == 0) return object_not_found(kind, id);
  return ok_status();
}

namespace {

Result<Record> select_object(PgConn& db, const std::string& kind, const std::string& id, const char* suffix) {
  auto rows = db.query(std::string(kObjectSelect) + " WHERE kind = $1 AND id = $2" + suffix, PgParams().add(kind).add(id),
                       "reading " + object_path(kind, id));
  if (!rows) return rows.error();
  if (rows->size() == 0) return object_not_found(kind, id);
  return read_record(rows->row(0));
}

}  // namespace

Result<Record> get_object(PgConn& db, const std::string& kind, const std::string& id) {
  return select_object(db, kind, id, "");
}

Result<Record> get_object_locked(PgConn& db, const std::string& kind, const std::string& id) {
  return select_object(db, kind, id, " FOR UPDATE");
}

Result<Record> get_object_shared(PgConn& db, const std::string& kind, const std::string& id) {
  return select_object(db, kind, id, " FOR SHARE");
}

Result<Page> list_objects(PgConn& db, const ListQuery& lq) {
  if (auto s = check_kind(lq.kind); !s) return s.error();
  if (auto s = check_list_limit(lq.limit); !s) return s.error();
  PgParams p;
  p.add(lq.kind);
  auto where = where_eq(lq.eq, p);
  if (!where) return where.error();
  std::string sql = std::string(kObjectSelect) + " WHERE kind = $1" + *where;
  if (!lq.after_id.empty()) {
    p.add(lq.after_id);
    sql += " AND id > $" + std::to_string(p.size());
  }
  if (lq.updated_since > 0) {
    p.add(int64_t{lq.updated_since});
    sql += " AND updated_at >= $" + std::to_string(p.size());
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
    auto rec = read_record(rows->row(i));
    if (!rec) return rec.error();
    page.items.push_back(std::move(rec).value());
  }
  return page;
}

Result<int64_t> count_objects(PgConn& db, const std::string& kind, const std::map<std::string, std::string>& eq) {
  if (auto s = check_kind(kind); !s) return s.error();
  PgParams p;
  p.add(kind);
  auto where = where_eq(eq, p);
  if (!where) return where.error();
  auto rows = db.query("SELECT count(*) FROM objects WHERE kind = $1" + *where, p, "counting " + kind);
  if (!rows) return rows.error();
  return rows->integer(0, 0);
}

Result<int64_t> select_tenant_stored_bytes(PgConn& db, const std::string& tenant_id) {
  auto rows = db.query("SELECT coalesce((SELECT bytes FROM tenant_storage WHERE tenant_id = $1), 0)",
                       PgParams().add(tenant_id), "reading the stored bytes of tenant " + tenant_id);
  if (!rows) return rows.error();
  return rows->integer(0, 0);
}

Status add_tenant_storage(PgConn& db, const std::string& tenant_id, int64_t delta) {
  if (delta == 0) return ok_status();
  auto n = db.exec(
      "INSERT INTO tenant_storage (tenant_id, bytes) VALUES ($1, $2)"
      " ON CONFLICT (tenant_id) DO UPDATE SET bytes = tenant_storage.bytes + excluded.bytes",
      PgParams().add(tenant_id).add(delta), "adding to the stored bytes of tenant " + tenant_id);
  if (!n) return n.error();
  return ok_status();
}

Result<std::vector<std::string>> list_object_ids(PgConn& db, const std::string& kind,
                                                 const std::map<std::string, std::string>& eq) {
  if (auto s = check_kind(kind); !s) return s.error();
  PgParams p;
  p.add(kind);
  auto where = where_eq(eq, p);
  if (!where) return where.error();
  auto rows = db.query("SELECT id FROM objects WHERE kind = $1" + *where + " ORDER BY id", p, "listing the ids of " + kind);
  if (!rows) return rows.error();
  std::vector<std::string> ids;
  ids.reserve(static_cast<size_t>(rows->size()));
  for (int i = 0; i < rows->size(); ++i) ids.push_back(rows->text(i, 0));
  return ids;
}

}  // namespace gpurent
