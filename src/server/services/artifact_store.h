// The content-addressed store of artifacts (model/artifact.h, docs/resources/artifacts.md): one
// folder, `<root>/sha256/<64 hex>` read-only files named by their SHA-256, and
// `<root>/uploads/<artifact id>` files being uploaded. With the Slurm executor the nodes read the
// same folder at the same path (a shared filesystem, like the jobs' output folder).
//
// An upload arrives in chunks at increasing offsets (the HTTP front caps a body at 1 MiB); the
// digest is computed as they arrive (its state kept beside the file), so the last chunk is
// answered at once whatever the size. Each chunk is on disk (fdatasync) before the caller records
// it: after a crash the record's received_bytes is what was acknowledged, and a chunk written
// but not recorded is overwritten by the client's retry. When the last byte is there and its
// digest is the declared one, the file moves to sha256/<hex> (replacing the file of that name, if
// any: the same content, or a copy changed after its upload, which this repairs).
//
// Thread-safe: chunks of one artifact are serialised by upload_lock(id); publishing and removing
// content files by content_lock() — across this process's threads and across the servers that
// share the folder (FolderLock).
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "server/server.h"
#include "store/store.h"

namespace gpurent {

// The store's folder, absolute: --artifact-dir, else "<db path>.artifacts".
std::string artifact_root(const ServerOptions& o);

// A lock held across this process's threads (a mutex) and across the processes that share the
// folder: an open-file-description write lock (fcntl F_OFD_SETLKW) on a file under <root>/locks/
// (a file system that supports them; NFS not tested here). Where the lock file cannot be opened
// or locked, the mutex alone (logged). Released when destroyed.
class FolderLock {
 public:
  FolderLock(std::mutex& mu, const std::string& path);
  ~FolderLock();
  FolderLock(FolderLock&& o) noexcept;
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;
  FolderLock& operator=(FolderLock&&) = delete;
  bool shared() const { return fd_ >= 0; }  // the file lock is held too

 private:
  std::unique_lock<std::mutex> mu_;
  int fd_ = -1;
};

class ArtifactStore {
 public:
  explicit ArtifactStore(std::string root) : root_(std::move(root)) {}
  // Creates the folders (sha256/ 0755, uploads/ 0700) when missing.
  Status init() const;
  const std::string& root() const { return root_; }
  std::string content_path(const std::string& sha256) const { return root_ + "/sha256/" + sha256; }
  std::string upload_path(const std::string& artifact_id) const { return root_ + "/uploads/" + artifact_id; }

  // Writes `data` at `offset` of the artifact's upload file (anything after it is dropped: an
  // earlier write nobody acknowledged), on disk before it returns, and carries the digest on.
  // When offset + data.size() == total: returns the SHA-256 (lowercase hex) of the whole file.
  // A conflict when the file holds fewer than `offset` bytes (the upload must start again).
  Result<std::optional<std::string>> write_chunk(const std::string& artifact_id, int64_t offset, std::string_view data,
                                                 int64_t total) const;
  // Moves a complete upload to sha256/<hex> (0444), durably, over the file there if any (the same
  // content, or one changed since its upload: repaired).
  Status publish(const std::string& artifact_id, const std::string& sha256) const;
  // The same for any file of the store's filesystem (a built image).
  Status publish_file(const std::string& path, const std::string& sha256) const;
  // A file's SHA-256 (lowercase hex), read in full.
  static Result<std::string> file_sha256(const std::string& path);
  // Drops an upload and its digest state (a digest mismatch, a deleted artifact).
  void discard_upload(const std::string& artifact_id) const;
  // Removes a content file nobody names any more.
  void remove_content(const std::string& sha256) const;
  // Bytes free for the store's files (statvfs); -1 when unknown.
  int64_t free_bytes() const;

  // One artifact's chunks one at a time (two clients of the same upload, through two servers).
  FolderLock upload_lock(const std::string& artifact_id) const;
  // Publishing and removing content files (an upload finishing while another artifact with the
  // same content is deleted). Taken after an upload lock, never before one.
  FolderLock content_lock() const;

 private:
  std::string root_;
};

}  // namespace gpurent
