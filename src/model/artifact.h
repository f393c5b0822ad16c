// Artifact: a file of a project (model weights, a dataset) kept in the server's content-addressed
// store under its SHA-256 (server/services/artifact_store.h), uploaded in chunks and checked
// against the digest declared when it was created; jobs mount it read-only in their containers
// after the node has checked the digest again (docs/resources/artifacts.md).
// Written by the server only (api/artifacts.cc). Value types and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/clock.h"
#include "core/enum_names.h"
#include "model/resource.h"

namespace gpurent {

enum class ArtifactKind { kModel, kDataset, kFile };
inline constexpr EnumEntry<ArtifactKind> kArtifactKindNames[] = {
    {ArtifactKind::kModel, "model"}, {ArtifactKind::kDataset, "dataset"}, {ArtifactKind::kFile, "file"}};

enum class ArtifactState { kUploading, kReady };
inline constexpr EnumEntry<ArtifactState> kArtifactStateNames[] = {{ArtifactState::kUploading, "uploading"},
                                                                   {ArtifactState::kReady, "ready"}};

// The SHA-256 of no bytes: a zero-byte artifact is ready when created with it.
inline constexpr const char* kEmptySha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

struct Artifact {
  std::string name;         // slug, unique within the project
  ArtifactKind kind = ArtifactKind::kFile;
  std::optional<std::string> description;  // 1..512 characters
  std::string sha256;       // 64 lowercase hex: what the content must hash to
  int64_t size_bytes = 0;
  // Set by the server.
  int64_t received_bytes = 0;
  ArtifactState state = ArtifactState::kUploading;
  std::string project_id, tenant_id;
  std::string uploaded_by;  // the user id that created it
  std::optional<TimeMs> ready_at;
  bool operator==(const Artifact&) const = default;
};

// Whether s is 64 hex digits (either case).
bool is_sha256_hex(const std::string& s);

// POST body: name, sha256 (stored lowercase), size_bytes (0..max_bytes), kind, description.
Result<Artifact> parse_artifact(const json& body, int64_t max_bytes);
// A stored artifact (the record's body), strictly by type, naming the wrong field.
Result<Artifact> decode_artifact(const json& body);
json to_json(const Artifact& a);  // the stored body; the API adds id, project, times
IndexCols index_of(const Artifact& a);  // name "<project id>/<name>", state

// A project's artifact kept for the nodes of one offer (kind "artifact_storage", id "ars_…",
// state "open" or "closed"): from the start of the first run of a job that mounts it billed under
// that offer until the artifact is deleted. Rated per GB-month under the offer's
// fees.artifact_storage. Written by the server only (services/allocation_ledger.h).
struct KeptArtifact {
  std::string artifact_id, artifact;  // the artifact's id and name
  std::string offer_id, contract_id;  // contract "" at list prices
  int64_t bytes = 0;
  TimeMs from = 0;
  std::optional<TimeMs> to;  // none while kept
  bool operator==(const KeptArtifact&) const = default;
};
Result<KeptArtifact> decode_kept_artifact(const json& body);  // strictly by type
json to_json(const KeptArtifact& k);

}  // namespace gpurent
