// The flag-table parser and help formatter (see flags.h).
#include "cli/flags.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace cli {
namespace {

constexpr size_t kHelpColumn = 25;  // flag labels are padded to this width

const Flag* FindFlag(const std::vector<Flag>& flags, const std::string& name) {
  for (const Flag& flag : flags) {
    if (std::find(flag.names.begin(), flag.names.end(), name) != flag.names.end()) return &flag;
  }
  return nullptr;
}

std::string Label(const Flag& flag) {
  std::string label;
  for (const std::string& name : flag.names) absl::StrAppend(&label, label.empty() ? "" : ", ", name);
  if (flag.arity == FlagArity::kValue) absl::StrAppend(&label, " ", flag.value_name);
  if (flag.arity == FlagArity::kOptionalValue) absl::StrAppend(&label, "[=", flag.value_name, "]");
  return label;
}

absl::Status Usage(const std::string& message) { return absl::InvalidArgumentError(message); }

}  // namespace

absl::StatusOr<std::vector<std::string>> ParseFlags(const std::vector<Flag>& flags, int argc, char** argv, int first) {
  std::vector<std::string> positional;
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    if (!absl::StartsWith(arg, "-") || arg == "-") {
      positional.push_back(arg);
      continue;
    }
    std::string value;
    const size_t eq = arg.find('=');
    const bool inline_value = absl::StartsWith(arg, "--") && eq != std::string::npos;
    if (inline_value) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    const Flag* flag = FindFlag(flags, arg);
    if (flag == nullptr) return Usage(absl::StrCat("unknown option '", arg, "'"));
    if (flag->arity == FlagArity::kSwitch && inline_value) return Usage(absl::StrCat(arg, " takes no value"));
    if (flag->arity == FlagArity::kValue && !inline_value) {
      if (i + 1 >= argc) return Usage(absl::StrCat(arg, " needs a value"));
      value = argv[++i];
    }
    if (absl::Status applied = flag->apply(value); !applied.ok()) return Usage(std::string(applied.message()));
  }
  return positional;
}

// A switch that sets `*target` to `value`.
Flag Switch(std::vector<std::string> names, std::string help, bool* target, bool value) {
  return {std::move(names), FlagArity::kSwitch, "", std::move(help), [target, value](const std::string&) {
            *target = value;
            return absl::OkStatus();
          }};
}

// A flag whose value must be one of `choices`, stored in `*target`.
Flag ChoiceFlag(std::string name, std::vector<std::string> choices, std::string help, std::string* target) {
  const std::string value_name = absl::StrJoin(choices, "|");
  return {{name}, FlagArity::kValue, value_name, std::move(help), [=](const std::string& v) {
            if (std::find(choices.begin(), choices.end(), v) == choices.end()) {
              return absl::InvalidArgumentError(absl::StrCat(name, " must be ",
                                                             absl::StrJoin(choices.begin(), choices.end() - 1, ", "),
                                                             " or ", choices.back(), ", not '", v, "'"));
            }
            *target = v;
            return absl::OkStatus();
          }};
}

std::string FlagHelp(const std::vector<Flag>& flags) {
  std::string help;
  for (const Flag& flag : flags) {
    std::string line = absl::StrCat("  ", Label(flag));
    line.append(line.size() < kHelpColumn + 2 ? kHelpColumn + 2 - line.size() : 2, ' ');
    bool first_line = true;
    for (absl::string_view text : absl::StrSplit(flag.help, '\n')) {
      if (!first_line) line.append(kHelpColumn + 2, ' ');
      absl::StrAppend(&line, text, "\n");
      first_line = false;
    }
    help += line;
  }
  return help;
}

}  // namespace cli
