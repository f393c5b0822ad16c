#include "insight/card_label.h"

#include <gtest/gtest.h>

namespace gpurent {
namespace {

TEST(CardLabel, NamesACardByNodeAndIndex) {
  EXPECT_EQ(card_labels({{"n-1", "node-7", "huadong", 3}, {"n-1", "node-7", "huadong", 0}}),
            (std::vector<std::string>{"node-7 #3", "node-7 #0"}));
  EXPECT_TRUE(card_labels({}).empty());
}

TEST(CardLabel, NamesTheSupplierWhereTwoSuppliersNodesShareAName) {
  const std::vector<std::string> got = card_labels({{"n-1", "gpu-01", "huadong", 0},
                                                    {"n-2", "gpu-01", "beijing-ai", 0},
                                                    {"n-3", "gpu-02", "huadong", 1},
                                                    {"n-1", "gpu-01", "huadong", 1}});
  EXPECT_EQ(got,
            (std::vector<std::string>{"huadong/gpu-01 #0", "beijing-ai/gpu-01 #0", "gpu-02 #1", "huadong/gpu-01 #1"}));
  // Two suppliers' nodes of one name, both gone (no id any more): still told apart.
  EXPECT_EQ(card_labels({{"", "gpu-01", "huadong", 0}, {"", "gpu-01", "beijing-ai", 0}}),
            (std::vector<std::string>{"huadong/gpu-01 #0", "beijing-ai/gpu-01 #0"}));
}

}  // namespace
}  // namespace gpurent
