// A max tree over positions 0..n-1 of int64 values: the largest value and where it is, one leaf
// updated in O(log n). Placement indexes (engine_index.cc, alloc_scheduler.cc) pack a node's score
// with its position so that the top is the best node and, among equal scores, the first position.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace gpurent {

class MaxTree {
 public:
  static constexpr int64_t kNone = -1;  // a leaf that holds no candidate
  // A score (>= 0) and a position: larger scores first, then smaller positions.
  static int64_t pack(int score, size_t pos) {
    return (int64_t{score} << 32) | (kPosMask - static_cast<uint32_t>(pos));
  }
  static size_t position(int64_t packed) { return kPosMask - static_cast<uint32_t>(packed & 0xffffffff); }

  // n leaves, each value(pos).
  template <typename Value>
  void fill(size_t n, Value value) {
    width_ = 1;
    while (width_ < n) width_ *= 2;
    tree_.assign(2 * width_, kNone);
    for (size_t pos = 0; pos < n; ++pos) tree_[width_ + pos] = value(pos);
    for (size_t i = width_ - 1; i >= 1; --i) tree_[i] = std::max(tree_[2 * i], tree_[2 * i + 1]);
  }
  void set(size_t pos, int64_t v) {
    size_t i = width_ + pos;
    tree_[i] = v;
    for (i /= 2; i >= 1; i /= 2) {
      const int64_t m = std::max(tree_[2 * i], tree_[2 * i + 1]);
      if (tree_[i] == m) break;  // nothing above changes
      tree_[i] = m;
    }
  }
  int64_t top() const { return tree_.size() > 1 ? tree_[1] : kNone; }
  int64_t leaf(size_t pos) const { return tree_[width_ + pos]; }
  size_t cells() const { return tree_.size(); }

 private:
  static constexpr uint32_t kPosMask = 0x7fffffff;
  size_t width_ = 1;
  std::vector<int64_t> tree_;
};

}  // namespace gpurent
