// Why a lab runner ended before reporting every task, in the words a student reads: a hang, a limit,
// a crash, code that called exit, or a runner the grader could not start.
#pragma once
#include <string>

#include "gpulab/results.hpp"
#include "runner_progress.hpp"
#include "sandbox.hpp"

namespace gpulab::cli {

// What the supervisor knows of a runner process that ended early.
struct EarlyExitFacts {
  ChildExit exit;
  std::string current_case;                // the case it was in, "" between cases
  std::string current_task;                // the task it was in, "" before the first and between tasks
  RunnerStage stage = RunnerStage::ready;  // how far it got before its tasks
  bool case_begun = true;                  // a case had begun in it: the student's kernels may have run
  std::string setup_error;                 // its "error" event: it could not set up (open the device, calibrate)
  double idle_timeout_s = 0;               // the progress timeout it was killed by, when it was
  double lab_time_limit_s = 0;             // the whole lab's wall-clock limit
  Limits limits;                           // in force for this process: memory, disk, processes
  std::string output_tail;                 // the end of what it printed (the sandbox's own complaint)
  std::string runner;                      // its path
};

struct EarlyExit {
  Status status = Status::crashed;
  std::string message;  // "" when nothing is known (the caller says the runner ended without reporting)
  // The grader's failure, not the student's, if no task had begun: the runner could not be started or
  // executed, or it reported that it could not set up.
  bool grader_side = false;
};

EarlyExit explain_early_exit(const EarlyExitFacts& facts);

// "SIGSEGV, a segmentation fault", "SIGXCPU: it used more than its CPU time limit (...)", ...
std::string signal_text(int sig);

}  // namespace gpulab::cli
