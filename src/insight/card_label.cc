#include "insight/card_label.h"

#include <map>
#include <set>

namespace gpurent {

std::vector<std::string> card_labels(const std::vector<CardName>& cards) {
  // Node name -> the nodes of that name (with their supplier: a node gone has no id any more).
  std::map<std::string, std::set<std::string>> node_ids;
  for (const CardName& c : cards) node_ids[c.node].insert(c.supplier + "/" + c.node_id);
  std::vector<std::string> out;
  out.reserve(cards.size());
  for (const CardName& c : cards) {
    const bool shared = node_ids[c.node].size() > 1;
    out.push_back((shared ? c.supplier + "/" : std::string()) + c.node + " #" + std::to_string(c.gpu));
  }
  return out;
}

}  // namespace gpurent
