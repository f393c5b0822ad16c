// artifacts upload/list/show/delete: a project's artifacts (model weights, datasets), files the
// server keeps by SHA-256 and mounts read-only into its jobs' containers.
//
// `upload` checks that the project can be read, reads FILE once to learn its size and SHA-256
// (streaming: a multi-GB file is never held in memory), creates the artifact, then sends the
// content in chunks of at most 1 MiB (the server's body limit) with ?offset=, each read from the
// file when it is sent. When the name is taken by an artifact that is still "uploading" the same
// digest and size, it resumes at the server's received_bytes; when that artifact is already
// "ready" with this content there is nothing to send. A chunk refused with 409 (the server
// expected another offset, e.g. after a lost answer) makes it read the artifact again and go on
// from its received_bytes, a few times at most. Progress goes to standard error when that is a
// terminal. The upload itself is cli/upload.h, shared with `images import`; list, show and
// delete are cli/object_verbs.h's, shared with images and secrets. The CLI's own sentences are
// message codes (src/messages/<lang>.json) rendered in the locale's language (LC_ALL,
// LC_MESSAGES, LANG).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/object_verbs.h"
#include "cli/output.h"
#include "cli/upload.h"
#include "cli/views.h"
#include "core/message.h"

namespace gpurent {

void add_artifact_commands(CLI::App& app, CliContext& ctx);  // called by run_cli (cli.cc)

namespace {

struct UploadOpts {
  std::string project, name, file, kind, description;
  int64_t chunk_bytes = kMaxUploadChunkBytes;
};

std::string artifacts_path(const std::string& project) { return "/projects" + seg(project) + "/artifacts"; }
std::string artifact_path(const std::string& project, const std::string& name) {
  return artifacts_path(project) + seg(name);
}

// The whole artifact, identity first; sizes also in MiB/GiB, an upload's progress in percent.
void print_artifact(std::ostream& out, const json& a) {
  json view = a;
  const int64_t size = doc_int(a, "size_bytes");
  if (size >= 0) view["size_bytes"] = std::to_string(size) + " (" + human_bytes(size) + ")";
  const int64_t received = doc_int(a, "received_bytes");
  if (received >= 0 && doc_text(a, "state") != "ready")
    view["received_bytes"] = std::to_string(received) + " (" + percent_of(received, size) + "%)";
  print_generic_detail(out, view,
                       {"project", "kind", "state", "size_bytes", "received_bytes", "sha256", "description",
                        "uploaded_by", "ready_at"});
}

// `list`'s answer: the artifacts by name (a note on standard error when there are none), then the
// tenant's artifact storage in use.
void print_artifacts(CliContext& ctx, std::ostream& out, const json& doc, const std::string& lang) {
  const json& items = at_path(doc, "items");
  if (!items.is_array() || items.empty()) {
    ctx.err() << render(Message("cli.artifacts.none"), lang) << '\n';
  } else {
    std::vector<json> sorted(items.begin(), items.end());
    std::sort(sorted.begin(), sorted.end(),
              [](const json& a, const json& b) { return doc_text(a, "name") < doc_text(b, "name"); });
    // RECEIVED: an unfinished upload's progress.
    Table t({{"NAME"},
             {"KIND"},
             {"STATE"},
             {"SIZE", Align::kRight},
             {"RECEIVED", Align::kRight},
             {"SHA256"},
             {"UPLOADED BY"}});
    for (const auto& a : sorted) {
      const int64_t size = doc_int(a, "size_bytes"), received = doc_int(a, "received_bytes");
      std::string got;
      if (doc_text(a, "state") != "ready" && received >= 0)
        got = human_bytes(received) + " (" + percent_of(received, size) + "%)";
      t.add_row({doc_text(a, "name"), doc_text(a, "kind"), doc_text(a, "state"), human_bytes(size), got,
                 short_digest(doc_text(a, "sha256")), doc_text(a, "uploaded_by")});
    }
    t.print(out);
  }
  const int64_t used = doc_int(doc, "used_bytes"), limit = doc_int(doc, "limit_bytes");
  if (used >= 0 && limit >= 0)
    out << render(Message("cli.artifacts.usage").arg("used", human_bytes(used)).arg("limit", human_bytes(limit)),
                  lang)
        << '\n';
}

// The chunked upload (cli/upload.h) of FILE as artifact NAME of PROJECT.
int upload(CliContext& ctx, const UploadOpts& o) {
  UploadPlan plan;
  plan.file = o.file;
  plan.name = o.name;
  plan.chunk_bytes = o.chunk_bytes;
  // Reading the project's artifacts is the cheapest call that needs the project, address and token.
  plan.check_path = plan.create_path = artifacts_path(o.project);
  plan.create_body = [&o](const FileDigest& f) {
    json body = {{"name", o.name}, {"sha256", f.sha256}, {"size_bytes", f.size}};
    if (!o.kind.empty()) body["kind"] = o.kind;
    if (!o.description.empty()) body["description"] = o.description;
    return body;
  };
  plan.lookup_path = artifact_path(o.project, o.name);
  plan.content_suffix = "/content";
  plan.taken = [&o](const json&) {
    return Message("cli.artifacts.name_taken").arg("project", o.project).arg("name", o.name);
  };
  plan.already = Message("cli.artifacts.already_uploaded").arg("project", o.project).arg("name", o.name);
  plan.bad_answer = Message("cli.artifacts.bad_answer");
  plan.print = print_artifact;
  return run_upload(ctx, plan);
}

}  // namespace

void add_artifact_commands(CLI::App& app, CliContext& ctx) {
  auto* artifacts = app.add_subcommand(
      "artifacts", "a project's artifacts: files (model weights, datasets) kept by SHA-256 for its jobs");
  artifacts->require_subcommand(1);

  auto uo = std::make_shared<UploadOpts>();
  auto* up = artifacts->add_subcommand(
      "upload", "upload a file as an artifact in 1 MiB chunks (resumes an unfinished upload of the same file)");
  up->add_option("project", uo->project, "project id or name")->required();
  up->add_option("name", uo->name, "artifact name (lowercase letters, digits and '-', 1-63)")->required();
  up->add_option("file", uo->file, "the file to upload")->required();
  up->add_option("--kind", uo->kind, "model, dataset or file (default file)")
      ->check(CLI::IsMember({"model", "dataset", "file"}));
  up->add_option("--description", uo->description, "what the artifact is (1-512 characters)");
  up->add_option("--chunk-bytes", uo->chunk_bytes, "bytes per request, 1 to 1048576 (default 1048576)")
      ->check(CLI::Range(int64_t{1}, kMaxUploadChunkBytes));
  up->callback([&ctx, uo] {
    ctx.action = [&ctx, uo] { return upload(ctx, *uo); };
  });

  const ObjectVerbs verbs{.kind = "artifacts",
                          .collection = artifacts_path,
                          .path = [](const ObjectRef& a) { return artifact_path(a.project, a.name); }};
  add_list_verb(*artifacts, ctx, verbs, "list a project's artifacts and the tenant's artifact storage",
                [&ctx](std::ostream& out, const json& doc, const std::string& lang) {
                  print_artifacts(ctx, out, doc, lang);
                });
  add_show_verb(*artifacts, ctx, verbs, "print an artifact: digest, size, state, who uploaded it", "artifact name",
                [](std::ostream& out, const json& a, const std::string&) { print_artifact(out, a); });
  add_delete_verb(*artifacts, ctx, verbs,
                  "delete an artifact (its file goes when no other artifact has the same content)", "artifact name",
                  [](const ObjectRef& a, const std::string& lang) {
                    return render(Message("cli.artifacts.deleted").arg("name", a.name).arg("project", a.project),
                                  lang);
                  });
}

}  // namespace gpurent
