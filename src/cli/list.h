// Listing: follows the API's keyset pages ({"items": [...], "next_after": cursor}) and prints the
// items per --output. Used by every `list` verb, `jobs events` and `tokens list`. Not thread-safe.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/commands.h"

namespace gpurent {

struct ListPage {
  std::vector<json> items;
  std::string next_after;  // empty when nothing is left
};

// GET `path` with `query`; limit > 0 fetches one page of at most `limit` items, otherwise every page.
// `after` starts after that cursor. A server that repeats a cursor is reported, not looped on.
ApiResult<ListPage> fetch_list(ApiClient& client, const std::string& path, const Query& query, int limit,
                               const std::string& after);

// Fetches and prints: json/yaml {"items": [...], "next_after": cursor|null}; table via `table`,
// with "no <noun> found" and "more results: --after <cursor>" notes on stderr.
int run_list(CliContext& ctx, const std::string& path, const Query& query, int limit, const std::string& after,
             const std::function<void(std::ostream&, const std::vector<json>&)>& table, const std::string& noun);

}  // namespace gpurent
