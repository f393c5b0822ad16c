// Helpers shared by the codecs of records only the server writes (model/job_run.h, alert.h,
// fault.h): their free text has no length rule a user must meet, and a message is stored both as
// English text and as its code. Pure; thread-safe.
#pragma once

#include <optional>
#include <string>

#include "core/fields.h"
#include "core/message.h"

namespace gpurent {

// Text the server wrote: any length up to 1 MiB, "" allowed.
inline constexpr StrRule kServerText{.min_len = 0, .max_len = 1 << 20};

// The message stored under `code_key` ({code, args}); absent or null: none. A malformed one is an
// error on `code_key`.
std::optional<Message> stored_message(Fields& f, const char* code_key);

// Reads the keys the server set on a stored document of a kind the API creates (the ids it
// resolved references to: tenant_id, node_ids…), which the kind's parse_x ignores: `read` gets a
// Fields over the document (other keys are left alone). decode_x = parse_x + this.
template <class T, class Read>
Result<T> with_server_keys(Result<T> parsed, const nlohmann::json& body, Read&& read) {
  if (!parsed) return parsed;
  FieldErrors errs;
  Fields f(body, "", errs);
  read(f, *parsed);
  if (!errs.empty()) return errs.to_error();
  return parsed;
}

}  // namespace gpurent
