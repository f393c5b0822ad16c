// Internal to the CLI: the chunked upload of a local file that `gpurent artifacts upload` and
// `gpurent images import` share (the server's side: server/api/uploads.h), and the small
// formatting helpers both command groups print with.
//
// run_upload opens FILE (a regular file: the chunks are read from it as they are sent), reads a
// cheap route that needs the address, the token and the parent (so that those fail before the
// minutes a large file takes to hash), reads FILE once for its size and SHA-256 (streaming, one
// chunk in memory), creates the record, then sends the content in chunks with ?offset=. When the
// name is taken (409 on create) by a record that is still "uploading" the same digest and size, it
// resumes at the server's received_bytes; when that record is already "ready" with this content
// there is nothing to send (a note, exit 0); other content is refused in the caller's words. A
// chunk refused with 409 makes it read the record again and go on from its received_bytes, a few
// times in a row at most; 413 and a 422 on the last chunk (the digest) come with hints. Progress
// goes to standard error when that is a terminal. Not thread-safe (one CliContext per run).
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

#include "cli/commands.h"
#include "core/message.h"

namespace gpurent {

// The most one chunk may hold: the server's request body limit (serve --max-body-bytes default).
inline constexpr int64_t kMaxUploadChunkBytes = 1024 * 1024;

// The catalogue language of the locale (LC_ALL, LC_MESSAGES, LANG: the first set), "en" by default.
std::string cli_language(const CliContext& ctx);

// doc[key] when it is an integer, else `fallback`; doc[key] as text ("" when missing).
int64_t doc_int(const json& doc, const char* key, int64_t fallback = -1);
std::string doc_text(const json& doc, const char* key);

// Bytes for people: "512 B", "1.5 KiB", "2.5 MiB", "64 GiB" (one decimal, rounded half up, no
// ".0"); "" for a negative count.
std::string human_bytes(int64_t n);
// part of whole as a whole percentage, rounded down (so 100 means all); "" when it makes no sense.
std::string percent_of(int64_t part, int64_t whole);
// A SHA-256's first 12 hex digits and "…" (a shorter text as it is).
std::string short_digest(const std::string& hex);

// The local file's size and SHA-256 (lowercase hex), once read.
struct FileDigest {
  int64_t size = 0;
  std::string sha256;
};

// What to upload where, and the caller's words for its kind of record. Paths are below /api/v1.
struct UploadPlan {
  std::string file;  // the local file
  std::string name;  // the record's name, in notes, progress and hints
  int64_t chunk_bytes = kMaxUploadChunkBytes;
  std::string check_path;   // GET before hashing
  std::string create_path;  // POST create_body(digest): 201 with the record, or 409 when the name is taken
  std::function<json(const FileDigest&)> create_body;
  std::string lookup_path;  // GET: the record that took the name (after the create's 409)
  // Where the record is read again (its chunks go to that + content_suffix, with ?offset=); empty:
  // lookup_path.
  std::function<std::string(const json& record)> record_path;
  std::string content_suffix;
  // Optional: what else a record of the same digest and size must match to be this upload.
  std::function<bool(const json& record)> also_same;
  // The error for a name taken by other content: run_upload adds the record's {state}, {size} and
  // {sha256}, and {file}, {file_size} and {file_sha256}.
  std::function<Message(const json& record)> taken;
  // The note for a record that holds this file already (run_upload adds {sha256}), and the error
  // for an answer whose received_bytes does not continue the upload (it adds {name}, {received},
  // {size}).
  Message already;
  Message bad_answer;
  // The record in the table format (-o json/yaml print it as the server sent it).
  std::function<void(std::ostream&, const json& record)> print;
};

// Runs the upload; prints the ready record, or the error. Returns the exit code.
int run_upload(CliContext& ctx, const UploadPlan& plan);

}  // namespace gpurent
