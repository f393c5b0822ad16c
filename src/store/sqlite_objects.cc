// The `objects` table: resources as JSON documents plus index columns (see migrations.cc).
#include "store/sqlite_queries.h"
#include "store/store_rows.h"

namespace gpurent {
namespace {

// Binds the six index columns other than name, starting at parameter `first`.
void bind_index_columns(Query& q, int first, const Record& r) {
  q.bind(first, r.tenant_id)
      .bind(first + 1, r.supplier_id)
      .bind(first + 2, r.project_id)
      .bind(first + 3, r.state)
      .bind(first + 4, r.region)
      .bind(first + 5, r.gpu_model);
}

void bind_name(Query& q, int index, const std::string& name) {
  if (name.empty()) {
    q.bind_null(index);  // unnamed: never collides with another unnamed object
  } else {
    q.bind(index, name);
  }
}

// Turns a failed write into the error the caller can act on.
Error write_error(const Query& q, const Error& e, const Record& r) {
  if (q.rc() == SQLITE_CONSTRAINT_UNIQUE) return object_name_taken(r);
  if (q.rc() == SQLITE_CONSTRAINT_PRIMARYKEY) return object_id_taken(r);
  return e;
}

// The filters, parameters numbered from `next`. Unnamed objects hold NULL (see migrations.cc); IS
// matches them when bound to NULL and, unlike coalesce(), still lets the planner use objects_by_name.
Result<std::string> where_eq(const std::map<std::string, std::string>& eq, int next) {
  return filter_sql(eq, object_filter_column, [&](std::string_view column, const std::string&) {
    return (column == "name" ? " IS ?" : " = ?") + std::to_string(next++);
  });
}

void bind_eq(Query& q, const std::map<std::string, std::string>& eq, int first) {
  for (const auto& [column, value] : eq) {
    if (column == "name") {
      bind_name(q, first++, value);
    } else {
      q.bind(first++, value);
    }
  }
}

}  // namespace

Status insert_object(Db& db, const Record& r) {
  auto body = checked_body(r);
  if (!body) return body.error();
  auto q = db.query(
      "INSERT INTO objects (kind, id, name, tenant_id, supplier_id, project_id, state, region, gpu_model,"
      " created_at, updated_at, version, body) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 1, ?12)");
  if (!q) return q.error();
  q->bind(1, r.kind).bind(2, r.id);
  bind_name(*q, 3, r.name);
  bind_index_columns(*q, 4, r);
  q->bind(10, r.created_at).bind(11, r.updated_at).bind(12, *body);
  if (auto s = q->run("inserting " + object_path(r.kind, r.id)); !s) return write_error(*q, s.error(), r);
  return ok_status();
}

Status update_object(Db& db, const Record& r) {
  auto body = checked_body(r);
  if (!body) return body.error();
  {
    auto q = db.query(
        "UPDATE objects SET name = ?1, tenant_id = ?2, supplier_id = ?3, project_id = ?4, state = ?5,"
        " region = ?6, gpu_model = ?7, updated_at = ?8, body = ?9, version = version + 1"
        " WHERE kind = ?10 AND id = ?11 AND version = ?12");
    if (!q) return q.error();
    bind_name(*q, 1, r.name);
    bind_index_columns(*q, 2, r);
    q->bind(8, r.updated_at).bind(9, *body).bind(10, r.kind).bind(11, r.id).bind(12, r.version);
    if (auto s = q->run("updating " + object_path(r.kind, r.id)); !s) return write_error(*q, s.error(), r);
    if (db.changes() == 1) return ok_status();
  }
  // Nothing matched: tell a missing object from a stale version.
  auto q = db.query("SELECT version FROM objects WHERE kind = ?1 AND id = ?2");
  if (!q) return q.error();
  q->bind(1, r.kind).bind(2, r.id);
  auto row = q->step("reading the version of " + object_path(r.kind, r.id));
  if (!row) return row.error();
  if (!*row) return object_not_found(r.kind, r.id);
  return stale_version(r.version, q->integer(0));
}

Status remove_object(Db& db, const std::string& kind, const std::string& id) {
  if (auto s = check_object_key(kind, id); !s) return s;
  auto q = db.query("DELETE FROM objects WHERE kind = ?1 AND id = ?2");
  if (!q) return q.error();
  q->bind(1, kind).bind(2, id);
  if (auto s = q->run("deleting " + object_path(kind, id)); !s) return s;
  if (db.changes() == 0) return object_not_found(kind, id);
  return ok_status();
}

Result<Record> get_object(Db& db, const std::string& kind, const std::string& id) {
  auto q = db.query(std::string(kObjectSelect) + " WHERE kind = ?1 AND id = ?2");
  if (!q) return q.error();
  q->bind(1, kind).bind(2, id);
  auto row = q->step("reading " + object_path(kind, id));
  if (!row) return row.error();
  if (!*row) return object_not_found(kind, id);
  return read_record(*q);
}

Result<Page> list_objects(Db& db, const ListQuery& lq) {
  if (auto s = check_kind(lq.kind); !s) return s.error();
  if (auto s = check_list_limit(lq.limit); !s) return s.error();
  auto where = where_eq(lq.eq, 2);
  if (!where) return where.error();
  const int after = 2 + static_cast<int>(lq.eq.size());
  // One row past the page tells whether another page exists.
  std::string sql = std::string(kObjectSelect) + " WHERE kind = ?1" + *where +
                    (lq.after_id.empty() ? "" : " AND id > ?" + std::to_string(after)) +
                    (lq.updated_since > 0 ? " AND updated_at >= ?" + std::to_string(after + 2) : "") +
                    " ORDER BY id LIMIT ?" + std::to_string(after + 1);
  auto q = db.query(sql);
  if (!q) return q.error();
  q->bind(1, lq.kind);
  bind_eq(*q, lq.eq, 2);
  if (!lq.after_id.empty()) q->bind(after, lq.after_id);
  q->bind(after + 1, int64_t{lq.limit} + 1);
  if (lq.updated_since > 0) q->bind(after + 2, int64_t{lq.updated_since});
  Page page;
  for (;;) {
    auto row = q->step("listing " + lq.kind);
    if (!row) return row.error();
    if (!*row) break;
    if (static_cast<int>(page.items.size()) == lq.limit) {
      page.next_after = page.items.back().id;
      break;
    }
    auto rec = read_record(*q);
    if (!rec) return rec.error();
    page.items.push_back(std::move(rec).value());
  }
  return page;
}

Result<int64_t> count_objects(Db& db, const std::string& kind, const std::map<std::string, std::string>& eq) {
  if (auto s = check_kind(kind); !s) return s.error();
  auto where = where_eq(eq, 2);
  if (!where) return where.error();
  auto q = db.query("SELECT count(*) FROM objects WHERE kind = ?1" + *where);
  if (!q) return q.error();
  q->bind(1, kind);
  bind_eq(*q, eq, 2);
  auto row = q->step("counting " + kind);
  if (!row) return row.error();
  return q->integer(0);
}

Result<int64_t> select_tenant_stored_bytes(Db& db, const std::string& tenant_id) {
  auto q = db.query("SELECT coalesce((SELECT bytes FROM tenant_storage WHERE tenant_id = ?1), 0)");
  if (!q) return q.error();
  q->bind(1, tenant_id);
  auto row = q->step("reading the stored bytes of tenant " + tenant_id);
  if (!row) return row.error();
  return q->integer(0);
}

Status add_tenant_storage(Db& db, const std::string& tenant_id, int64_t delta) {
  if (delta == 0) return ok_status();
  auto q = db.query(
      "INSERT INTO tenant_storage (tenant_id, bytes) VALUES (?1, ?2)"
      " ON CONFLICT (tenant_id) DO UPDATE SET bytes = bytes + excluded.bytes");
  if (!q) return q.error();
  q->bind(1, tenant_id).bind(2, delta);
  return q->run("adding to the stored bytes of tenant " + tenant_id);
}

Result<std::vector<std::string>> list_object_ids(Db& db, const std::string& kind,
                                                 const std::map<std::string, std::string>& eq) {
  if (auto s = check_kind(kind); !s) return s.error();
  auto where = where_eq(eq, 2);
  if (!where) return where.error();
  auto q = db.query("SELECT id FROM objects WHERE kind = ?1" + *where + " ORDER BY id");
  if (!q) return q.error();
  q->bind(1, kind);
  bind_eq(*q, eq, 2);
  std::vector<std::string> ids;
  for (;;) {
    auto row = q->step("listing the ids of " + kind);
    if (!row) return row.error();
    if (!*row) return ids;
    ids.push_back(q->text(0));
  }
}

}  // namespace gpurent
