// Scores remembered by node state (score_policy.h: nodes in the same state score alike): a key of
// a few dozen bytes (pod shape and node state, append_score_state) to an int16 score. An
// open-addressing table over one byte arena, so a lookup hashes the key once and an insert
// allocates nothing per entry (a std::unordered_map<std::string, int16_t> paid two allocations per
// state and their frees). Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpurent {

// A fast hash of short binary keys (eight bytes at a time), also for maps keyed by such strings.
uint64_t short_key_hash(std::string_view key);
struct ShortKeyHash {
  size_t operator()(const std::string& key) const noexcept { return short_key_hash(key); }
};

class StateMemo {
 public:
  // The score stored for `key`, or a new entry for it holding 0; `added` says which.
  int16_t& find_or_add(std::string_view key, bool& added);
  size_t size() const { return size_; }
  size_t arena_bytes() const { return arena_.size(); }
  void clear();

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t offset = 0, length = 0;  // the key in arena_
    int16_t value = 0;
    bool used = false;
  };
  void grow();

  std::vector<Slot> slots_;  // a power of two long, at most half used
  std::string arena_;
  size_t size_ = 0;
};

}  // namespace gpurent
