// A declarative table of command-line flags: each flag is one row (its names, the placeholder of its
// value, its help text, and how its value is applied), and both the parser and the help text come
// from the table, so a new flag is one row and no new branch. Conventions follow ORT's perf tool and
// trtexec: `--name VALUE` or `--name=VALUE`, switches take no value, `--name[=VALUE]` for an
// optional value.
#ifndef ONNXRUN_CLI_FLAGS_H_
#define ONNXRUN_CLI_FLAGS_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"

namespace cli {

enum class FlagArity {
  kSwitch,         // --quiet
  kValue,          // --device cuda, --device=cuda
  kOptionalValue,  // --explain, --explain=json (no separate-argument form)
};

struct Flag {
  std::vector<std::string> names;  // e.g. {"-h", "--help"}; the last is the one errors name
  FlagArity arity = FlagArity::kSwitch;
  std::string value_name;  // shown in the help: "cpu|cuda|auto", "N", "text|json|dot"
  std::string help;        // lines separated by '\n'
  // Called with the value ("" for a switch, and for an optional value not given). An error is a
  // usage error; its message is shown as is.
  std::function<absl::Status(const std::string& value)> apply;
};

// Applies every flag in argv[first, argc) and returns the other arguments (positional ones) in
// order. Errors (InvalidArgument): an unknown flag, a missing value, a value given to a switch, or
// what a flag's `apply` returned.
absl::StatusOr<std::vector<std::string>> ParseFlags(const std::vector<Flag>& flags, int argc, char** argv, int first);

// A switch that sets `*target` to `value`.
Flag Switch(std::vector<std::string> names, std::string help, bool* target, bool value = true);

// A flag whose value must be one of `choices`, stored in `*target`.
Flag ChoiceFlag(std::string name, std::vector<std::string> choices, std::string help, std::string* target);

// A flag whose value is an integer in [lo, hi], stored in `*target`.
template <typename Int>
Flag IntFlag(std::string name, std::string value_name, std::string help, Int* target, Int lo, Int hi,
             std::string error) {
  return {{std::move(name)},
          FlagArity::kValue,
          std::move(value_name),
          std::move(help),
          [target, lo, hi, error](const std::string& v) {
            Int parsed;
            if (!absl::SimpleAtoi(v, &parsed) || parsed < lo || parsed > hi) return absl::InvalidArgumentError(error);
            *target = parsed;
            return absl::OkStatus();
          }};
}

// The help lines of the table: "  --name VALUE" padded to a column, then the help text.
std::string FlagHelp(const std::vector<Flag>& flags);

}  // namespace cli

#endif  // ONNXRUN_CLI_FLAGS_H_
