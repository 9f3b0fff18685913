// onnxrun's start-up reporting: the progress line while cuDNN plans build, and the summary of where
// start-up time went (import, passes, GPU init, plans built or loaded from the plan cache, first run).
#ifndef ONNXRUN_CLI_STARTUP_H_
#define ONNXRUN_CLI_STARTUP_H_

#include <chrono>

#include "runtime/plan_builder.h"
#include "runtime/session.h"

namespace cli {

// The process start, as main() saw it.
std::chrono::steady_clock::time_point& ProcessStart();

// Makes glibc's malloc keep freed blocks (no mmap/munmap per large tensor, no trimming), so that
// the CPU backend's per-run tensors reuse memory already faulted in: resnet50 on the CPU runs ~25%
// faster. For a process that runs models (the CLI); library users can set the same through
// MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_ / MALLOC_TOP_PAD_.
void KeepFreedHostMemory();

// Prints "[12/53] conv+bias+relu built 0.41 s" to stderr per plan: one updating line on a terminal,
// one line per plan otherwise.
exec::PlanBuildProgress PlanProgressPrinter();

// "start-up: import 0.12 s, passes 0.05 s, GPU init 0.31 s, cuDNN plans 3.20 s (53 steps: 20 built,
// 0 from the plan cache, 33 shared with an identical step; 21.4 s of build work), first run 0.42 s;
// first result 4.1 s after process start",
// and each plan-cache warning on stderr. `first_run_seconds` < 0: no run yet.
void PrintStartup(const runtime::Session& session, double first_run_seconds);

}  // namespace cli

#endif  // ONNXRUN_CLI_STARTUP_H_
