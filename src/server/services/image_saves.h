// Saving a running instance as an image, the server's half (docs/resources/instances.md#saving-an-image).
// POST /instances/{ref}/image adds a tenant image in state "saving" whose `source` names the
// instance's running start (its job). The node's half is the container script
// (exec/container.h ContainerRun::save_request): it watches a request file per job, commits and
// saves the container, and answers with a ".save.done" line. Everything in between is files
// in `<artifact store>/saves`, so a restarted server (or node) carries on where it was:
//   <job>.save-request   written here (image id inside) while no save of that image is under way
//   <image>.save.taken   the request, moved there by the script when it starts
//   <image>.save.tar     the archive, complete (written through .part and a rename)
//   <image>.save.done    "ok <sha256> <bytes>" or "error <words>", the last thing written
// Owned by a container executor, called on every tick (observe, then sync). Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "core/clock.h"
#include "store/store.h"

namespace gpurent {

struct ImageSaveSettings {
  std::string store_root;     // the artifact store (services/artifact_store.h), shared with the nodes
  int64_t max_bytes = 0;      // one file's limit (--artifact-max-gib)
  int64_t tenant_bytes = 0;   // a tenant's artifacts and images together (--artifact-tenant-gib)
};

// The folder of requests and results, and the request file of job `job_id`.
std::string image_saves_dir(const std::string& store_root);
std::string save_request_for(const std::string& store_root, const std::string& job_id);

class ImageSaves {
 public:
  explicit ImageSaves(ImageSaveSettings s) : s_(std::move(s)) {}

  // Outside the transaction (it may take seconds): hashes each archive a node finished and this
  // server has not hashed yet, so that nothing enters the content store on the node's word; and
  // removes the files of saves that are over (a node that finished after its image had failed).
  void observe();

  // Inside the tick's transaction, for every image in state "saving": asks its job's node (the
  // request file) unless a request is pending or taken; when the node has answered and observe()
  // has hashed the archive, publishes it to the content store and makes the image ready (the
  // digest the server computed, equal to the node's; its size within the limits) or fails it
  // with the reason; when its job no longer runs with no answer, fails it (the instance stopped
  // before it was saved). The files of a finished save go later, in observe(), once the change is
  // committed (a tick rolled back leaves them, and the next does it again).
  Status sync(StoreTx& tx, TimeMs now);

 private:
  struct Hashed {
    std::string sha256;
    int64_t bytes = 0;
    std::string error;  // the archive could not be read
    bool too_big = false;  // over max_bytes: not hashed (hours on the scheduler's thread for nothing)
  };
  ImageSaveSettings s_;
  std::map<std::string, Hashed> hashed_;  // by image id
  // The images sync() last found saving; nullopt before its first pass (a restarted server's
  // saves under way are not yet known, so nothing is cleaned).
  std::optional<std::set<std::string>> saving_;
};

}  // namespace gpurent
