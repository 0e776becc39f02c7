// What a student reads when a lab's runner ended before reporting every task (early_exit.hpp).
#include <doctest/doctest.h>

#include <csignal>

#include "early_exit.hpp"

using namespace gpulab;
using namespace gpulab::cli;

namespace {

ChildExit exited(int code) {
  ChildExit e;
  e.status = code << 8;  // as waitpid reports an exit
  return e;
}

ChildExit signalled(int sig) {
  ChildExit e;
  e.status = sig;
  e.signal = sig;
  return e;
}

ChildExit killed_for(KillReason why) {
  ChildExit e = signalled(SIGKILL);
  e.killed_for = why;
  return e;
}

EarlyExitFacts facts(ChildExit e, std::string current_case = "") {
  EarlyExitFacts f;
  f.exit = e;
  f.current_case = std::move(current_case);
  f.idle_timeout_s = 20;
  f.lab_time_limit_s = 900;
  f.limits.memory_bytes = 8ull << 30;
  f.limits.disk_bytes = 256ull << 20;
  f.limits.processes = 256;
  f.output_tail = "bwrap: cannot create namespace";
  f.runner = "/build/saxpy_runner";
  return f;
}

}  // namespace

TEST_CASE("a runner without progress timed out, and the message names the case and the likely hang") {
  const EarlyExit why = explain_early_exit(facts(killed_for(KillReason::idle), "257x3"));
  CHECK(why.status == Status::timeout);
  CHECK(why.message ==
        "timed out after 20 s without progress in case 257x3 — an infinite loop, or a barrier (__syncthreads / "
        "barrier) that not every thread of the block reaches, e.g. inside an if");
  CHECK_FALSE(why.grader_side);
}

TEST_CASE("a runner without progress that held most of its memory is told about the memory, not a hang") {
  ChildExit e = killed_for(KillReason::idle);
  e.peak_memory_bytes = 6ull << 30;
  CHECK(
      explain_early_exit(facts(e)).message ==
      "timed out after 20 s without progress — its processes held 6.0 GiB of memory (the limit is 8.0 GiB): a huge or "
      "leaking host allocation?");
}

TEST_CASE("the limits of the whole lab, of the disk and of memory each say which limit stopped the runner") {
  CHECK(explain_early_exit(facts(killed_for(KillReason::timeout), "big")).message ==
        "stopped after 900 s, the time limit of the whole lab in case big");
  CHECK(explain_early_exit(facts(killed_for(KillReason::timeout))).status == Status::timeout);
  const EarlyExit disk = explain_early_exit(facts(killed_for(KillReason::disk)));
  CHECK(disk.status == Status::crashed);
  CHECK(disk.message == "stopped: it wrote more than 256 MiB of files, the limit — files written in a loop?");
  CHECK(explain_early_exit(facts(killed_for(KillReason::memory), "big")).message ==
        "stopped in case big: its processes used more than 8.0 GiB of memory, the limit — a huge or leaking host "
        "allocation?");
}

TEST_CASE("a crash names the signal and where to look; the output and CPU limits name themselves") {
  const EarlyExit crash = explain_early_exit(facts(signalled(SIGSEGV), "1x1"));
  CHECK(crash.status == Status::crashed);
  CHECK(crash.message ==
        "the runner crashed with SIGSEGV, a segmentation fault in case 1x1 — on a CPU OpenCL device an out-of-bounds "
        "access in a kernel crashes the process: check the bounds test of every work-item; in host code, check "
        "pointers and sizes");
  CHECK(explain_early_exit(facts(signalled(SIGXFSZ))).message ==
        "the runner was stopped with SIGXFSZ: it printed or wrote more than the output limit (a print in a loop?)");
}

TEST_CASE("student code that calls exit is told so; a lost device alone says nothing more") {
  CHECK(explain_early_exit(facts(exited(5), "7x7")).message ==
        "the runner exited with status 5 in case 7x7 before reporting (did student code call exit?)");
  const EarlyExit lost = explain_early_exit(facts(exited(exit_code(ExitStatus::device_lost))));
  CHECK(lost.status == Status::crashed);
  CHECK(lost.message.empty());
}

TEST_CASE("a runner that could not start, execute or set up is the grader's failure, with its reason") {
  const EarlyExit sandbox = explain_early_exit(facts(exited(exit_code(ExitStatus::cannot_start))));
  CHECK(sandbox.status == Status::error);
  CHECK(sandbox.message == "the sandbox could not start the runner: bwrap: cannot create namespace");
  EarlyExitFacts silent = facts(exited(exit_code(ExitStatus::cannot_start)));
  silent.output_tail = "\n  \n";
  CHECK(explain_early_exit(silent).message == "the sandbox could not start the runner: it gave no reason");
  CHECK(sandbox.grader_side);
  const EarlyExit missing = explain_early_exit(facts(exited(exit_code(ExitStatus::cannot_execute))));
  CHECK(missing.message == "cannot execute the runner /build/saxpy_runner: bwrap: cannot create namespace");
  CHECK(missing.grader_side);
  EarlyExitFacts setup = facts(exited(exit_code(ExitStatus::setup_error)));
  setup.setup_error = "no OpenCL device matches 'gpu9'";
  const EarlyExit no_device = explain_early_exit(setup);
  CHECK(no_device.status == Status::error);
  CHECK(no_device.message == "no OpenCL device matches 'gpu9'");
  CHECK(no_device.grader_side);
  setup.exit = exited(1);  // an error event, but the process did not exit as the runner does on one
  CHECK_FALSE(explain_early_exit(setup).grader_side);
}

TEST_CASE(
    "a crash before any kernel ran is told apart from a kernel's fault: start-up, the device, the kernels' build") {
  EarlyExitFacts f = facts(signalled(SIGABRT));
  f.case_begun = false;
  f.stage = RunnerStage::loading;  // a global object's constructor aborted
  const EarlyExit loading = explain_early_exit(f);
  CHECK(loading.status == Status::crashed);
  CHECK_FALSE(loading.grader_side);
  CHECK(loading.message ==
        "the runner crashed with SIGABRT, an abort (an uncaught exception or a failed assert) before it began, while "
        "the constructors of global objects ran (no kernel had run) — a global (static) object in your files whose "
        "constructor fails (an uncaught exception, a failed assert) crashes the program before it starts: do that "
        "work inside the lab's functions");
  f.exit = signalled(SIGSEGV);
  f.stage = RunnerStage::building_kernels;  // PoCL crashed in clBuildProgram
  const EarlyExit building = explain_early_exit(f);
  CHECK(building.message.find("while the device's compiler (the OpenCL driver) built your kernels, before any of "
                              "them ran — the driver itself failed on your .cl file") != std::string::npos);
  CHECK(building.message.find("out-of-bounds") == std::string::npos);
  f.exit = signalled(SIGXFSZ);  // its build log passed the output limit
  f.limits.output_bytes = 16 << 20;
  CHECK(explain_early_exit(f).message ==
        "the runner was stopped while the device's compiler (the OpenCL driver) built your kernels, before any of "
        "them ran: the driver's build log (its messages about your .cl file) passed the output limit of 16 MiB per "
        "file — fix the warnings and errors make check shows for it");
  f.exit = killed_for(KillReason::idle);
  CHECK(explain_early_exit(f).message.find("the device's compiler got no further with your .cl file") !=
        std::string::npos);
  f.exit = signalled(SIGSEGV);
  f.stage = RunnerStage::opening_device;
  const std::string opening = explain_early_exit(f).message;
  CHECK(opening.find("while it opened the device, before any kernel ran") != std::string::npos);
  CHECK(opening.find("out-of-bounds") == std::string::npos);
  // Between two tasks, after cases ran: a kernel of the earlier task may be the cause.
  f.stage = RunnerStage::ready;
  f.case_begun = true;
  CHECK(explain_early_exit(f).message.find("out-of-bounds access in a kernel") != std::string::npos);
  f.current_task = "optimized";
  CHECK(explain_early_exit(f).message.find(" in task optimized, before its first case — ") != std::string::npos);
}

TEST_CASE("a runner that started many processes is suspected of a fork bomb, with the limit") {
  ChildExit e = signalled(SIGKILL);
  e.peak_processes = 250;
  CHECK(explain_early_exit(facts(e)).message ==
        "the runner crashed with SIGKILL, killed from outside (out of memory?) — on a CPU OpenCL device an "
        "out-of-bounds access in a kernel crashes the process: check the bounds test of every work-item; in host "
        "code, check pointers and sizes (it had started 250 processes, the limit is 256: a fork bomb?)");
}
