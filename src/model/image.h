// Image: a container image jobs run in (docs/resources/images.md). Operators publish public
// images for everyone; a tenant adds its own, seen only by its users. An image comes from an
// archive uploaded in chunks (a docker-archive or oci-archive as `podman save` writes, or a root
// file system tarball), checked against its declared SHA-256; from a recipe of Debian packages
// the server builds (mmdebstrap); or saved from a running instance's container (podman commit on
// its node: services/image_saves.h). Either way its content is one file of the content-addressed
// store (server/services/artifact_store.h), which nodes load from when they lack the image.
// Written by the server only (api/images.cc, services/image_builder.h). Value types and pure
// functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/enum_names.h"
#include "core/message.h"
#include "model/resource.h"

namespace gpurent {

enum class ImageFormat { kDockerArchive, kOciArchive, kRootfsTar };
inline constexpr EnumEntry<ImageFormat> kImageFormatNames[] = {{ImageFormat::kDockerArchive, "docker-archive"},
                                                               {ImageFormat::kOciArchive, "oci-archive"},
                                                               {ImageFormat::kRootfsTar, "rootfs-tar"}};

enum class ImageState { kUploading, kQueued, kBuilding, kSaving, kReady, kFailed };
inline constexpr EnumEntry<ImageState> kImageStateNames[] = {{ImageState::kUploading, "uploading"},
                                                             {ImageState::kQueued, "queued"},
                                                             {ImageState::kBuilding, "building"},
                                                             {ImageState::kSaving, "saving"},
                                                             {ImageState::kReady, "ready"},
                                                             {ImageState::kFailed, "failed"}};

inline constexpr size_t kMaxRecipePackages = 200;

// Debian packages on a Debian suite: what mmdebstrap installs (--variant, --include).
struct ImageRecipe {
  std::string suite = "bookworm";     // bookworm, trixie, ...
  std::string variant = "minbase";    // mmdebstrap's: essential, minbase, apt, required, important, standard
  std::vector<std::string> packages;  // Debian package names, at most kMaxRecipePackages
  bool operator==(const ImageRecipe&) const = default;
};

// Where a saved image comes from: the instance and the start (job) whose container was saved.
struct ImageSource {
  std::string instance_id, instance, job_id;  // instance: its name when saved
  bool operator==(const ImageSource&) const = default;
};

struct Image {
  std::string name;  // slug; unique among public images, and among a tenant's own
  std::optional<std::string> description;
  std::optional<ImageRecipe> recipe;  // built by the server; else an uploaded or a saved archive
  std::optional<ImageSource> source;  // saved from an instance (server-set; a docker-archive)
  ImageFormat format = ImageFormat::kRootfsTar;  // a recipe's is rootfs-tar
  std::string sha256;      // the archive's (declared), or the built tarball's (once built)
  int64_t size_bytes = 0;  // likewise
  // Set by the server.
  std::string tenant_id;   // empty: public
  ImageState state = ImageState::kUploading;
  int64_t received_bytes = 0;
  std::vector<std::string> packages;  // "name=version" of a built recipe's installed packages
  std::string error;                  // why a build or a save failed (English)
  std::optional<Message> failure;     // the same as a message, when gpurent said it (a save)
  std::string created_by;             // the user id
  std::optional<TimeMs> ready_at;
  bool operator==(const Image&) const = default;
  bool is_public() const { return tenant_id.empty(); }
};

// The name nodes know it by: localhost/gpurent/<public|tenant id>/<name>:<first 12 hex of its
// content's digest> (another content under the same name is another reference).
std::string image_reference(const Image& i);
// Whether a job's `image` names a gpurent image (a slug) rather than an image reference on the
// nodes (anything with '/', ':' or '@').
bool names_platform_image(const std::string& job_image);

// Whether a job of tenant `tenant_id` may name the image reference `ref` directly: a reference to
// a gpurent image as nodes know it (localhost/gpurent/<scope>/<name>:<tag>) only when its scope is
// "public" or the tenant's own id.
bool gpurent_reference_allowed(const std::string& ref, const std::string& tenant_id);

// A tenant's own image kept on the nodes of one offer (kind "image_storage", id "ims_…", state
// "open" or "closed"): from the start of the first run of a job in it billed under that offer
// until the image is deleted. Rated per GB-month under the offer's fees.image_storage (public
// images are the platform's and not billed). Written by the server only
// (services/allocation_ledger.h).
struct KeptImage {
  std::string image_id, image;        // the image's id and name
  std::string offer_id, contract_id;  // contract "" at list prices
  int64_t bytes = 0;
  TimeMs from = 0;
  std::optional<TimeMs> to;  // none while kept
  bool operator==(const KeptImage&) const = default;
};
Result<KeptImage> decode_kept_image(const json& body);  // strictly by type
json to_json(const KeptImage& k);

// POST body: name, description, and either recipe {suite, variant, packages} or archive
// {format, sha256, size_bytes (1..max_bytes)}.
Result<Image> parse_image(const json& body, int64_t max_bytes);
// POST /instances/{ref}/image body: name, description. A docker-archive in state "saving".
Result<Image> parse_saved_image(const json& body);
Result<Image> decode_image(const json& body);  // the stored body, strictly by type
json to_json(const Image& i);                  // the stored body; the API adds id, reference, times
IndexCols index_of(const Image& i);            // name "<public|tenant id>/<name>", state

}  // namespace gpurent
