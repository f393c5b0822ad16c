// Writing optional fields into a JSON document: a key is written only when its value is present,
// times as RFC 3339 and money as its exact decimal string — the shapes every to_json of the
// model uses. Header-only; pure; thread-safe.
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "core/money.h"

namespace gpurent {

template <class T>
void put_opt(nlohmann::json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

inline void put_opt_time(nlohmann::json& j, const char* key, const std::optional<TimeMs>& t) {
  if (t) j[key] = format_rfc3339(*t);
}

inline void put_opt_money(nlohmann::json& j, const char* key, const std::optional<Money>& m) {
  if (m) j[key] = m->amount_string();
}

// An RFC 3339 time, or JSON null when absent (keys a reader expects to find, such as ended_at).
inline nlohmann::json time_or_null(const std::optional<TimeMs>& t) {
  return t ? nlohmann::json(format_rfc3339(*t)) : nlohmann::json(nullptr);
}

}  // namespace gpurent
