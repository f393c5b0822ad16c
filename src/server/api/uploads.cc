#include "server/api/uploads.h"

#include <charconv>
#include <filesystem>
#include <fstream>

#include "server/api/resources.h"
#include "server/http/http_util.h"

namespace gpurent {

namespace {

Error wrong_offset(const UploadView& u, int64_t offset) {
  return Error::make(Code::kConflict, Message("api.artifacts.offset")
                                          .arg("name", u.name)
                                          .arg("expected", std::to_string(u.received))
                                          .arg("offset", std::to_string(offset)));
}

Result<int64_t> offset_param(const httplib::Request& req) {
  if (auto st = only_params(req, {"offset"}); !st) return st.error();
  const std::string v = req.get_param_value("offset");
  int64_t n = -1;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size() || n < 0)
    return Error::invalid("offset", Message("api.artifacts.offset_param"));
  return n;
}

// Moves the record from `expect` received bytes to `to` inside a write (a conflict when it no
// longer has `expect`: deleted, or another upload moved it); when complete, with the audit entry.
Result<Record> advance(App& app, const UploadTarget& t, int64_t expect, int64_t to, bool complete,
                       const std::string& user_id) {
  Record out;
  Status st = app.loop.run([&](StoreTx& tx) -> Status {
    auto cur = tx.get(t.kind, t.id);
    if (!cur) return cur.error();
    auto u = t.view(*cur);
    if (!u) return u.error();
    if (u->received != expect || !u->uploading) return wrong_offset(*u, expect);
    const TimeMs now = app.clock.now();
    auto next = t.advance(*cur, to, complete, now);
    if (!next) return next.error();
    next->updated_at = now;
    if (auto s = tx.update(*next); !s) return s;
    out = *next;
    if (!complete) return ok_status();
    return tx.append_audit({now, user_id, "upload", t.kind, t.id, t.label + " sha256:" + u->sha256});
  });
  if (!st) return st.error();
  return out;
}

}  // namespace

Result<Record> receive_chunk(App& app, const UploadTarget& t, const httplib::Request& req, const std::string& user_id) {
  auto offset = offset_param(req);
  if (!offset) return offset.error();
  if (req.body.empty())
    return Error::invalid("body", Message("api.artifacts.empty_body").arg("max", std::to_string(app.opts.max_body_bytes)));
  ArtifactStore files(artifact_root(app.opts));
  auto lock = files.upload_lock(t.id);     // this server's threads and the other servers'
  auto cur = app.store.get(t.kind, t.id);  // as it is now this upload is ours
  if (!cur) return cur.error();
  auto u = t.view(*cur);
  if (!u) return u.error();
  if (!u->uploading) return Error::make(Code::kConflict, Message("api.artifacts.ready").arg("name", u->name));
  if (*offset != u->received) return wrong_offset(*u, *offset);
  const int64_t end = *offset + static_cast<int64_t>(req.body.size());
  if (end > u->size)
    return Error::invalid("offset", Message("api.artifacts.past_end")
                                        .arg("from", std::to_string(*offset))
                                        .arg("to", std::to_string(end))
                                        .arg("size", std::to_string(u->size)));
  auto digest = files.write_chunk(t.id, *offset, req.body, u->size);
  if (!digest && digest.error().code == Code::kConflict) {  // the upload's file is gone
    // Published by the last chunk, whose write did not commit (a crash between the two): the
    // declared content is in the store, its size and its last bytes those of this chunk sent
    // again, so the upload is complete rather than sent again.
    files.discard_upload(t.id);  // write_chunk made an empty one
    std::error_code ec;
    if (end == u->size && !u->sha256.empty() &&
        static_cast<int64_t>(std::filesystem::file_size(files.content_path(u->sha256), ec)) == u->size && !ec) {
      std::ifstream in(files.content_path(u->sha256), std::ios::binary);
      std::string tail(req.body.size(), '\0');
      if (in.seekg(*offset) && in.read(tail.data(), static_cast<std::streamsize>(tail.size())) && tail == req.body)
        return advance(app, t, *offset, end, true, user_id);
    }
    // from 0 again
    (void)advance(app, t, u->received, 0, false, user_id);
    return wrong_offset(UploadView{u->name, true, 0, u->size, u->sha256}, *offset);
  }
  if (!digest) return digest.error();
  if (!*digest) return advance(app, t, *offset, end, false, user_id);  // more to come
  if (**digest != u->sha256) {
    files.discard_upload(t.id);
    (void)advance(app, t, *offset, 0, false, user_id);
    return Error::invalid("sha256", Message("api.artifacts.digest_mismatch").arg("got", **digest).arg("declared", u->sha256));
  }
  // Published under the content lock; the record has named its digest since it was created, so a
  // delete of another record with the same content keeps the file. The lock is not held across
  // the write (advance: loop.run): the scheduler's tick takes it too (image_saves.cc), and a tick
  // waiting behind a holder that waits for the tick would stop the single writer.
  {
    auto content = files.content_lock();
    if (auto s = files.publish(t.id, u->sha256); !s) return s.error();
  }
  return advance(app, t, *offset, end, true, user_id);
}

Status check_room(App& app, StoreTx& tx, const std::string& tenant_id, int64_t size, const std::string& field) {
  constexpr int64_t kGiB = int64_t{1} << 30;
  ArtifactStore files(artifact_root(app.opts));
  if (auto s = files.init(); !s) return s;
  const int64_t free = files.free_bytes();
  if (free >= 0 && free < size + kGiB)
    return Error::make(Code::kUnavailable,
                       Message("api.artifacts.disk_full").arg("free", std::to_string(free)).arg("size", std::to_string(size)));
  if (tenant_id.empty()) return ok_status();
  // One writer at a time sums a tenant's storage and adds to it (several servers on one database).
  if (auto l = take_write_lock(tx, "storage-" + tenant_id, "the storage quota of tenant " + tenant_id); !l) return l;
  auto used = tx.tenant_stored_bytes(tenant_id);
  if (!used) return used.error();
  const int64_t limit = app.opts.artifact_tenant_gib * kGiB;
  if (*used + size > limit)
    return Error::invalid(field, Message("api.artifacts.tenant_full")
                                            .arg("size", std::to_string(size))
                                            .arg("used", std::to_string(*used))
                                            .arg("limit", std::to_string(limit)));
  return ok_status();
}

Result<bool> content_named(StoreReader& store, const std::string& sha256, const std::string& except_id) {
  // By the digest index: two records at most, whatever the store holds.
  for (const char* kind : {"artifacts", "images"}) {
    ListQuery q;
    q.kind = kind;
    q.eq = {{"sha256", sha256}};
    q.limit = 2;
    auto page = store.list(q);
    if (!page) return page.error();
    for (const Record& r : page->items)
      if (r.id != except_id) return true;
  }
  return false;
}

Status delete_with_content(App& app, const std::string& kind, const std::string& id, const std::string& label,
                           const std::string& user_id, const std::function<Status(const json& body)>& refuse,
                           const std::function<Status(StoreTx& tx, const Record& removed, TimeMs now)>& also) {
  auto lock = ArtifactStore(artifact_root(app.opts)).upload_lock(id);
  std::string sha;
  Status st = app.loop.run([&](StoreTx& tx) -> Status {
    // Locked: a run that starts keeping it (allocation_ledger.h) waits and then finds it gone, or
    // has committed its storage record, which `also` then closes.
    auto cur = tx.get_locked(kind, id);
    if (!cur) return cur.error();
    if (refuse)
      if (auto s = refuse(cur->body); !s) return s;
    // One that no longer decodes can still be deleted: only its digest is read.
    if (cur->body.is_object() && cur->body.contains("sha256") && cur->body["sha256"].is_string())
      sha = cur->body["sha256"].get<std::string>();
    if (auto s = tx.remove(kind, id); !s) return s;
    if (also)
      if (auto s = also(tx, *cur, app.clock.now()); !s) return s;
    return tx.append_audit({app.clock.now(), user_id, "delete", kind, id, label + (sha.empty() ? "" : " sha256:" + sha)});
  });
  if (!st) return st;
  release_content(app, id, sha);
  app.metrics.count_write(kind, "delete");
  return ok_status();
}

void release_content(App& app, const std::string& id, const std::string& sha256) {
  ArtifactStore files(artifact_root(app.opts));
  files.discard_upload(id);
  // The empty content stays whatever names it: an empty artifact publishes it before its record
  // says ready, and a delete of another must not take it away in between.
  constexpr const char* kEmptySha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
  if (sha256.empty() || sha256 == kEmptySha256) return;
  auto content = files.content_lock();
  auto named = content_named(app.store, sha256, id);
  if (named && !*named) files.remove_content(sha256);
}

}  // namespace gpurent
