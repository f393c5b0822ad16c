// Reading every usage point of a range from a store read that answers at most `limit` points:
// page by page, oldest first, so that a run or a card with more points than one read returns is
// rated on all of them, never on its first page alone. Header-only; no state.
#pragma once

#include <cstddef>
#include <string>
#include <type_traits>

#include "core/clock.h"
#include "core/result.h"

namespace gpurent {

// Every point of [lo, hi), `limit` at a time.
// `read(from, to, limit)` answers the store's points of [from, to), oldest first.
template <class Read>
auto all_points(Read&& read, TimeMs lo, TimeMs hi, int limit) -> decltype(read(lo, hi, limit)) {
  std::decay_t<decltype(read(lo, hi, limit).value())> out;
  for (TimeMs from = lo;;) {
    auto page = read(from, hi, limit);
    if (!page) return page.error();
    if (page->size() < static_cast<size_t>(limit)) {
      out.insert(out.end(), page->begin(), page->end());
      return out;
    }
    // The last instant may go on in the next page: read again from it.
    const TimeMs cut = page->back().at;
    size_t keep = page->size();
    while (keep > 0 && (*page)[keep - 1].at == cut) --keep;
    if (keep == 0)
      return Error::make(Code::kInternal, "more than " + std::to_string(limit) + " usage points at one instant (" +
                                              format_rfc3339(cut) + "): they cannot be rated exactly");
    out.insert(out.end(), page->begin(), page->begin() + static_cast<std::ptrdiff_t>(keep));
    from = cut;
  }
}

}  // namespace gpurent
