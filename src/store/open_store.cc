// What the store's callers share about a `--db` argument.
#include "store/store.h"

namespace gpurent {

bool is_postgres_url(std::string_view db) { return db.starts_with("postgresql://") || db.starts_with("postgres://"); }

std::string describe_db(const std::string& db) {
  if (!is_postgres_url(db)) return db;
  std::string out = db;
  // user:password@ in the authority. libpq ends the authority at the first '/' only: a password
  // may hold '?' or '#' unencoded (and '@', which libpq would split at): everything between the
  // first ':' and the last '@' before that '/' is masked.
  const size_t start = out.find("://") + 3;
  const size_t end = std::min(out.find('/', start), out.size());
  if (const size_t at = end > start ? out.rfind('@', end - 1) : std::string::npos;
      at != std::string::npos && at >= start) {
    if (const size_t colon = out.find(':', start); colon != std::string::npos && colon < at)
      out.replace(colon + 1, at - colon - 1, "***");
  }
  // password=... among the query parameters.
  for (size_t p = out.find("password=", start); p != std::string::npos; p = out.find("password=", p + 1)) {
    if (p > 0 && out[p - 1] != '?' && out[p - 1] != '&') continue;
    const size_t v = p + 9;
    const size_t e = std::min(out.find('&', v), out.size());
    out.replace(v, e - v, "***");
  }
  return out;
}

}  // namespace gpurent
