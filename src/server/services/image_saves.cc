#include "server/services/image_saves.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "exec/container.h"
#include "model/image.h"
#include "model/job.h"
#include "model/job_state.h"
#include "server/services/artifact_store.h"
#include "server/services/record_faults.h"

namespace gpurent {

namespace {

namespace fs = std::filesystem;

std::string taken_for(const std::string& dir, const std::string& image_id) { return dir + "/" + image_id + ".save.taken"; }

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

// The image id a job's request file holds ("" when there is none).
std::string request_owner(const std::string& path) {
  std::string inside;
  if (FILE* f = std::fopen(path.c_str(), "r")) {
    char buf[96] = {};
    inside.assign(buf, std::fread(buf, 1, sizeof(buf) - 1, f));
    std::fclose(f);
  }
  return inside.substr(0, inside.find('\n'));
}

// Writes the request durably and at once (a temporary name, then a rename): the script reads
// either nothing or the whole id.
Status write_request(const std::string& dir, const std::string& path, const std::string& image_id) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  ::chmod(dir.c_str(), 0700);
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Error::make(Code::kUnavailable, "cannot write " + tmp);
  const std::string line = image_id + "\n";
  const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) return Error::make(Code::kUnavailable, "cannot write " + path);
  return ok_status();
}

}  // namespace

std::string image_saves_dir(const std::string& store_root) { return store_root + "/saves"; }

std::string save_request_for(const std::string& store_root, const std::string& job_id) {
  return image_saves_dir(store_root) + "/" + job_id + ".save-request";
}

void ImageSaves::observe() {
  const std::string dir = image_saves_dir(s_.store_root);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  std::map<std::string, Hashed> seen;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string file = it->path().filename().string();
    if (saving_ && !file.empty() && file[0] != '.') {  // files of a save that is over: gone
      // A request is named by its job and holds its image's id; the other files are named by the image.
      const std::string owner = file.find(".save-request") != std::string::npos ? request_owner(it->path().string())
                                                                                : file.substr(0, file.find('.'));
      if (!saving_->count(owner)) {
        ::unlink(it->path().c_str());
        continue;
      }
    }
    static const std::string kDone = ".save.done";
    if (file.size() <= kDone.size() || file.compare(file.size() - kDone.size(), kDone.size(), kDone) != 0) continue;
    const std::string id = file.substr(0, file.size() - kDone.size());
    if (auto h = hashed_.find(id); h != hashed_.end()) {
      seen[id] = h->second;
      continue;
    }
    auto done = read_save_done(it->path().string());
    if (!done || !done->ok) continue;
    Hashed h;
    const std::string archive = save_archive_for(dir, id);
    struct stat st {};
    if (::stat(archive.c_str(), &st) != 0) {
      h.error = "the archive " + archive + " is not there";
    } else if (st.st_size > s_.max_bytes) {
      h.bytes = st.st_size;
      h.too_big = true;
    } else if (auto sum = ArtifactStore::file_sha256(archive); !sum) {
      h.error = sum.error().message;
    } else {
      h.sha256 = *sum;
      h.bytes = st.st_size;
    }
    seen[id] = h;
  }
  hashed_ = std::move(seen);  // answers no longer there (finished) are forgotten
}

Status ImageSaves::sync(StoreTx& tx, TimeMs now) {
  auto saving = list_all(tx, "images", {{"state", "saving"}});
  if (!saving) return saving.error();
  const std::string dir = image_saves_dir(s_.store_root);
  saving_.emplace();
  for (const Record& r : *saving) saving_->insert(r.id);
  for (Record r : *saving) {
    auto i = decode_record(r, decode_image, "it cannot be saved");
    if (!i) continue;  // reported by decode_record
    if (!i->source) continue;
    const std::string& job_id = i->source->job_id;
    std::optional<Message> failure;
    bool ready = false;
    bool name_only = false;  // its digest named now; published and ready at the next tick
    std::string sha;
    int64_t bytes = 0;
    auto job = tx.get("jobs", job_id);
    std::optional<JobStatus> st;
    if (job)
      if (auto s = stored_job_status(job->body)) st = *s;
    const bool running = st && st->state == JobState::kRunning;
    const Message stopped = Message("image.save.stopped").arg("instance", i->source->instance);
    if (auto done = read_save_done(save_done_for(dir, r.id))) {
      if (!done->ok) {  // a commit cut short by the stop says why better than podman does
        failure = running ? Message("image.save.failed").arg("why", verbatim(done->error)) : stopped;
      } else if (!i->sha256.empty()) {
        // Checked and named by an earlier tick: a delete of another record with this content keeps
        // the file from then on, so it is published now (or was, by a tick a crash or a change of
        // leader undid: the content is there, the archive gone) and the image is ready.
        ready = true, sha = i->sha256, bytes = i->size_bytes;
      } else {
        auto h = hashed_.find(r.id);
        if (h == hashed_.end()) continue;  // observe() hashes it first
        if (!h->second.error.empty())
          failure = Message("image.save.unreadable").arg("why", verbatim(h->second.error));
        else if (h->second.too_big)
          failure = Message("image.save.too_big")
                        .arg("size", std::to_string(h->second.bytes))
                        .arg("max", std::to_string(s_.max_bytes));
        else if (h->second.sha256 != done->sha256 || h->second.bytes != done->bytes)
          failure = Message("image.save.digest").arg("actual", h->second.sha256).arg("expected", done->sha256);
        else if (h->second.bytes > s_.max_bytes)
          failure = Message("image.save.too_big").arg("size", std::to_string(h->second.bytes)).arg("max", std::to_string(s_.max_bytes));
        else if (auto used = tx.tenant_stored_bytes(r.tenant_id); !used)
          return used.error();
        else if (*used + h->second.bytes > s_.tenant_bytes)
          failure = Message("image.save.tenant_full")
                        .arg("size", std::to_string(h->second.bytes))
                        .arg("used", std::to_string(*used))
                        .arg("limit", std::to_string(s_.tenant_bytes));
        else
          name_only = true, sha = h->second.sha256, bytes = h->second.bytes;
      }
    } else {
      if (!running) {
        failure = stopped;
      } else {
        const std::string req = save_request_for(s_.store_root, job_id);
        if (!exists(req) && !exists(taken_for(dir, r.id)))
          if (auto w = write_request(dir, req, r.id); !w)
            spdlog::error("{}", json({{"event", "image_save_request_failed"}, {"image", r.id}, {"error", w.error().message}}).dump());
        continue;
      }
    }
    if (name_only) {  // the digest named (and its size counted) first, in a tick of its own
      i->sha256 = sha;
      i->size_bytes = i->received_bytes = bytes;
      r.body = to_json(*i);
      r.updated_at = now;
      if (auto s = tx.update(r); !s) return s;
      continue;
    }
    if (ready) {
      ArtifactStore files(s_.store_root);
      auto content = files.content_lock();
      // The same content already in the store (a second save of an unchanged container): kept as it is.
      if (exists(files.content_path(sha))) {
        ::unlink(save_archive_for(dir, r.id).c_str());
      } else if (auto p = files.publish_file(save_archive_for(dir, r.id), sha); !p) {
        // The archive went since it was hashed: this save failed (not the tick, every tick after).
        ready = false;
        failure = Message("image.save.unreadable").arg("why", verbatim(p.error().message));
      }
    }
    if (ready) {
      i->sha256 = sha;
      i->size_bytes = i->received_bytes = bytes;
      i->ready_at = now;
      i->state = ImageState::kReady;
      i->failure.reset();
      i->error.clear();
    } else {  // a failed save names no content and counts no storage (a digest named a pass before)
      i->state = ImageState::kFailed;
      i->failure = failure;
      i->error = render_en(*failure);
      i->sha256.clear();
      i->size_bytes = i->received_bytes = 0;
    }
    // Its files stay until observe() finds the image no longer saving — after this is committed:
    // were the tick rolled back, the next one finds the answer and does this again.
    r.state = index_of(*i).state;
    r.body = to_json(*i);
    r.updated_at = now;
    if (auto s = tx.update(r); !s) return s;
    if (auto s = tx.append_audit({now, "image-saver", ready ? "save" : "save-failed", "images", r.id,
                                  r.name + (ready ? " sha256:" + sha : " " + i->error)});
        !s)
      return s;
    spdlog::info("{}", json({{"event", ready ? "image_saved" : "image_save_failed"}, {"image", r.id}, {"job", job_id},
                             {"bytes", bytes}, {"error", i->error}})
                           .dump());
  }
  return ok_status();
}

}  // namespace gpurent
