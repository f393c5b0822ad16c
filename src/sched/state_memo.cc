#include "sched/state_memo.h"

#include <cstring>
#include <limits>

namespace gpurent {

uint64_t short_key_hash(std::string_view key) {
  // Eight bytes at a time, each word mixed in with a multiply and a shift (the keys are short and
  // mostly numbers); the tail as one zero-padded word, the length in the seed.
  uint64_t h = 0x9e3779b97f4a7c15ULL ^ (key.size() * 0xff51afd7ed558ccdULL);
  size_t i = 0;
  for (; i + 8 <= key.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, key.data() + i, 8);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 29;
  }
  if (i < key.size()) {
    uint64_t w = 0;
    std::memcpy(&w, key.data() + i, key.size() - i);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
  }
  h ^= h >> 32;
  return h * 0x9e3779b97f4a7c15ULL;
}

void StateMemo::clear() {
  slots_.clear();
  arena_.clear();
  size_ = 0;
}

void StateMemo::grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.empty() ? 1024 : old.size() * 2, Slot{});
  const size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (!s.used) continue;
    size_t at = s.hash & mask;
    while (slots_[at].used) at = (at + 1) & mask;
    slots_[at] = s;
  }
}

int16_t& StateMemo::find_or_add(std::string_view key, bool& added) {
  // The arena's offsets are 32-bit: a memo that large starts over (it only saves work).
  if (arena_.size() + key.size() > std::numeric_limits<uint32_t>::max()) clear();
  if ((size_ + 1) * 2 > slots_.size()) grow();
  const uint64_t h = short_key_hash(key);
  const size_t mask = slots_.size() - 1;
  size_t at = h & mask;
  while (slots_[at].used) {
    Slot& s = slots_[at];
    if (s.hash == h && s.length == key.size() && std::memcmp(arena_.data() + s.offset, key.data(), key.size()) == 0) {
      added = false;
      return s.value;
    }
    at = (at + 1) & mask;
  }
  Slot& s = slots_[at];
  s.used = true;
  s.hash = h;
  s.offset = static_cast<uint32_t>(arena_.size());
  s.length = static_cast<uint32_t>(key.size());
  s.value = 0;
  arena_.append(key);
  ++size_;
  added = true;
  return s.value;
}

}  // namespace gpurent
