// One table from SQLite into PostgreSQL through COPY ... FROM STDIN (text format): the rows are
// read in key order from SQLite and sent in chunks of about a megabyte, each value written as
// migrate_tables.h's type for its column says.
#include <charconv>
#include <string>

#include "store/migrate_impl.h"
#include "store/pg_queries.h"

namespace gpurent {
namespace {

constexpr size_t kChunkBytes = 1 << 20;

// COPY's text format: backslash, tab, newline and carriage return escaped; NULL is \N.
void append_text(std::string& out, std::string_view s) {
  for (char c : s) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        out += c;
    }
  }
}

std::string column_list(const TableMap& t) {
  std::string out;
  for (const auto& c : t.columns) out += (out.empty() ? "" : ", ") + c.name;
  return out;
}

// Appends column `col` of the current row as COPY reads it; errors name the row by its place in key
// order. (Table and column names come from migrate_tables.cc, never from input.)
Status append_value(std::string& out, const Query& q, int col, const TableMap& t, int64_t row) {
  const ColumnMap& c = t.columns[static_cast<size_t>(col)];
  if (q.is_null(col)) {
    if (c.type != ColumnType::kNullableText && c.type != ColumnType::kNullableInteger)
      return Error::make(Code::kInternal, t.name + "." + c.name + " of row " + std::to_string(row + 1) + " (in " +
                                              t.order_by + " order) is NULL where it may not be");
    out += "\\N";
    return ok_status();
  }
  switch (c.type) {
    case ColumnType::kText:
    case ColumnType::kNullableText:
    case ColumnType::kJson: {
      const std::string v = q.text(col);
      if (v.find('\0') != std::string::npos)
        return Error::make(Code::kInvalid, t.name + "." + c.name + " of row " + std::to_string(row + 1) + " (in " +
                                               t.order_by +
                                               " order) holds a NUL character, which PostgreSQL text "
                                               "cannot hold");
      append_text(out, v);
      return ok_status();
    }
    case ColumnType::kInteger:
    case ColumnType::kNullableInteger:
      out += std::to_string(q.integer(col));
      return ok_status();
    case ColumnType::kReal: {
      char buf[64];
      auto [end, ec] = std::to_chars(buf, buf + sizeof buf, q.real(col));  // shortest text that reads back exactly
      out.append(buf, ec == std::errc() ? end : buf);
      return ok_status();
    }
    case ColumnType::kBoolean:
      out += q.flag(col) ? "t" : "f";
      return ok_status();
  }
  return ok_status();
}

// Creates the month partitions `t`'s rows fall in, after checking their times can be partitioned.
Status ensure_partitions(Db& from, PgConn& to, const TableMap& t) {
  {
    auto q = from.query("SELECT min(at), max(at), count(*) FROM " + t.name);
    if (!q) return q.error();
    auto row = q->step("reading the time range of " + t.name);
    if (!row) return row.error();
    if (q->integer(2) == 0) return ok_status();
    for (int col : {0, 1})
      if (!partitionable(q->integer(col)))
        return Error::make(Code::kInvalid,
                           t.name + ": a sample at " + std::to_string(q->integer(col)) + " ms " + kPartitionableRange);
  }
  // One time per day is enough to name every month (a day never spans two).
  std::vector<int64_t> days;
  auto q = from.query("SELECT DISTINCT at - ((at % 86400000) + 86400000) % 86400000 FROM " + t.name);
  if (!q) return q.error();
  for (;;) {
    auto row = q->step("listing the days of " + t.name);
    if (!row) return row.error();
    if (!*row) break;
    days.push_back(q->integer(0));
  }
  auto made = to.query("SELECT usage_ensure_month_partitions($1::text, $2::bigint[])",
                       PgParams().add(t.name).add_array(days), "creating the month partitions of " + t.name);
  return made ? ok_status() : Status(made.error());
}

}  // namespace

Result<int64_t> copy_table(Db& from, PgConn& to, const TableMap& t) {
  if (t.partitioned_by_month) {
    if (auto s = ensure_partitions(from, to, t); !s) return s.error();
  }
  const std::string columns = column_list(t);
  auto q = from.query("SELECT " + columns + " FROM " + t.name + " ORDER BY " + t.order_by);
  if (!q) return q.error();
  int64_t read = 0;
  auto fill = [&](std::string& buf) -> Result<bool> {
    while (buf.size() < kChunkBytes) {
      auto row = q->step("reading " + t.name);
      if (!row) return row.error();
      if (!*row) return false;
      for (size_t c = 0; c < t.columns.size(); ++c) {
        if (c > 0) buf += '\t';
        if (auto s = append_value(buf, *q, static_cast<int>(c), t, read); !s) return s.error();
      }
      buf += '\n';
      ++read;
    }
    return true;
  };
  auto copied = to.copy_in("COPY " + t.name + " (" + columns + ") FROM STDIN", fill, "copying " + t.name);
  if (!copied) return copied.error();
  if (*copied != read)
    return Error::make(Code::kInternal, "copying " + t.name + ": read " + std::to_string(read) +
                                            " rows from SQLite, PostgreSQL took " + std::to_string(*copied));
  if (!t.identity.empty() && read > 0) {
    auto moved =
        to.query("SELECT setval(pg_get_serial_sequence($1, $2), (SELECT max(" + t.identity + ") FROM " + t.name + "))",
                 PgParams().add(t.name).add(t.identity), "moving the sequence of " + t.name);
    if (!moved) return moved.error();
  }
  return read;
}

}  // namespace gpurent
