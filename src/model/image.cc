#include "model/image.h"

#include <algorithm>

#include "core/json_put.h"
#include "model/artifact.h"
#include "model/record_codec.h"

namespace gpurent {

namespace {

constexpr StrRule kImageNameRule{.min_len = 1, .max_len = 63, .pattern = kSlug, .pattern_help = kSlugHelp};
// Debian policy 5.6.1: lowercase letters, digits, '+', '-', '.'; at least two, starting alphanumeric.
constexpr StrRule kPackageRule{.min_len = 2, .max_len = 100, .pattern = "[a-z0-9][a-z0-9+.-]+", .pattern_help = "pattern.debian_package"};
constexpr StrRule kSuiteRule{.min_len = 2, .max_len = 32, .pattern = "[a-z][a-z0-9-]+", .pattern_help = "pattern.debian_suite"};
constexpr int64_t kMaxImageBytes = int64_t{1} << 50;

inline constexpr EnumEntry<int> kVariants[] = {{0, "essential"}, {1, "minbase"},   {2, "apt"},
                                               {3, "required"},  {4, "important"}, {5, "standard"}};

void read_name(Fields& f, Image& i) {
  i.name = f.str("name", kImageNameRule);
  i.description = f.opt_str("description", {.min_len = 1, .max_len = 512});
}

void read_image_declared(Fields& f, Image& i, int64_t max_bytes) {
  read_name(f, i);
  const bool has_recipe = f.has("recipe"), has_archive = f.has("archive");
  if (has_recipe == has_archive) f.error(has_recipe ? "archive" : "recipe", Message("image.recipe_or_archive"));
  f.object("recipe", false, [&](Fields& r) {
    ImageRecipe rec;
    rec.suite = r.opt_str("suite", kSuiteRule).value_or("bookworm");
    rec.variant = enum_name(kVariants, r.enumeration("variant", kVariants, std::optional<int>(1)));
    rec.packages = r.str_list("packages", kPackageRule);
    std::sort(rec.packages.begin(), rec.packages.end());  // one recipe, whatever the order
    rec.packages.erase(std::unique(rec.packages.begin(), rec.packages.end()), rec.packages.end());
    if (rec.packages.size() > kMaxRecipePackages)
      r.error("packages", Message("image.too_many_packages").arg("max", std::to_string(kMaxRecipePackages)));
    i.recipe = std::move(rec);
    i.format = ImageFormat::kRootfsTar;
  });
  f.object("archive", false, [&](Fields& a) {
    i.format = a.enumeration("format", kImageFormatNames);
    const std::string digest = a.str("sha256", {.min_len = 64, .max_len = 64});
    if (!digest.empty() && !is_sha256_hex(digest))
      a.error("sha256", Message("artifact.sha256.hex"));
    else
      for (char c : digest) i.sha256 += (c >= 'A' && c <= 'F') ? static_cast<char>(c - 'A' + 'a') : c;
    i.size_bytes = a.integer("size_bytes", 1, max_bytes);
  });
}

}  // namespace

std::string image_reference(const Image& i) {
  return "localhost/gpurent/" + (i.is_public() ? std::string("public") : i.tenant_id) + "/" + i.name + ":" +
         i.sha256.substr(0, 12);
}

bool names_platform_image(const std::string& job_image) {
  return !job_image.empty() && job_image.find_first_of("/:@") == std::string::npos;
}

bool gpurent_reference_allowed(const std::string& ref, const std::string& tenant_id) {
  static const std::string kPrefix = "localhost/gpurent/";
  if (ref.rfind(kPrefix, 0) != 0) return true;
  const std::string rest = ref.substr(kPrefix.size());
  const size_t slash = rest.find('/');
  if (slash == std::string::npos) return true;  // localhost/gpurent/<name>:<tag>: not an image of the store
  const std::string scope = rest.substr(0, slash);
  return scope == "public" || scope == tenant_id;
}

Result<Image> parse_image(const json& body, int64_t max_bytes) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  Image i;
  read_image_declared(f, i, max_bytes);
  f.finish();
  if (!errs.empty()) return errs.to_error();
  i.state = i.recipe ? ImageState::kQueued : ImageState::kUploading;
  return i;
}

Result<Image> parse_saved_image(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  Image i;
  read_name(f, i);
  f.finish();
  if (!errs.empty()) return errs.to_error();
  i.format = ImageFormat::kDockerArchive;  // podman save keeps the image's configuration (its PATH, CMD…)
  i.state = ImageState::kSaving;
  return i;
}

Result<Image> decode_image(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  Image i;
  // The declared part as a client states it, then what the server keeps beside it.
  read_name(f, i);
  f.object("source", false, [&](Fields& s) {
    ImageSource src;
    src.instance_id = s.str("instance_id", kServerText);
    src.instance = s.str("instance", kServerText);
    src.job_id = s.str("job_id", kServerText);
    i.source = std::move(src);
  });
  f.object("recipe", false, [&](Fields& r) {
    ImageRecipe rec;
    rec.suite = r.str("suite", kSuiteRule);
    rec.variant = enum_name(kVariants, r.enumeration("variant", kVariants));
    rec.packages = r.str_list("packages", kPackageRule);
    i.recipe = std::move(rec);
  });
  i.format = f.enumeration("format", kImageFormatNames);
  i.sha256 = f.opt_str("sha256", kServerText).value_or("");
  i.size_bytes = f.integer("size_bytes", 0, kMaxImageBytes);
  i.tenant_id = f.opt_str("tenant_id", kServerText).value_or("");
  i.state = f.enumeration("state", kImageStateNames);
  i.received_bytes = f.integer("received_bytes", 0, kMaxImageBytes);
  i.packages = f.str_list("packages", kServerText);
  i.error = f.opt_str("error", kServerText).value_or("");
  i.failure = stored_message(f, "error_message");
  i.created_by = f.opt_str("created_by", kServerText).value_or("");
  i.ready_at = f.opt_time("ready_at");
  if (!i.sha256.empty() && !is_sha256_hex(i.sha256)) errs.add("sha256", Message("artifact.sha256.hex"));
  if (!errs.empty()) return errs.to_error();
  return i;
}

json to_json(const Image& i) {
  json j = {{"name", i.name},
            {"format", enum_name(kImageFormatNames, i.format)},
            {"sha256", i.sha256},
            {"size_bytes", i.size_bytes},
            {"tenant_id", i.tenant_id},
            {"state", enum_name(kImageStateNames, i.state)},
            {"received_bytes", i.received_bytes},
            {"packages", i.packages},
            {"created_by", i.created_by}};
  put_opt(j, "description", i.description);
  if (i.recipe)
    j["recipe"] = {{"suite", i.recipe->suite}, {"variant", i.recipe->variant}, {"packages", i.recipe->packages}};
  if (i.source)
    j["source"] = {{"instance_id", i.source->instance_id}, {"instance", i.source->instance}, {"job_id", i.source->job_id}};
  if (i.failure)
    put_message(j, "error", *i.failure);
  else if (!i.error.empty())
    j["error"] = i.error;
  put_opt_time(j, "ready_at", i.ready_at);
  return j;
}

IndexCols index_of(const Image& i) {
  IndexCols c;
  c.name = (i.is_public() ? std::string("public") : i.tenant_id) + "/" + i.name;
  c.tenant_id = i.tenant_id;
  c.state = enum_name(kImageStateNames, i.state);
  return c;
}

Result<KeptImage> decode_kept_image(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  KeptImage k;
  k.image_id = f.str("image_id", kServerText);
  k.image = f.opt_str("image", kServerText).value_or(k.image_id);
  k.offer_id = f.str("offer_id", kServerText);
  k.contract_id = f.opt_str("contract_id", kServerText).value_or("");
  k.bytes = f.integer("bytes", 0, kMaxImageBytes);
  k.from = f.time("from");
  if (const json* v = f.raw("to"); v && !v->is_null()) k.to = f.opt_time("to");
  if (!errs.empty()) return errs.to_error();
  return k;
}

json to_json(const KeptImage& k) {
  json j = {{"image_id", k.image_id}, {"image", k.image},   {"offer_id", k.offer_id}, {"contract_id", k.contract_id},
            {"bytes", k.bytes},       {"from", format_rfc3339(k.from)}, {"to", time_or_null(k.to)}};
  return j;
}

}  // namespace gpurent
