// The chunked upload shared by artifacts and image archives (docs/resources/artifacts.md
// "Uploading"): PUT …/content?offset=N with the next bytes of the file, N the bytes received so far;
// the SHA-256 is carried from chunk to chunk and checked when the last byte arrives; the content
// then moves into the content-addressed store (services/artifact_store.h). Used by the route
// files only.
#pragma once

#include <functional>
#include <string>

#include "server/api/app.h"
#include "server/services/artifact_store.h"

namespace gpurent {

// Where an upload stands, read from its record.
struct UploadView {
  std::string name;
  bool uploading = false;  // false: complete (or never uploaded: a recipe)
  int64_t received = 0, size = 0;
  std::string sha256;  // declared
};

struct UploadTarget {
  std::string kind;   // the records' kind: "artifacts", "images"
  std::string id;     // the record's id
  std::string label;  // names it in the audit log ("vision/llama")
  std::function<Result<UploadView>(const Record&)> view;
  // The record with `received` bytes; when `complete`, also ready (ready_at = now).
  std::function<Result<Record>(const Record&, int64_t received, bool complete, TimeMs now)> advance;
};

// The target for a record type with name, state, received_bytes, size_bytes, sha256 and ready_at
// (model/artifact.h, model/image.h): `decode` reads a record; states `uploading` and `ready`.
template <class Decode, class State>
UploadTarget typed_upload_target(const char* kind, const Record& r, std::string label, Decode decode, State uploading,
                                 State ready) {
  UploadTarget t;
  t.kind = kind;
  t.id = r.id;
  t.label = std::move(label);
  t.view = [decode, uploading](const Record& cur) -> Result<UploadView> {
    auto x = decode(cur);
    if (!x) return x.error();
    return UploadView{x->name, x->state == uploading, x->received_bytes, x->size_bytes, x->sha256};
  };
  t.advance = [decode, ready](const Record& cur, int64_t received, bool complete, TimeMs now) -> Result<Record> {
    auto x = decode(cur);
    if (!x) return x.error();
    x->received_bytes = received;
    if (complete) x->state = ready, x->ready_at = now;
    Record u = cur;
    u.state = index_of(*x).state;
    u.body = to_json(*x);
    return u;
  };
  return t;
}

// One chunk (the request's body at its ?offset=): the record as it is afterwards, or the error to
// answer (409 for the wrong offset or a complete upload, naming where to continue; 422 for bytes
// past the declared size or, at the end, another digest, after which the upload starts again).
// The audit log records the completion by `user_id`.
Result<Record> receive_chunk(App& app, const UploadTarget& t, const httplib::Request& req, const std::string& user_id);

// Room for `size` more bytes: on the store's disk (with 1 GiB to spare: else 503) and, for a
// tenant (not "" = public), within --artifact-tenant-gib (else 422 naming `field`). Inside the
// write that adds them.
Status check_room(App& app, StoreTx& tx, const std::string& tenant_id, int64_t size, const std::string& field);

// Whether an artifact or image other than `except_id` names (or is uploading) content `sha256`.
Result<bool> content_named(StoreReader& store, const std::string& sha256, const std::string& except_id);

// Deletes record `id` of `kind` (an artifact, an image) with an audit entry naming `label` and its
// digest, then releases its content (release_content below), holding its upload lock throughout:
// no chunk of it is being written. `refuse`, when given, may stop it inside the write.
Status delete_with_content(App& app, const std::string& kind, const std::string& id, const std::string& label,
                           const std::string& user_id, const std::function<Status(const json& body)>& refuse = {},
                           const std::function<Status(StoreTx& tx, const Record& removed, TimeMs now)>& also = {});

// After the record `id` naming `sha256` was deleted: its upload goes, and the content when no
// other record names it. Call holding the artifact store's upload_lock(id).
void release_content(App& app, const std::string& id, const std::string& sha256);

}  // namespace gpurent
