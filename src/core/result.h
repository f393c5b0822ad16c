// Errors as values for expected failures (validation, not found, conflict, permission).
// An Error carries a code, the field it is about (a JSON path such as "gpus[2].numa_node",
// empty when it concerns the whole request) and a human reason. Result<T> holds a T or Errors.
// Value types; thread-compatible.
#pragma once

#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/message_type.h"

namespace gpurent {

enum class Code {
  kBadRequest,    // 400: the request itself is unreadable (malformed JSON/YAML, wrong content type)
  kInvalid,       // 422: a field is missing, malformed or out of range
  kUnauthorized,  // 401
  kForbidden,     // 403
  kNotFound,      // 404 (also what another tenant's objects look like)
  kConflict,      // 409: duplicate name, illegal state transition
  kMethodNotAllowed,  // 405: the resource does not support this method
  kTooLarge,      // 413
  kUnavailable,   // 503
  kInternal,      // 500
};

const char* code_name(Code c);
int http_status(Code c);

struct FieldError {
  std::string field;
  std::string reason;  // English
  // The reason as a message code with its arguments (src/messages/<lang>.json), so the API can
  // word it in the caller's language; empty for a reason given as text only.
  Message coded;
};

struct Error {
  Code code = Code::kInternal;
  std::string message;              // one-line summary, English
  std::vector<FieldError> fields;   // each offending field with its reason
  // The summary as a message code when it was built from one (render_en(detail) == message); the
  // API words it in the caller's language while `message` is still that text. Empty otherwise.
  Message detail;

  // A field's reason as text only (English in every language).
  static Error invalid(std::string field, std::string reason) {
    Error e{Code::kInvalid, field.empty() ? reason : field + ": " + reason, {}, {}};
    e.fields.push_back({std::move(field), std::move(reason), {}});
    return e;
  }
  // A field's reason as a message code: its English text comes from the catalogue (result.cc).
  static Error invalid(std::string field, Message reason);
  static Error make(Code c, std::string message) { return Error{c, std::move(message), {}, {}}; }
  static Error make(Code c, Message detail);
};

// "field: reason" as a message (code "error.field"); the reason alone when `field` is empty.
Message field_detail(const std::string& field, Message reason);

// E is the error type: Error here; the CLI's HTTP client uses its ApiError.
template <class T, class E = Error>
class [[nodiscard]] Result {
 public:
  Result(T v) : v_(std::move(v)) {}          // NOLINT: implicit by design
  Result(E e) : v_(std::move(e)) {}          // NOLINT
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  const E& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, E> v_;
};

struct Unit {};
using Status = Result<Unit>;
inline Status ok_status() { return Unit{}; }

}  // namespace gpurent
