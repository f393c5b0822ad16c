// images list/show/delete/build/import: the container images jobs run in (docs/resources/images.md).
// Operators' are public; a tenant user's are the tenant's own. An image is built by the server
// from a recipe of Debian packages (`build`: queued until a server started with --image-builds
// builds it) or uploaded as an archive (`import`: the chunked upload of cli/upload.h, shared with
// `artifacts upload`: streaming SHA-256, chunks with ?offset=, resuming an unfinished upload of the
// same file); list, show and delete are cli/object_verbs.h's. A job's `image` names one by its
// name. The CLI's own sentences are message codes (src/messages/<lang>.json) rendered in the
// locale's language.
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

void add_image_commands(CLI::App& app, CliContext& ctx);  // called by run_cli (cli.cc)

namespace {

// `show` prints this many installed packages (-o json all of them).
constexpr size_t kShownPackages = 20;

std::string image_path(const std::string& ref) { return "/images" + seg(ref); }

// The whole image, identity and state first; the size also in MiB/GiB, an upload's progress in
// percent, then the installed packages one per line (the first kShownPackages).
void print_image(std::ostream& out, const json& i, const std::string& lang) {
  if (!i.is_object()) return print_generic_detail(out, i);
  json view = i;
  const int64_t size = doc_int(i, "size_bytes");
  const std::string state = doc_text(i, "state");
  if (size > 0)
    view["size_bytes"] = std::to_string(size) + " (" + human_bytes(size) + ")";
  else
    view.erase("size_bytes");  // a recipe not built yet
  const int64_t received = doc_int(i, "received_bytes");
  if (state == "uploading" && received >= 0)
    view["received_bytes"] = std::to_string(received) + " (" + percent_of(received, size) + "%)";
  else
    view.erase("received_bytes");
  for (const char* key : {"sha256", "tenant_id", "error"})
    if (doc_text(i, key).empty()) view.erase(key);
  view.erase("packages");
  print_generic_detail(out, view,
                       {"visibility", "state", "error", "format", "reference", "size_bytes", "received_bytes", "sha256",
                        "description", "recipe", "tenant_id", "created_by", "ready_at"});
  const json& packages = at_path(i, "packages");
  if (!packages.is_array() || packages.empty()) return;
  out << "packages (" << packages.size() << "):\n";
  for (size_t k = 0; k < packages.size() && k < kShownPackages; ++k)
    out << "  " << printable(cell_text(packages[k])) << '\n';
  if (packages.size() > kShownPackages)
    out << "  "
        << render(Message("cli.images.more_packages").arg("count", std::to_string(packages.size() - kShownPackages)),
                  lang)
        << '\n';
}

struct ImportOpts {
  std::string name, file, format, description;
  int64_t chunk_bytes = kMaxUploadChunkBytes;
};

// The chunked upload (cli/upload.h) of FILE as the archive of image NAME.
int import_image(CliContext& ctx, const ImportOpts& o) {
  const std::string lang = cli_language(ctx);
  UploadPlan plan;
  plan.file = o.file;
  plan.name = o.name;
  plan.chunk_bytes = o.chunk_bytes;
  // Listing the images is the cheapest call that needs the address and the token.
  plan.check_path = plan.create_path = "/images";
  plan.create_body = [&o](const FileDigest& f) {
    json body = {{"name", o.name}, {"archive", {{"format", o.format}, {"sha256", f.sha256}, {"size_bytes", f.size}}}};
    if (!o.description.empty()) body["description"] = o.description;
    return body;
  };
  plan.lookup_path = image_path(o.name);
  // By id once known: the name may also be a public image's.
  plan.record_path = [&o](const json& i) {
    const std::string id = doc_text(i, "id");
    return image_path(id.empty() ? o.name : id);
  };
  plan.content_suffix = "/archive";
  // Not a recipe's tarball, and the same format: the same bytes loaded another way are another image.
  plan.also_same = [&o](const json& i) { return !i.contains("recipe") && doc_text(i, "format") == o.format; };
  plan.taken = [&o](const json& i) {
    if (i.contains("recipe")) return Message("cli.images.name_taken_recipe").arg("name", o.name);
    return Message("cli.images.name_taken")
        .arg("name", o.name)
        .arg("format", doc_text(i, "format"))
        .arg("file_format", o.format);
  };
  plan.already = Message("cli.images.already_uploaded").arg("name", o.name);
  plan.bad_answer = Message("cli.images.bad_answer");
  plan.print = [&lang](std::ostream& out, const json& i) { print_image(out, i, lang); };
  return run_upload(ctx, plan);
}

struct BuildOpts {
  std::string name, suite, variant, description;
  std::vector<std::string> packages;
};

// POSTs the recipe; the answer is queued (or ready at once: the same recipe was built before).
int build_image(CliContext& ctx, const BuildOpts& o) {
  int rc = kExitOk;
  ApiClient* c = ctx.client(&rc);
  if (!c) return rc;
  json recipe = {{"packages", o.packages}};
  if (!o.suite.empty()) recipe["suite"] = o.suite;        // else the server's default, bookworm
  if (!o.variant.empty()) recipe["variant"] = o.variant;  // minbase
  json body = {{"name", o.name}, {"recipe", std::move(recipe)}};
  if (!o.description.empty()) body["description"] = o.description;
  auto r = c->post("/images", body);
  if (!r) return ctx.fail(r.error());
  const std::string lang = cli_language(ctx);
  const std::string state = doc_text(*r, "state");
  if (ctx.format() == OutputFormat::kTable && (state == "queued" || state == "building"))
    ctx.err() << render(Message("cli.images.build_queued").arg("name", o.name).arg("state", state), lang) << '\n';
  return ctx.emit(*r, [&](std::ostream& out) { print_image(out, *r, lang); });
}

// `list`'s answer: by name, a tenant's own before the public one of the same name (the one a
// job's `image` names); a note on standard error when there are none.
void print_images(CliContext& ctx, std::ostream& out, const json& doc, const std::string& lang) {
  const json& items = at_path(doc, "items");
  if (!items.is_array() || items.empty()) {
    ctx.err() << render(Message("cli.images.none"), lang) << '\n';
    return;
  }
  std::vector<json> sorted(items.begin(), items.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const json& a, const json& b) {
    const std::string na = doc_text(a, "name"), nb = doc_text(b, "name");
    if (na != nb) return na < nb;
    return doc_text(a, "visibility") == "tenant" && doc_text(b, "visibility") != "tenant";
  });
  Table t({{"NAME"},
           {"VISIBILITY"},
           {"STATE"},
           {"FORMAT"},
           {"SIZE", Align::kRight},
           {"SHA256"},
           {"PACKAGES", Align::kRight},
           {"REFERENCE"}});
  for (const auto& i : sorted) {
    const int64_t size = doc_int(i, "size_bytes");
    const json& packages = at_path(i, "packages");
    const size_t n = packages.is_array() ? packages.size() : 0;
    t.add_row({doc_text(i, "name"), doc_text(i, "visibility"), doc_text(i, "state"), doc_text(i, "format"),
               size > 0 ? human_bytes(size) : "", short_digest(doc_text(i, "sha256")), n ? std::to_string(n) : "",
               doc_text(i, "reference")});
  }
  t.print(out);
}

}  // namespace

void add_image_commands(CLI::App& app, CliContext& ctx) {
  auto* images = app.add_subcommand(
      "images", "container images jobs run in: built from Debian packages by the server, or imported archives");
  images->require_subcommand(1);

  const ObjectVerbs verbs{.kind = "images",
                          .in_project = false,
                          .name_arg = "ref",
                          .collection = [](const std::string&) { return std::string("/images"); },
                          .path = [](const ObjectRef& i) { return image_path(i.name); }};
  add_list_verb(*images, ctx, verbs, "list the public images and the tenant's own",
                [&ctx](std::ostream& out, const json& doc, const std::string& lang) {
                  print_images(ctx, out, doc, lang);
                });
  add_show_verb(*images, ctx, verbs, "print an image: state, reference, digest, installed packages",
                "image name or id (the tenant's own first, then a public one)", print_image);
  add_delete_verb(*images, ctx, verbs,
                  "delete an image (its content goes when nothing else has the same; not while it is being built)",
                  "image name or id", [](const ObjectRef& i, const std::string& lang) {
                    return render(Message("cli.images.deleted").arg("name", i.name), lang);
                  });

  auto bo = std::make_shared<BuildOpts>();
  auto* build = images->add_subcommand(
      "build", "add an image of Debian packages that the server builds (a server started with --image-builds)");
  build->add_option("name", bo->name, "image name (lowercase letters, digits and '-', 1-63)")->required();
  build->add_option("--package", bo->packages, "a Debian package to install (repeat the flag for each)")
      ->required()
      ->allow_extra_args(false);
  build->add_option("--suite", bo->suite, "the Debian suite (default bookworm)");
  build->add_option("--variant", bo->variant, "mmdebstrap's variant (default minbase)")
      ->check(CLI::IsMember({"essential", "minbase", "apt", "required", "important", "standard"}));
  build->add_option("--description", bo->description, "what the image is for (1-512 characters)");
  build->callback([&ctx, bo] { ctx.action = [&ctx, bo] { return build_image(ctx, *bo); }; });

  auto io = std::make_shared<ImportOpts>();
  auto* imp = images->add_subcommand(
      "import", "upload an image archive in 1 MiB chunks (resumes an unfinished upload of the same file)");
  imp->add_option("name", io->name, "image name (lowercase letters, digits and '-', 1-63)")->required();
  imp->add_option("file", io->file,
                  "the archive: podman save's (docker-archive, oci-archive) or a root file system tar")
      ->required();
  imp->add_option("--format", io->format, "docker-archive, oci-archive or rootfs-tar")
      ->required()
      ->check(CLI::IsMember({"docker-archive", "oci-archive", "rootfs-tar"}));
  imp->add_option("--description", io->description, "what the image is for (1-512 characters)");
  imp->add_option("--chunk-bytes", io->chunk_bytes, "bytes per request, 1 to 1048576 (default 1048576)")
      ->check(CLI::Range(int64_t{1}, kMaxUploadChunkBytes));
  imp->callback([&ctx, io] { ctx.action = [&ctx, io] { return import_image(ctx, *io); }; });
}

}  // namespace gpurent
