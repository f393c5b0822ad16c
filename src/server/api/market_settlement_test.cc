// pick_nodes (market_settlement.h): the whole nodes a trade is delivered with — best fit, only a
// node book's size in a node book, and never more nodes than one reservation holds.
#include "server/api/market_settlement.h"

#include <gtest/gtest.h>

namespace gpurent {
namespace {

std::vector<FreeNode> nodes_of(std::initializer_list<int64_t> sizes) {
  std::vector<FreeNode> out;
  int i = 0;
  for (int64_t g : sizes) {
    FreeNode n;
    n.node.id = "nod_" + std::to_string(10 + i++);
    n.gpus = g;
    out.push_back(std::move(n));
  }
  return out;
}

std::vector<std::string> ids(const std::vector<const FreeNode*>& picked) {
  std::vector<std::string> out;
  for (const FreeNode* n : picked) out.push_back(n->node.id);
  return out;
}

TEST(PickNodes, TakesTheSmallestNodeThatHoldsTheRestElseTheLargest) {
  const auto free = nodes_of({8, 4, 8, 2, 1});  // nod_10..nod_14
  // 3 GPUs: the 4-GPU node holds them all.
  EXPECT_EQ(ids(pick_nodes(free, 3, 0)), std::vector<std::string>{"nod_11"});
  // 11: the largest (the later 8, by id), then the 4 holds the remaining 3.
  EXPECT_EQ(ids(pick_nodes(free, 11, 0)), (std::vector<std::string>{"nod_12", "nod_11"}));
  // More than all of them: every node, short.
  EXPECT_EQ(pick_nodes(free, 100, 0).size(), 5u);
  // A node book of 8-GPU nodes takes only those.
  EXPECT_EQ(ids(pick_nodes(free, 16, 8)), (std::vector<std::string>{"nod_12", "nod_10"}));
}

TEST(PickNodes, NeverTakesMoreNodesThanOneReservationHolds) {
  std::vector<FreeNode> free;
  for (size_t i = 0; i < kMaxReservedNodes + 10; ++i) {
    FreeNode n;
    n.node.id = "nod_" + std::to_string(100000 + i);
    n.gpus = 1;
    free.push_back(std::move(n));
  }
  const int64_t want = static_cast<int64_t>(kMaxReservedNodes) + 5;
  EXPECT_EQ(pick_nodes(free, want, 0).size(), kMaxReservedNodes);  // short: the trade is undeliverable
  EXPECT_EQ(pick_nodes(free, 5, 0, 3).size(), 3u);
}

}  // namespace
}  // namespace gpurent
