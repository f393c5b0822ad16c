#include "core/result.h"

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

}  // namespace gpurent
