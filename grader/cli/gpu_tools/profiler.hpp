// Profiler feedback (`gpulab check --profile`, `make check PROFILE=1`; CUDA on an NVIDIA GPU): after a
// lab is graded, each task's timing case runs once more, in a runner started under Nsight Compute
// (ncu) with --profile-from-start off, so that only the student's launches are measured (the runner
// opens the profiled region around them: Device::begin_profiled_region). The lab's lab.toml names the
// counters that show its lesson (`profile = ["global_stores", ...]`); each comes back with its figure
// and a one-line reading ("32 sectors per request: the stores are not coalesced"). It informs and
// never grades.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "lab_run.hpp"
#include "supervisor.hpp"
#include "toolchain.hpp"

namespace gpulab::cli {

// One profiled kernel launch: a row of ncu's raw page (--csv --page raw --print-units base).
struct ProfiledLaunch {
  std::string kernel;                     // without its parameters and return type: "tile<0>"
  std::map<std::string, double> metrics;  // the numeric ones, in base units
};
// The launches in ncu's raw CSV page, in order; throws std::runtime_error naming what is missing
// when the text is not that page.
std::vector<ProfiledLaunch> parse_ncu_raw_csv(const std::string& csv);

// A counter students can be shown: the ncu metrics it reads and how it reads them.
struct ProfileCounter {
  std::string name;   // as lab.toml names it
  std::string label;  // as the report names it
  std::vector<std::string> metrics;
  // The figure, its reading and whether it is a concern, from one kernel's launches (metrics summed
  // or averaged over them); read_profile adds the counter's name and label.
  CounterReading (*read)(const std::map<std::string, double>& totals);
};
const std::vector<ProfileCounter>& profile_counters();
// Throws std::invalid_argument naming the known counters when `names` holds another.
void require_known_counters(const std::vector<std::string>& names, const std::string& lab);
// The metrics ncu must collect for `counters`, the launch duration included.
std::vector<std::string> ncu_metrics_for(const std::vector<std::string>& counters);
// Each kernel's launches together (in first-launch order), read by `counters`: counts add up,
// percentages are averaged weighted by each launch's duration, launch settings come from the first.
std::vector<KernelProfile> read_profile(const std::vector<ProfiledLaunch>& launches,
                                        const std::vector<std::string>& counters);

// Why ncu collected nothing, from its log (--log-file), in words for a student with what to do; ""
// when the log shows no failure.
std::string ncu_failure(const std::string& log);

struct Profiler {
  std::string ncu;        // Nsight Compute's command line tool
  int launch_count = 16;  // the first launches of the profiled region that are measured
};
// The profiler for `backend` with this toolchain's ncu; throws std::runtime_error naming the fix when
// the backend is not CUDA or ncu is missing.
Profiler make_profiler(const Toolchain& toolchain, const std::string& backend);

// Each of `base.tasks`' timing case under the profiler, one runner process per task, with the
// counters of `base.manifest`. A task whose run failed or measured nothing has a note saying why.
std::vector<TaskProfile> profile_lab(const RunRequest& base, const Profiler& profiler);

}  // namespace gpulab::cli
