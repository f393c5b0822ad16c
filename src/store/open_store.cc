// What the store's callers share about a `--db` argument.
#include "store/store.h"

namespace gpurent {

bool is_postgres_url(std::string_view db) { return db.starts_with("postgresql://") || db.starts_with("postgres://"); }

std::string describe_db(const std::string& db) {
  if (!is_postgres_url(db)) return db;
  std::string out = db;
  // user:password@ in the authority. libpq ends the authority at the first '/' only, so a
  // password may hold '?' or '#' unencoded (and '@'). The authority here ends at that '/', or
  // without one at the first '?' or '#' after the first '@' (a query's own '@' is not the
  // authority's); the password is what lies between the user's ':' (before the first '@') and
  // the authority's last '@'.
  const size_t start = out.find("://") + 3;
  const size_t first_at = out.find('@', start);
  size_t end = out.find('/', start);
  if (end == std::string::npos)
    end = first_at == std::string::npos ? out.size() : std::min(out.find_first_of("?#", first_at), out.size());
  if (const size_t at = end > start ? out.rfind('@', end - 1) : std::string::npos;
      at != std::string::npos && at >= start) {
    if (const size_t colon = out.find(':', start); colon != std::string::npos && colon < first_at)
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
