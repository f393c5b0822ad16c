#include "core/result.h"

#include "core/message.h"

namespace gpurent {

const char* code_name(Code c) {
  switch (c) {
    case Code::kBadRequest: return "bad_request";
    case Code::kInvalid: return "invalid";
    case Code::kUnauthorized: return "unauthorized";
    case Code::kForbidden: return "forbidden";
    case Code::kNotFound: return "not_found";
    case Code::kConflict: return "conflict";
    case Code::kMethodNotAllowed: return "method_not_allowed";
    case Code::kTooLarge: return "too_large";
    case Code::kUnavailable: return "unavailable";
    case Code::kInternal: return "internal";
  }
  return "internal";
}

int http_status(Code c) {
  switch (c) {
    case Code::kBadRequest: return 400;
    case Code::kInvalid: return 422;
    case Code::kUnauthorized: return 401;
    case Code::kForbidden: return 403;
    case Code::kNotFound: return 404;
    case Code::kConflict: return 409;
    case Code::kMethodNotAllowed: return 405;
    case Code::kTooLarge: return 413;
    case Code::kUnavailable: return 503;
    case Code::kInternal: return 500;
  }
  return 500;
}

Message field_detail(const std::string& field, Message reason) {
  if (field.empty()) return reason;
  return Message("error.field").arg("field", field).arg("reason", std::move(reason));
}

Error Error::invalid(std::string field, Message reason) {
  Error e{Code::kInvalid, "", {}, field_detail(field, reason)};
  e.message = render_en(e.detail);
  e.fields.push_back({std::move(field), render_en(reason), std::move(reason)});
  return e;
}

Error Error::make(Code c, Message detail) {
  std::string text = render_en(detail);
  return Error{c, std::move(text), {}, std::move(detail)};
}

}  // namespace gpurent
