// How the SQLite schema's tables map onto the PostgreSQL schema's, for migrate_store
// (migrate.cc). Tables and columns have the same names on both sides (pg_migrations.cc mirrors
// migrations.cc); what differs is each column's type and a few tables' machinery, said per table
// in migrate_tables.cc. Internal to src/store; immutable data, thread-safe.
#pragma once

#include <string>
#include <vector>

namespace gpurent {

enum class ColumnType {
  kText,             // TEXT NOT NULL -> text
  kNullableText,     // TEXT -> text, NULL kept
  kInteger,          // INTEGER NOT NULL -> bigint
  kNullableInteger,  // INTEGER -> bigint, NULL kept
  kReal,             // REAL -> double precision (written in its shortest exact decimal form)
  kBoolean,          // INTEGER 0/1 (SQLite has no boolean) -> boolean
  kJson,             // TEXT holding a JSON document -> jsonb
};

struct ColumnMap {
  std::string name;
  ColumnType type;
};

struct TableMap {
  std::string name;
  std::vector<ColumnMap> columns;
  std::string order_by;  // the SQLite primary key: rows go over in key order
  // A PostgreSQL column GENERATED ALWAYS AS IDENTITY where SQLite has an INTEGER PRIMARY KEY (the
  // append order): COPY writes the SQLite values as they are, then the identity's sequence is
  // moved past the largest so the next append follows them. Empty when none.
  std::string identity;
  // PostgreSQL's table is partitioned by month on `at`: the partitions the rows need are created
  // (usage_ensure_month_partitions) before they are copied.
  bool partitioned_by_month = false;
};

// Every table the SQLite schema has that holds records, in copy order.
const std::vector<TableMap>& migration_tables();

// SQLite tables that are deliberately not copied, each with why.
struct SkippedTable {
  std::string name;
  std::string why;
};
const std::vector<SkippedTable>& tables_not_copied();

}  // namespace gpurent
