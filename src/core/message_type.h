// The Message value type (a user-visible sentence as a code with arguments) without its
// rendering, so core/result.h can carry one in an Error; core/message.h renders and parses them.
// Value types.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpurent {

struct Message;

// An argument: a value the same in every language (an id, a name, a number, a timestamp), or a
// message rendered in the reader's language (exactly one element in `nested`).
struct MessageArg {
  std::string name;
  std::string text;
  std::vector<Message> nested;
};

struct Message {
  std::string code;  // a key of src/messages/en.json; "" is no message
  std::vector<MessageArg> args;

  Message() = default;
  explicit Message(std::string c) : code(std::move(c)) {}
  // Builders: Message("sched.quota.unknown_project").arg("project", id).
  Message& arg(std::string name, std::string text) &;
  Message& arg(std::string name, Message nested) &;
  Message&& arg(std::string name, std::string text) && { return std::move(arg(std::move(name), std::move(text))); }
  Message&& arg(std::string name, Message nested) && { return std::move(arg(std::move(name), std::move(nested))); }

  bool empty() const { return code.empty(); }
  void clear() { code.clear(), args.clear(); }
  // The argument's text, "" when absent or nested.
  std::string text_of(std::string_view name) const;
};

bool operator==(const Message& a, const Message& b);

// Text that is the same in every language (what an operator or an external system wrote, such as
// a node's drain reason or Slurm's own words): code "text", rendered as it is.
inline Message verbatim(std::string text) { return Message("text").arg("text", std::move(text)); }

}  // namespace gpurent
