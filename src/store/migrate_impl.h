// The steps of migrate_store (migrate.cc): copying one table from SQLite into PostgreSQL
// (migrate_copy.cc) and verifying the copy (migrate_verify.cc). Each runs inside the caller's
// SQLite read transaction and PostgreSQL write transaction. Internal to src/store; not
// thread-safe (the connections are the caller's).
#pragma once

#include <vector>

#include "store/backup.h"
#include "store/migrate_tables.h"
#include "store/pg_db.h"
#include "store/sqlite_db.h"

namespace gpurent {

// Copies every row of `t` from `from` into `to` (COPY FROM STDIN), first creating the month
// partitions a partitioned table needs; then moves an identity column's sequence past the rows.
// Returns the rows copied. Errors name the table (and for a value PostgreSQL cannot hold, the
// column and the row's key).
Result<int64_t> copy_table(Db& from, PgConn& to, const TableMap& t);

// Every table of `tables` holds as many rows in `to` as in `from`; the counts go to `counts`.
Status verify_counts(Db& from, PgConn& to, const std::vector<TableMap>& tables, std::vector<TableCount>& counts);

// Every object (kind, id, name, index columns, times, version and body as JSON) is the same in
// both, in the same (kind, id) order. Returns how many were compared.
Result<int64_t> verify_objects(Db& from, PgConn& to);

}  // namespace gpurent
