// How the dashboards name a GPU card: "node #gpu". Node names are unique only within a supplier,
// so where two suppliers' nodes in one list share a name, those cards are named
// "supplier/node #gpu" instead. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpurent {

struct CardName {
  std::string node_id, node, supplier;
  int64_t gpu = 0;
};

// One label per card, in the list's order; the cards of one list get distinct labels unless two
// suppliers share a name too (then their ids tell them apart, in `node_id`).
std::vector<std::string> card_labels(const std::vector<CardName>& cards);

}  // namespace gpurent
