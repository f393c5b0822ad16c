#include "model/artifact.h"

#include "core/json_put.h"
#include "model/record_codec.h"

namespace gpurent {

namespace {

constexpr StrRule kArtifactNameRule{.min_len = 1, .max_len = 63, .pattern = kSlug, .pattern_help = kSlugHelp};
constexpr int64_t kMaxArtifactBytes = int64_t{1} << 50;  // 1 PiB: the largest any deployment may allow

std::string lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

// The keys a client states (POST) into a; errors to errs.
void read_declared(Fields& f, Artifact& a, int64_t max_bytes) {
  a.name = f.str("name", kArtifactNameRule);
  const std::string digest = f.str("sha256", {.min_len = 64, .max_len = 64});
  if (!digest.empty() && !is_sha256_hex(digest))
    f.error("sha256", Message("artifact.sha256.hex"));
  else
    a.sha256 = lower(digest);
  a.size_bytes = f.integer("size_bytes", 0, max_bytes);
  a.kind = f.enumeration("kind", kArtifactKindNames, std::optional<ArtifactKind>(ArtifactKind::kFile));
  a.description = f.opt_str("description", {.min_len = 1, .max_len = 512});
}

}  // namespace

bool is_sha256_hex(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
  return true;
}

Result<Artifact> parse_artifact(const json& body, int64_t max_bytes) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  Artifact a;
  read_declared(f, a, max_bytes);
  f.finish();
  if (errs.empty() && a.size_bytes == 0 && a.sha256 != kEmptySha256)
    errs.add("sha256", Message("artifact.sha256.empty_file").arg("sha256", kEmptySha256));
  if (!errs.empty()) return errs.to_error();
  if (a.size_bytes == 0) a.state = ArtifactState::kReady;
  return a;
}

Result<Artifact> decode_artifact(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  Artifact a;
  read_declared(f, a, kMaxArtifactBytes);
  a.received_bytes = f.integer("received_bytes", 0, kMaxArtifactBytes);
  a.state = f.enumeration("state", kArtifactStateNames);
  a.project_id = f.str("project_id", kServerText);
  a.tenant_id = f.str("tenant_id", kServerText);
  a.uploaded_by = f.opt_str("uploaded_by", kServerText).value_or("");
  a.ready_at = f.opt_time("ready_at");
  if (errs.empty() && a.received_bytes > a.size_bytes)
    errs.add("received_bytes", Message("artifact.received_over_size"));
  if (!errs.empty()) return errs.to_error();
  return a;
}

json to_json(const Artifact& a) {
  json j = {{"name", a.name},
            {"kind", enum_name(kArtifactKindNames, a.kind)},
            {"sha256", a.sha256},
            {"size_bytes", a.size_bytes},
            {"received_bytes", a.received_bytes},
            {"state", enum_name(kArtifactStateNames, a.state)},
            {"project_id", a.project_id},
            {"tenant_id", a.tenant_id},
            {"uploaded_by", a.uploaded_by}};
  put_opt(j, "description", a.description);
  put_opt_time(j, "ready_at", a.ready_at);
  return j;
}

IndexCols index_of(const Artifact& a) {
  IndexCols c;
  c.name = a.project_id + "/" + a.name;  // names are unique per tenant in the store: per project here
  c.tenant_id = a.tenant_id;
  c.project_id = a.project_id;
  c.state = enum_name(kArtifactStateNames, a.state);
  return c;
}

Result<KeptArtifact> decode_kept_artifact(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  KeptArtifact k;
  k.artifact_id = f.str("artifact_id", kServerText);
  k.artifact = f.str("artifact", kServerText);
  k.offer_id = f.str("offer_id", kServerText);
  k.contract_id = f.opt_str("contract_id", kServerText).value_or("");
  k.bytes = f.integer("bytes", 0, kMaxArtifactBytes);
  k.from = f.time("from");
  if (const json* v = f.raw("to"); v && !v->is_null()) k.to = f.opt_time("to");
  if (!errs.empty()) return errs.to_error();
  return k;
}

json to_json(const KeptArtifact& k) {
  return {{"artifact_id", k.artifact_id}, {"artifact", k.artifact}, {"offer_id", k.offer_id},
          {"contract_id", k.contract_id}, {"bytes", k.bytes}, {"from", format_rfc3339(k.from)},
          {"to", time_or_null(k.to)}};
}

}  // namespace gpurent
