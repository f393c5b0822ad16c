#include "server/http/http_util.h"

#include <algorithm>

#include "core/json_limits.h"
#include "core/message.h"
#include "core/yaml_json.h"

namespace gpurent {

namespace {
thread_local std::string t_language = "en";
constexpr std::string_view kMessageSuffix = "_message";
}  // namespace

ResponseLanguage::ResponseLanguage(std::string lang) : previous_(std::move(t_language)) { t_language = std::move(lang); }
ResponseLanguage::~ResponseLanguage() { t_language = std::move(previous_); }
const std::string& ResponseLanguage::current() { return t_language; }

void localize_messages(json& j, const std::string& lang) {
  if (j.is_array()) {
    for (auto& v : j) localize_messages(v, lang);
    return;
  }
  if (!j.is_object()) return;
  std::vector<std::pair<std::string, std::string>> rendered;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    if (k.size() > kMessageSuffix.size() && k.ends_with(kMessageSuffix) && it->is_object() && it->contains("code")) {
      if (auto m = message_from_json(*it)) rendered.emplace_back(k.substr(0, k.size() - kMessageSuffix.size()), render(*m, lang));
      continue;
    }
    localize_messages(*it, lang);
  }
  for (auto& [k, text] : rendered) j[k] = std::move(text);
}

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  if (t_language != "en" && !body.is_null()) {
    json copy = body;
    localize_messages(copy, t_language);
    res.set_content(copy.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
    return;
  }
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

static const char* title_of(Code c) {
  switch (c) {
    case Code::kBadRequest: return "Bad request";
    case Code::kInvalid: return "Validation failed";
    case Code::kUnauthorized: return "Unauthorized";
    case Code::kForbidden: return "Forbidden";
    case Code::kNotFound: return "Not found";
    case Code::kConflict: return "Conflict";
    case Code::kMethodNotAllowed: return "Method not allowed";
    case Code::kTooLarge: return "Payload too large";
    case Code::kUnavailable: return "Service unavailable";
    case Code::kInternal: return "Internal error";
  }
  return "Error";
}

namespace {

// The detail in `lang`: the coded detail when `e.message` is still its English text (a caller
// that reworded the message keeps its words, in English).
bool detail_is_coded(const Error& e) { return !e.detail.empty() && render_en(e.detail) == e.message; }

}  // namespace

json problem_json(const Error& e, const std::string& instance) {
  const std::string& lang = ResponseLanguage::current();
  const bool coded = detail_is_coded(e);
  json p = {{"type", std::string("https://gpurent.dev/problems/") + code_name(e.code)},
            {"title", title_of(e.code)},
            {"status", http_status(e.code)},
            {"detail", coded && lang != "en" ? render(e.detail, lang) : e.message},
            {"instance", instance}};
  if (coded) p["detail_message"] = message_to_json(e.detail);
  if (!e.fields.empty()) {
    json errs = json::array();
    for (const auto& f : e.fields) {
      if (f.coded.empty()) {
        errs.push_back({{"field", f.field}, {"reason", f.reason}});
        continue;
      }
      errs.push_back({{"field", f.field}, {"reason", lang == "en" ? f.reason : render(f.coded, lang)},
                      {"reason_message", message_to_json(f.coded)}});
    }
    p["errors"] = errs;
  }
  return p;
}

void send_problem(httplib::Response& res, const Error& e, const std::string& instance) {
  res.status = http_status(e.code);
  res.set_content(problem_json(e, instance).dump(-1, ' ', false, json::error_handler_t::replace),
                  "application/problem+json");
  if (e.code == Code::kUnauthorized) res.set_header("WWW-Authenticate", "Bearer realm=\"gpurent\"");
}

Result<json> parse_body(const httplib::Request& req) {
  if (req.body.empty()) return Error::make(Code::kBadRequest, Message("http.body_empty"));
  std::string ct = req.get_header_value("Content-Type");
  bool yaml = ct.find("yaml") != std::string::npos;
  if (!yaml && !ct.empty() && ct.find("json") == std::string::npos)
    return Error::make(Code::kBadRequest, Message("http.unsupported_content_type").arg("type", ct));
  json body;
  if (yaml) {
    auto r = yaml_to_json(req.body);
    if (!r) return Error{Code::kBadRequest, r.error().message, {}, r.error().detail};  // keeps a coded detail
    body = std::move(r).value();
  } else {
    auto r = parse_json_bounded(req.body);
    if (!r) return r.error();
    body = std::move(r).value();
  }
  if (!body.is_object()) return Error::make(Code::kBadRequest, Message("http.body_not_object"));
  return body;
}

std::optional<TimeMs> time_param(const httplib::Request& req, const char* name, FieldErrors& errs) {
  if (!req.has_param(name)) return std::nullopt;
  auto t = parse_rfc3339(req.get_param_value(name), name);
  if (!t) {
    const Error& e = t.error();
    if (!e.fields.empty() && !e.fields[0].coded.empty())
      errs.add(name, e.fields[0].coded);
    else
      errs.add(name, e.fields.empty() ? e.message : e.fields[0].reason);
    return std::nullopt;
  }
  return *t;
}

Status only_params(const httplib::Request& req, std::initializer_list<std::string_view> allowed) {
  FieldErrors errs;
  std::string list;
  for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
  for (auto it = req.params.begin(); it != req.params.end(); it = req.params.upper_bound(it->first)) {
    const std::string& k = it->first;
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end())
      errs.add(k,
               allowed.size() == 0 ? Message("api.params.none") : Message("api.params.unknown").arg("allowed", list));
    else if (req.params.count(k) > 1)
      errs.add(k, Message("api.params.repeated"));
  }
  if (!errs.empty()) return errs.to_error();
  return ok_status();
}

Result<PageParams> page_params(const httplib::Request& req) {
  PageParams p;
  if (req.has_param("limit")) {
    const std::string v = req.get_param_value("limit");
    if (v.empty() || v.size() > 5 || v.find_first_not_of("0123456789") != std::string::npos)
      return Error::invalid("limit", Message("http.limit.integer").arg("max", "1000"));
    int n = std::stoi(v);
    if (n < 1 || n > 1000) return Error::invalid("limit", Message("http.limit.range").arg("max", "1000").arg("got", v));
    p.limit = n;
  }
  if (req.has_param("after")) p.after = req.get_param_value("after");
  if (p.after.size() > 64) return Error::invalid("after", Message("http.after.cursor"));
  return p;
}

}  // namespace gpurent
