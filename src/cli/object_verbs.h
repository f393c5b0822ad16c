// Internal to the CLI: the `list` (alias ls), `show` (alias get) and `delete` (alias rm) verbs of
// a kind of named object the API keeps in a collection of its own, a project's
// (/projects/{project}/<kind>/{name}: artifacts, secrets) or one outside projects
// (/images/{ref}). `list` GETs the collection and `show` the object, and both print the answer for
// people (-o json/yaml: the answer as the server sent it); `delete` DELETEs the object and prints
// one line (-o json/yaml: {"deleted": name, "kind": kind, "project": project}, "project" only for
// a project's object). Used by artifact_commands.cc, image_commands.cc and secret_commands.cc.
// Not thread-safe (one CliContext per run).
#pragma once

#include <functional>
#include <ostream>
#include <string>

#include "cli/commands.h"

namespace gpurent {

// An object as the command line names it.
struct ObjectRef {
  std::string project;  // empty for an object outside projects
  std::string name;
};

// What the verbs of one kind of object share.
struct ObjectVerbs {
  std::string kind;               // the API's collection, -o json's "kind": "artifacts"
  bool in_project = true;         // the verbs take PROJECT ("project id or name") first
  std::string name_arg = "name";  // the name's positional argument
  std::function<std::string(const std::string& project)> collection;  // the collection's API path (`list`)
  std::function<std::string(const ObjectRef&)> path;                  // an object's API path
};

// Writes an answer for people in the catalogue language `lang`.
using AnswerPrinter = std::function<void(std::ostream& out, const json& answer, const std::string& lang)>;

// Adds `list` to `group`; `print` writes the collection's answer.
void add_list_verb(CLI::App& group, CliContext& ctx, const ObjectVerbs& verbs, const std::string& help,
                   AnswerPrinter print);

// Adds `show` to `group`; `print` writes the object.
void add_show_verb(CLI::App& group, CliContext& ctx, const ObjectVerbs& verbs, const std::string& help,
                   const std::string& name_help, AnswerPrinter print);

// Adds `delete` to `group`; `deleted` is the line it prints once the object is gone, in the
// catalogue language `lang` (made printable here).
void add_delete_verb(CLI::App& group, CliContext& ctx, const ObjectVerbs& verbs, const std::string& help,
                     const std::string& name_help,
                     std::function<std::string(const ObjectRef& ref, const std::string& lang)> deleted);

}  // namespace gpurent
