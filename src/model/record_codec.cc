#include "model/record_codec.h"

namespace gpurent {

std::optional<Message> stored_message(Fields& f, const char* code_key) {
  const nlohmann::json* m = f.raw(code_key);
  if (!m || m->is_null()) return std::nullopt;
  auto msg = message_from_json(*m);
  if (!msg) {
    if (!msg.error().detail.empty()) f.error(code_key, msg.error().detail);
    else f.error(code_key, msg.error().message);
    return std::nullopt;
  }
  return std::move(*msg);
}

}  // namespace gpurent
