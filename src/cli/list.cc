#include "cli/list.h"

#include <set>

#include "cli/output.h"

namespace gpurent {

ApiResult<ListPage> fetch_list(ApiClient& client, const std::string& path, const Query& query, int limit,
                               const std::string& after) {
  ListPage page;
  std::string cursor = after;
  std::set<std::string> seen;
  for (;;) {
    Query q = query;
    if (limit > 0) q.emplace_back("limit", std::to_string(limit));
    if (!cursor.empty()) q.emplace_back("after", cursor);
    auto r = client.get(path, q);
    if (!r) return r.error();
    const json& items = at_path(*r, "items");
    if (!items.is_array()) {
      ApiError e;
      e.status = 200;
      e.title = "Invalid response";
      e.detail = "the server's answer to GET " + path + " has no \"items\" list";
      return e;
    }
    for (const auto& it : items) page.items.push_back(it);
    const json& next = at_path(*r, "next_after");
    page.next_after = next.is_string() ? next.get<std::string>() : "";
    if (limit > 0 || page.next_after.empty()) return page;
    if (!seen.insert(page.next_after).second) {
      ApiError e;
      e.status = 200;
      e.title = "Invalid response";
      e.detail = "the server repeated the page cursor '" + page.next_after + "' for GET " + path;
      return e;
    }
    cursor = page.next_after;
  }
}

int run_list(CliContext& ctx, const std::string& path, const Query& query, int limit, const std::string& after,
             const std::function<void(std::ostream&, const std::vector<json>&)>& table, const std::string& noun) {
  int rc = kExitOk;
  ApiClient* c = ctx.client(&rc);
  if (!c) return rc;
  auto page = fetch_list(*c, path, query, limit, after);
  if (!page) return ctx.fail(page.error());
  json doc = {{"items", page->items},
              {"next_after", page->next_after.empty() ? json(nullptr) : json(page->next_after)}};
  return ctx.emit(doc, [&](std::ostream& out) {
    if (page->items.empty())
      ctx.err() << "no " << noun << " found\n";
    else
      table(out, page->items);
    if (!page->next_after.empty()) ctx.err() << "more results: add --after " << page->next_after << '\n';
  });
}

}  // namespace gpurent
