// Unsafe code never passes: a barrier that the static check proves not every thread reaches
// (BarrierFinding::proven, barrier_check.hpp) fails each task that runs its kernel, on every backend
// and device, as Status::unsafe_code with the check's message (file:line, why, the fix), instead of a
// warning under a table that says PASSED. On a GPU such a kernel hangs or races, on PoCL it usually
// runs without a sign: the verdict must not depend on the device. The task is not run at all (its
// kernel would hang until the time limit), so `make check` answers at once.
//
// Which tasks run the kernel comes from the kernel map (kernel_map.hpp). A finding the check cannot
// prove, or one in a function no selected task reaches, stays a warning.
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "gpulab/manifest.hpp"
#include "gpulab/results.hpp"
#include "kernel_map.hpp"
#include "lab_run.hpp"
#include "source_scan.hpp"

namespace gpulab::cli {

struct BarrierVerdicts {
  std::map<std::string, TaskResult> unsafe;  // by task: its unsafe-code result; these tasks are not run
  std::vector<SourceWarning> warnings;       // the findings that stay warnings, each as the report shows it
};

// The verdicts on `tasks` (selected task names) from the barrier check's `findings` (find_source_warnings).
BarrierVerdicts barrier_verdicts(const Manifest& manifest, const KernelMap& map, const std::vector<std::string>& tasks,
                                 const std::vector<SourceWarning>& findings);

// The same, with the kernel map of the lab's files for `backend` in `student_dir`.
BarrierVerdicts barrier_verdicts(const Manifest& manifest, const std::string& backend,
                                 const std::filesystem::path& student_dir, const std::vector<std::string>& tasks,
                                 const std::vector<SourceWarning>& findings);

// `tasks` without the ones the verdicts fail: what is left to run.
std::vector<std::string> tasks_to_run(const std::vector<std::string>& tasks, const BarrierVerdicts& verdicts);

// Puts the unsafe results among `lab`'s tasks, in the order of `tasks`.
void add_unsafe_tasks(LabRun& lab, const std::vector<std::string>& tasks, const BarrierVerdicts& verdicts);

}  // namespace gpulab::cli
