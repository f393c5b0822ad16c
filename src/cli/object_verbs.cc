#include "cli/object_verbs.h"

#include <memory>
#include <utility>

#include "cli/output.h"
#include "cli/upload.h"

namespace gpurent {

namespace {

// The verb's arguments (PROJECT for a project's object, then the name unless `with_name` is
// false), filled in by CLI11.
std::shared_ptr<ObjectRef> add_ref_args(CLI::App& verb, const ObjectVerbs& verbs, bool with_name,
                                        const std::string& name_help = "") {
  auto ref = std::make_shared<ObjectRef>();
  if (verbs.in_project) verb.add_option("project", ref->project, "project id or name")->required();
  if (with_name) verb.add_option(verbs.name_arg, ref->name, name_help)->required();
  return ref;
}

// GETs `path` and prints the answer.
int get_and_print(CliContext& ctx, const std::string& path, const AnswerPrinter& print) {
  int rc = kExitOk;
  ApiClient* c = ctx.client(&rc);
  if (!c) return rc;
  auto r = c->get(path);
  if (!r) return ctx.fail(r.error());
  const std::string lang = cli_language(ctx);
  return ctx.emit(*r, [&](std::ostream& out) { print(out, *r, lang); });
}

}  // namespace

void add_list_verb(CLI::App& group, CliContext& ctx, const ObjectVerbs& verbs, const std::string& help,
                   AnswerPrinter print) {
  auto* list = group.add_subcommand("list", help);
  list->alias("ls");
  auto ref = add_ref_args(*list, verbs, false);
  list->callback([&ctx, collection = verbs.collection, print = std::move(print), ref] {
    ctx.action = [&ctx, collection, print, ref] { return get_and_print(ctx, collection(ref->project), print); };
  });
}

void add_show_verb(CLI::App& group, CliContext& ctx, const ObjectVerbs& verbs, const std::string& help,
                   const std::string& name_help, AnswerPrinter print) {
  auto* show = group.add_subcommand("show", help);
  show->alias("get");
  auto ref = add_ref_args(*show, verbs, true, name_help);
  show->callback([&ctx, path = verbs.path, print = std::move(print), ref] {
    ctx.action = [&ctx, path, print, ref] { return get_and_print(ctx, path(*ref), print); };
  });
}

void add_delete_verb(CLI::App& group, CliContext& ctx, const ObjectVerbs& verbs, const std::string& help,
                     const std::string& name_help,
                     std::function<std::string(const ObjectRef& ref, const std::string& lang)> deleted) {
  auto* del = group.add_subcommand("delete", help);
  del->alias("rm");
  auto ref = add_ref_args(*del, verbs, true, name_help);
  del->callback([&ctx, verbs, deleted = std::move(deleted), ref] {
    ctx.action = [&ctx, verbs, deleted, ref] {
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      auto r = c->del(verbs.path(*ref));
      if (!r) return ctx.fail(r.error());
      json doc = {{"deleted", ref->name}, {"kind", verbs.kind}};
      if (verbs.in_project) doc["project"] = ref->project;
      const std::string lang = cli_language(ctx);
      return ctx.emit(doc, [&](std::ostream& out) { out << printable(deleted(*ref, lang)) << '\n'; });
    };
  });
}

}  // namespace gpurent
