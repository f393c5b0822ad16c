// Images (model/image.h, docs/resources/images.md) on the services' side: how a job's image name
// finds its record, and the builder that turns queued recipes into images.
//
// The builder (gpurent serve --image-builds) runs one build at a time on its own thread: the
// oldest queued image of the tenant served longest ago becomes "building" (turns between tenants);
// it fails at once when the tenant's storage quota is used up or the disk is short, and after the
// build when the image does not fit the quota or the size limit (as an upload would); mmdebstrap installs the recipe's Debian packages from
// the mirror into a root file system tarball; its SHA-256, size and installed packages are
// recorded and the tarball moves into the content-addressed store (artifact_store.h), where nodes
// import it from; the image is "ready". An image whose recipe another ready image already built
// takes that content at once. A failed build is "failed" with mmdebstrap's last words. A build
// interrupted by a restart is queued again at the next start.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "model/image.h"
#include "server/services/access.h"
#include "server/services/context.h"

namespace gpurent {

// The image `ref` as a user of tenant `tenant_id` names it: an id, or a name (the tenant's own
// image first, then a public one). tenant_id "*" (an operator) reaches any image by id and
// public ones by name.
template <class Reader>
Result<Record> find_image(Reader& store, const std::string& tenant_id, const std::string& ref) {
  const Error missing = Error::make(Code::kNotFound, Message("api.resources.not_found").arg("kind", "images").arg("ref", ref));
  if (looks_like_id(ref)) {
    auto r = store.get("images", ref);
    if (r && (r->tenant_id.empty() || r->tenant_id == tenant_id || tenant_id == "*")) return r;
    return missing;
  }
  for (const std::string& scope : {tenant_id, std::string("public")}) {
    if (scope.empty() || scope == "*") continue;
    auto found = store.list({"images", {{"name", scope + "/" + ref}}, "", 1});
    if (!found) return found.error();
    if (!found->items.empty()) return found->items.front();
  }
  return missing;
}

class ImageBuilder {
 public:
  // mirror: the Debian archive mmdebstrap installs from.
  ImageBuilder(ServiceContext& app, std::string mirror);
  ~ImageBuilder();
  void start();
  void stop();
  // Builds the oldest queued image (and returns true), or returns false when none is queued.
  Result<bool> build_one();
  void wake();  // a recipe was queued

 private:
  void run();
  // Room for a build of the tenant's ("" public): before it (size 0) 2 GiB free on the artifact
  // disk and the tenant's quota not used up; after it, a GiB still free and its `size` within
  // --artifact-max-gib and the quota (--artifact-tenant-gib), as an upload's would be. `on_disk`
  // false: content already in the store (the same recipe's), which takes no disk.
  Status build_room(const std::string& tenant_id, int64_t size, bool on_disk = true);
  ServiceContext& app_;
  std::string mirror_;
  std::map<std::string, TimeMs> last_served_;  // tenant -> when its last build was picked (builder thread only)
  std::string picked_;                         // the image build_one is building (builder thread only)
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false, woken_ = false;  // guarded by mu_
  std::thread thread_;
};

// Wakes the server's builder (a recipe was queued); nothing when it runs none.
void wake_image_builder(const ServiceContext& app);

}  // namespace gpurent
