// The wire names of an enum's EnumEntry table (core/fields.h) as a list, in table order: for
// messages and help texts that name every allowed value ("state: one of pending, running, ...").
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/fields.h"

namespace gpurent {

template <class E, size_t N>
std::vector<std::string> enum_names(const EnumEntry<E> (&table)[N]) {
  std::vector<std::string> out;
  out.reserve(N);
  for (const auto& e : table) out.emplace_back(e.name);
  return out;
}

}  // namespace gpurent
