// `onnxrun test PATH...`: the subcommand's flag table and its run over models in the ONNX test
// layout (cli/model_test.h), printing a line per case, progress on a terminal and a summary, and
// writing JUnit XML / JSON reports (cli/test_report.h).
#ifndef ONNXRUN_CLI_TEST_COMMAND_H_
#define ONNXRUN_CLI_TEST_COMMAND_H_

namespace cli {

// Runs `onnxrun test` with the arguments argv[first, argc). Returns the exit code: 0 when every case
// passed, 1 when one failed or errored (or a report could not be written), 2 for a usage error.
int TestCommand(int argc, char** argv, int first);

}  // namespace cli

#endif  // ONNXRUN_CLI_TEST_COMMAND_H_
