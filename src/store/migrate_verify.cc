// Verifying a migration before it commits: row counts per table, then every object read back
// from both sides in (kind, id) order and compared field by field, the body as parsed JSON (jsonb
// keeps the document, not its text: key order and spacing may differ). PostgreSQL's kind and id
// are COLLATE "C", so both sides order them by bytes.
#include "store/migrate_impl.h"
#include "store/pg_queries.h"
#include "store/store_rows.h"

namespace gpurent {
namespace {

constexpr int kPage = 1000;

// The first field in which two objects differ, or "" when none does.
std::string difference(const Record& a, const Record& b) {
  if (a.kind != b.kind || a.id != b.id) return "kind/id";
  if (a.version != b.version) return "version";
  if (a.body != b.body) return "body";
  if (a.name != b.name) return "name";
  if (a.tenant_id != b.tenant_id || a.supplier_id != b.supplier_id || a.project_id != b.project_id)
    return "owner columns";
  if (a.state != b.state || a.region != b.region || a.gpu_model != b.gpu_model) return "index columns";
  if (a.created_at != b.created_at || a.updated_at != b.updated_at) return "times";
  return "";
}

Error mismatch(const std::string& what) { return Error::make(Code::kInternal, "verifying the migration: " + what); }

}  // namespace

Status verify_counts(Db& from, PgConn& to, const std::vector<TableMap>& tables, std::vector<TableCount>& counts) {
  for (const TableMap& t : tables) {
    auto q = from.query("SELECT count(*) FROM " + t.name);
    if (!q) return q.error();
    auto row = q->step("counting " + t.name + " in SQLite");
    if (!row) return row.error();
    const int64_t sqlite_rows = q->integer(0);
    auto pg = to.query("SELECT count(*) FROM " + t.name, PgParams(), "counting " + t.name + " in PostgreSQL");
    if (!pg) return pg.error();
    const int64_t pg_rows = pg->integer(0, 0);
    if (pg_rows != sqlite_rows)
      return mismatch(t.name + " has " + std::to_string(sqlite_rows) + " rows in SQLite but " +
                      std::to_string(pg_rows) + " in PostgreSQL");
    counts.push_back({t.name, pg_rows});
  }
  return ok_status();
}

Result<int64_t> verify_objects(Db& from, PgConn& to) {
  auto q = from.query(std::string(kObjectSelect) + " ORDER BY kind, id");
  if (!q) return q.error();
  const std::string page_sql =
      std::string(kObjectSelect) + " WHERE (kind, id) > ($1, $2) ORDER BY kind, id LIMIT " + std::to_string(kPage);
  std::string after_kind, after_id;  // "" sorts before every stored kind (kind is never empty)
  int64_t compared = 0;
  for (;;) {
    auto page = to.query(page_sql, PgParams().add(after_kind).add(after_id), "reading objects back");
    if (!page) return page.error();
    for (int i = 0; i < page->size(); ++i) {
      auto pg = read_record(page->row(i));
      if (!pg) return pg.error();
      auto row = q->step("reading objects from SQLite");
      if (!row) return row.error();
      if (!*row) return mismatch("PostgreSQL has " + object_path(pg->kind, pg->id) + ", which SQLite has not");
      auto lite = read_record(*q);
      if (!lite) return lite.error();
      if (const std::string field = difference(*lite, *pg); !field.empty())
        return mismatch(object_path(lite->kind, lite->id) + " differs (" + field + ")");
      after_kind = pg->kind;
      after_id = pg->id;
      ++compared;
    }
    if (page->size() < kPage) break;
  }
  auto row = q->step("reading objects from SQLite");
  if (!row) return row.error();
  if (*row) return mismatch(object_path(q->text(0), q->text(1)) + " is missing from PostgreSQL");
  return compared;
}

}  // namespace gpurent
