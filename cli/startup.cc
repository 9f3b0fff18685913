// Start-up progress and summary lines (see startup.h).
#include "cli/startup.h"

#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "absl/strings/str_format.h"

namespace cli {

std::chrono::steady_clock::time_point& ProcessStart() {
  static std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  return start;
}

exec::PlanBuildProgress PlanProgressPrinter() {
  const bool terminal = isatty(fileno(stderr)) != 0;
  return [terminal](const exec::PlanBuildEvent& e) {
    const std::string line = absl::StrFormat("[%zu/%zu] step #%zu %s: %s %.2f s", e.done, e.total, e.step, e.what,
                                             e.source == "cache" ? "loaded from the plan cache" : e.source, e.seconds);
    if (terminal) {
      std::fprintf(stderr, "\r%s\033[K%s", line.c_str(), e.done == e.total ? "\n" : "");
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
  };
}

void KeepFreedHostMemory() {
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 64 << 20);
}

void PrintStartup(const runtime::Session& session, double first_run_seconds) {
  const runtime::StartupTimes& t = session.startup();
  std::string line = absl::StrFormat("start-up: import %.2f s, passes %.2f s (", t.import_seconds, t.passes_seconds);
  const auto& passes = session.plan().stats.pass_seconds;
  for (size_t i = 0; i < passes.size(); ++i) {
    absl::StrAppendFormat(&line, "%s%s %.2f", i ? ", " : "", passes[i].first, passes[i].second);
  }
  line += ")";
  if (session.gpu() != nullptr) {
    // Plans are built at Create for static input dims, else during the first run.
    const exec::PlanBuildSummary p = t.plans.steps > 0 ? t.plans : session.gpu()->last_build();
    absl::StrAppendFormat(&line,
                          ", GPU init %.2f s, cuDNN plans %.2f s%s (%d steps: %d built, %d from the plan cache, %d "
                          "shared with an identical step",
                          t.gpu_init_seconds, p.wall_seconds, t.plans.steps > 0 ? "" : " in the first run", p.steps,
                          p.built, p.from_cache, p.shared);
    if (p.failed > 0) absl::StrAppendFormat(&line, ", %d not built", p.failed);
    if (p.autotuned > 0) absl::StrAppendFormat(&line, ", %d autotuned in %.2f s", p.autotuned, p.autotune_seconds);
    absl::StrAppendFormat(&line, "; %.1f s of build work)", p.step_seconds);
    const exec::MeasuredChoices m = session.gpu()->measured_choices();
    if (m.timed + m.from_cache > 0) {
      absl::StrAppendFormat(&line,
                            ", graph-or-split choices: %d timed in %.2f s, %d from the plan cache, %d split, %d own "
                            "1x1-conv kernel, %d matmul + own epilogue kernel",
                            m.timed, m.seconds, m.from_cache, m.split, m.own_kernel, m.matmul_epilogue);
    }
    for (const std::string& warning : session.gpu()->cache_warnings()) {
      std::fprintf(stderr, "onnxrun: warning: %s\n", warning.c_str());
    }
  }
  if (first_run_seconds >= 0) {
    const double since_start = std::chrono::duration<double>(std::chrono::steady_clock::now() - ProcessStart()).count();
    absl::StrAppendFormat(&line, ", first run %.2f s; first result %.2f s after process start", first_run_seconds,
                          since_start);
  }
  std::printf("%s\n", line.c_str());
}

}  // namespace cli
