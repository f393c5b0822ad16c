#include "cli/upload.h"

#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "cli/output.h"

namespace gpurent {

std::string cli_language(const CliContext& ctx) {
  auto get = [&](const char* name) -> std::optional<std::string> { return ctx.env() ? ctx.env()(name) : std::nullopt; };
  const auto all = get("LC_ALL"), messages = get("LC_MESSAGES"), lang = get("LANG");
  const std::string tag = locale_language(all ? all->c_str() : nullptr, messages ? messages->c_str() : nullptr,
                                          lang ? lang->c_str() : nullptr);
  const std::string l = match_language(tag);
  return l.empty() ? "en" : l;
}

int64_t doc_int(const json& doc, const char* key, int64_t fallback) {
  const json& v = at_path(doc, key);
  return v.is_number_integer() ? v.get<int64_t>() : fallback;
}

std::string doc_text(const json& doc, const char* key) { return cell_text(at_path(doc, key)); }

std::string human_bytes(int64_t n) {
  if (n < 0) return "";
  static const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (n < 1024) return std::to_string(n) + " B";
  int64_t unit = 1024;
  size_t u = 0;
  while (u + 1 < std::size(kUnits) && n / unit >= 1024) unit *= 1024, ++u;
  int64_t whole = n / unit;
  int64_t tenths = ((n % unit) * 10 + unit / 2) / unit;  // the rest in tenths of a unit (unit <= 2^50)
  if (tenths == 10) ++whole, tenths = 0;
  if (whole == 1024 && u + 1 < std::size(kUnits)) whole = 1, ++u;  // 1048575 B: "1 MiB", not "1024 KiB"
  return std::to_string(whole) + (tenths ? "." + std::to_string(tenths) : std::string()) + " " + kUnits[u];
}

std::string percent_of(int64_t part, int64_t whole) {
  if (whole <= 0 || part < 0) return "";
  return std::to_string(static_cast<int64_t>(static_cast<unsigned __int128>(part) * 100 / whole));
}

std::string short_digest(const std::string& hex) { return hex.size() > 12 ? hex.substr(0, 12) + "…" : hex; }

namespace {

// 409s in a row (no chunk accepted in between) before the upload gives up.
constexpr int kMaxConflicts = 3;

// ---- the local file ----

struct LocalFile {
  std::ifstream in;
  FileDigest digest;
};

Error file_error(const std::string& lang, Message m) { return Error::make(Code::kInvalid, render(m, lang)); }
Error unreadable(const std::string& lang, const std::string& path, int err) {
  return file_error(lang, Message("cli.artifacts.file_unreadable").arg("file", path).arg("reason", std::strerror(err)));
}

// Opens `path`, which must be a regular file (the chunks are read from it as they are sent).
Result<std::unique_ptr<LocalFile>> open_file(const std::string& path, const std::string& lang) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return unreadable(lang, path, errno);
  if (S_ISDIR(st.st_mode)) return file_error(lang, Message("cli.artifacts.file_is_directory").arg("file", path));
  if (!S_ISREG(st.st_mode)) return file_error(lang, Message("cli.artifacts.file_not_regular").arg("file", path));
  auto f = std::make_unique<LocalFile>();
  errno = 0;
  f->in.open(path, std::ios::binary);
  if (!f->in) return unreadable(lang, path, errno ? errno : EACCES);
  return f;
}

// Reads the file once, `buf` at a time, for its size and SHA-256.
Status digest_file(LocalFile& f, const std::string& path, const std::string& lang, std::vector<char>& buf) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> md(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!md || EVP_DigestInit_ex(md.get(), EVP_sha256(), nullptr) != 1)
    return Error::make(Code::kInternal, "SHA-256 is not available (OpenSSL)");
  f.digest.size = 0;
  while (true) {
    errno = 0;
    f.in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const std::streamsize got = f.in.gcount();
    if (got > 0) {
      EVP_DigestUpdate(md.get(), buf.data(), static_cast<size_t>(got));
      f.digest.size += got;
    }
    if (f.in.bad()) return unreadable(lang, path, errno ? errno : EIO);
    if (!f.in) break;  // end of file
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(md.get(), digest, &len);
  static constexpr char kHex[] = "0123456789abcdef";
  f.digest.sha256.clear();
  for (unsigned int i = 0; i < len; ++i) {
    f.digest.sha256 += kHex[digest[i] >> 4];
    f.digest.sha256 += kHex[digest[i] & 15];
  }
  return ok_status();
}

// Bytes [offset, offset + n) of the file into buf; false when the file no longer has them.
bool read_chunk(LocalFile& f, int64_t offset, int64_t n, std::vector<char>& buf) {
  f.in.clear();
  f.in.seekg(static_cast<std::streamoff>(offset));
  if (!f.in) return false;
  f.in.read(buf.data(), static_cast<std::streamsize>(n));
  return f.in.gcount() == static_cast<std::streamsize>(n);
}

}  // namespace

int run_upload(CliContext& ctx, const UploadPlan& plan) {
  const std::string lang = cli_language(ctx);
  const bool table = ctx.format() == OutputFormat::kTable;
  const bool tty = &ctx.err() == &std::cerr && isatty(STDERR_FILENO);
  auto note = [&](const Message& m) {
    if (table) ctx.err() << render(m, lang) << '\n';
  };
  auto emit = [&](const json& record) { return ctx.emit(record, [&](std::ostream& out) { plan.print(out, record); }); };

  auto opened = open_file(plan.file, lang);
  if (!opened) return ctx.fail(opened.error());
  LocalFile& file = **opened;
  const FileDigest& digest = file.digest;

  int rc = kExitOk;
  ApiClient* c = ctx.client(&rc);
  if (!c) return rc;
  // Before hashing, which takes minutes for a large file: a wrong parent, address or token fails now.
  if (auto pre = c->get(plan.check_path); !pre) return ctx.fail(pre.error());

  std::vector<char> buf(static_cast<size_t>(std::max<int64_t>(plan.chunk_bytes, kMaxUploadChunkBytes)));
  if (tty) ctx.err() << render(Message("cli.artifacts.hashing").arg("file", plan.file), lang) << '\n';
  if (auto hashed = digest_file(file, plan.file, lang, buf); !hashed) return ctx.fail(hashed.error());

  bool progress_shown = false;  // a progress line without its line break is on the terminal
  // Prints an ApiError or a local Error, on a line of its own.
  auto fail = [&](const auto& e) {
    if (progress_shown) ctx.err() << '\n', progress_shown = false;
    return ctx.fail(e);
  };
  // A record of this name that is not this file: refused in the caller's words.
  auto name_taken = [&](const json& r) {
    Message m = plan.taken(r);
    m.arg("state", doc_text(r, "state"))
        .arg("size", doc_text(r, "size_bytes"))
        .arg("sha256", doc_text(r, "sha256"))
        .arg("file", plan.file)
        .arg("file_size", std::to_string(digest.size))
        .arg("file_sha256", digest.sha256);
    return fail(Error::make(Code::kConflict, render(m, lang)));
  };
  auto same_content = [&](const json& r) {
    return doc_text(r, "sha256") == digest.sha256 && doc_int(r, "size_bytes") == digest.size &&
           (!plan.also_same || plan.also_same(r));
  };

  json rec;
  if (auto created = c->post(plan.create_path, plan.create_body(digest))) {
    rec = std::move(created).value();
  } else if (created.error().status == 409) {  // the name is taken: ours to resume, or another file
    auto got = c->get(plan.lookup_path);
    if (!got) return ctx.fail(got.error());
    rec = std::move(got).value();
    if (!same_content(rec) || (doc_text(rec, "state") != "uploading" && doc_text(rec, "state") != "ready"))
      return name_taken(rec);
    if (doc_text(rec, "state") == "ready") {
      note(Message(plan.already).arg("sha256", digest.sha256));
      return emit(rec);
    }
    note(Message("cli.artifacts.resuming")
             .arg("name", plan.name)
             .arg("received", human_bytes(doc_int(rec, "received_bytes")))
             .arg("size", human_bytes(digest.size)));
  } else {
    return ctx.fail(created.error());
  }
  const std::string path = plan.record_path ? plan.record_path(rec) : plan.lookup_path;

  std::string shown;  // the last progress percentage printed
  auto progress = [&](int64_t sent, bool done) {
    if (!tty) return;
    const std::string pct = percent_of(sent, digest.size);
    if (pct == shown && !done && progress_shown) return;
    shown = pct;
    progress_shown = !done;
    ctx.err() << '\r'
              << render(Message("cli.artifacts.progress")
                            .arg("name", plan.name)
                            .arg("sent", human_bytes(sent))
                            .arg("size", human_bytes(digest.size))
                            .arg("percent", pct),
                        lang)
              << "\x1b[K" << (done ? "\n" : "") << std::flush;
  };
  auto bad_answer = [&](const json& r) {
    return fail(Error::make(Code::kInternal, render(Message(plan.bad_answer)
                                                        .arg("name", plan.name)
                                                        .arg("received", doc_text(r, "received_bytes"))
                                                        .arg("size", std::to_string(digest.size)),
                                                    lang)));
  };

  int conflicts = 0;
  int64_t offset = doc_int(rec, "received_bytes");
  while (doc_text(rec, "state") != "ready") {
    if (offset < 0 || offset >= digest.size) {
      // Every byte is there but the record is not ready (or the answer makes no sense): the
      // server's word is its present state.
      if (offset != digest.size || ++conflicts > kMaxConflicts) return bad_answer(rec);
      auto got = c->get(path);
      if (!got) return fail(got.error());
      rec = std::move(got).value();
      if (!same_content(rec)) return name_taken(rec);
      offset = doc_int(rec, "received_bytes");
      if (doc_text(rec, "state") != "ready" && offset == digest.size) return bad_answer(rec);
      continue;
    }
    progress(offset, false);
    const int64_t n = std::min(plan.chunk_bytes, digest.size - offset);
    if (!read_chunk(file, offset, n, buf))
      return fail(file_error(
          lang, Message("cli.artifacts.file_changed").arg("file", plan.file).arg("size", std::to_string(digest.size))));
    auto sent = c->put_bytes(path + plan.content_suffix, {{"offset", std::to_string(offset)}},
                             std::string_view(buf.data(), static_cast<size_t>(n)));
    if (sent) {
      rec = std::move(sent).value();
      const int64_t next = doc_int(rec, "received_bytes");
      if (doc_text(rec, "state") != "ready" && (next <= offset || next > digest.size)) return bad_answer(rec);
      offset = next;
      conflicts = 0;
      continue;
    }
    ApiError e = sent.error();
    if (e.status == 409) {  // another offset expected (or ready already): ask where the server is
      if (++conflicts > kMaxConflicts) {
        e.hint = render(Message("cli.artifacts.conflicts_hint")
                            .arg("name", plan.name)
                            .arg("offset", std::to_string(offset))
                            .arg("times", std::to_string(conflicts)),
                        lang);
        return fail(e);
      }
      auto got = c->get(path);
      if (!got) return fail(got.error());
      rec = std::move(got).value();
      if (!same_content(rec)) return name_taken(rec);
      offset = doc_int(rec, "received_bytes");
      continue;
    }
    // The last chunk refused (422 on sha256): what arrived is not what was hashed.
    if (e.status == 422 && offset + n == digest.size && e.hint.empty())
      e.hint = render(Message("cli.artifacts.digest_hint").arg("file", plan.file), lang);
    // A server started with a smaller --max-body-bytes (or a proxy's limit) refuses 1 MiB chunks.
    if (e.status == 413 && e.hint.empty())
      e.hint = render(Message("cli.artifacts.chunk_too_large_hint").arg("bytes", std::to_string(n)), lang);
    return fail(e);
  }
  progress(digest.size, true);
  return emit(rec);
}

}  // namespace gpurent
