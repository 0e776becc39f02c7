// What the streams lab grades and what its guards allow, on the OpenCL backend (PoCL in CI), shown
// with planted submissions: a result the host computed fails every task; work left on a queue of
// one's own is waited for before the clock stops and the checks run; clCreateSubBuffer works on the
// buffers student code holds, and a write past a sub-buffer's end is still found. Part of
// gpulab_integration_tests.
#include <doctest/doctest.h>

#include "cli_harness.hpp"

using namespace gpulab::testing;

namespace {

// The solutions with the files of `fixture` (a folder of the repository) in place of 10-streams'.
CliRun run_planted(const std::string& name, const std::string& fixture, const std::string& args = "") {
  SourceTree tree("streams-" + name);
  for (const auto& entry : fs::directory_iterator(repo_path(fixture)))
    if (entry.path().extension() != ".md")
      write_file(tree.root() / "10-streams" / entry.path().filename(), read_file(entry.path()));
  return run_check(tree.root(), "--backend opencl --lab streams " + args);
}

std::string message_of(const CliRun& run, const std::string& task) {
  return run.task("streams", task).at("message").get<std::string>();
}

}  // namespace

TEST_CASE("a streams result computed on the host fails every task, however it is copied, and the report says why") {
  const auto run = run_planted("host-computed", "tests/fixtures/submissions/host-computed/labs/10-streams");
  INFO(run.output);
  CHECK(run.exit_code == 1);
  for (const char* task : {"serial", "pinned", "overlap"}) {
    CAPTURE(task);
    CHECK(run.status("streams", task) == "wrong_result");
    CHECK(run.task("streams", task).at("points").get<double>() == 0);
    CHECK(message_of(run, task).find("a * in + b without the key") != std::string::npos);
  }
}

TEST_CASE("work a streams submission leaves on a command queue of its own is waited for before the checks") {
  // stream_chunks returns with the copy of the input into d_in still queued, behind busy kernels, on a
  // queue of its own. Checked the moment the grader's own queue is done, d_in would still hold the
  // poison; the grader waits for every queue the student created, so the copy counts (and is timed).
  const auto run =
      run_planted("second-stream", "tests/fixtures/submissions/second-stream/labs/10-streams", "--task overlap");
  INFO(run.output);
  CHECK(run.exit_code == 0);
  CHECK(run.status("streams", "overlap") == "passed");
}

TEST_CASE("clCreateSubBuffer works on the buffers student code holds, and a write past a sub-buffer's end is found") {
  const auto run = run_planted("sub-buffers", "labs/10-streams/grader/tests/planted/sub-buffers");
  INFO(run.output);
  // serial: sub-buffers of d_in, d_out and a buffer of its own (and a sub-buffer of a sub-buffer
  // still refused, as OpenCL refuses it).
  CHECK(run.status("streams", "serial") == "passed");
  // pinned: one element past a sub-buffer that ends where d_out ends lands in d_out's guard zone.
  CHECK(run.status("streams", "pinned") == "buffer_violation");
  CHECK(message_of(run, "pinned").find("wrote 1 element past the end of d_out") != std::string::npos);
  // overlap: one element past a sub-buffer of its own buffer lands in that buffer's guard zone.
  CHECK(run.status("streams", "overlap") == "buffer_violation");
  CHECK(message_of(run, "overlap").find("outside a buffer your code created with clCreateBuffer") != std::string::npos);
}
