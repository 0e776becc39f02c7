// The runner's defences on the OpenCL backend (PoCL in CI), proven with the planted submissions of
// tests/fixtures/planted/ (transpose kernels): timed launches that do not do the work, writes outside a
// buffer, and changed inputs each fail with a message that says what happened.
#include <doctest/doctest.h>

#include "cli_harness.hpp"

using namespace gpulab::testing;

namespace {

// The solutions with the planted files of `fixture` in place of transpose's.
CliRun run_planted(const std::string& fixture, const std::string& task) {
  SourceTree tree("planted-" + fixture);
  for (const auto& entry : fs::directory_iterator(repo_path("tests/fixtures/planted") / fixture))
    write_file(tree.root() / "02-transpose" / entry.path().filename(), read_file(entry.path()));
  return run_check(tree.root(), "--backend opencl --lab transpose --task " + task);
}

std::string message_of(const CliRun& run, const std::string& task) {
  return run.task("transpose", task).at("message").get<std::string>();
}

}  // namespace

TEST_CASE("a transpose that replays results it cached by buffer pointer fails at a warm-up or timed launch") {
  const auto run = run_planted("cache-by-pointer", "optimized");
  INFO(run.output);
  CHECK(run.exit_code == 1);
  CHECK(run.status("transpose", "optimized") == "wrong_result");
  const std::string message = message_of(run, "optimized");
  CHECK((message.find("timed launch") != std::string::npos || message.find("warm-up launch") != std::string::npos));
}

TEST_CASE(
    "a transpose that computes only on the launches an older harness checked fails at a warm-up or timed launch") {
  const auto run = run_planted("count-calls", "optimized");
  INFO(run.output);
  CHECK(run.exit_code == 1);
  CHECK(run.status("transpose", "optimized") == "wrong_result");
  const std::string message = message_of(run, "optimized");
  CHECK((message.find("timed launch") != std::string::npos || message.find("warm-up launch") != std::string::npos));
  CHECK(message.find("poison") != std::string::npos);  // the skipped launches never wrote the output
}

TEST_CASE("a kernel that writes past the end of its output is reported as a buffer violation with the indices") {
  const auto run = run_planted("write-past-end", "naive");
  INFO(run.output);
  CHECK(run.exit_code == 1);
  CHECK(run.status("transpose", "naive") == "buffer_violation");
  const auto& naive = run.task("transpose", "naive");
  CHECK(naive.at("finding") == "buffer_violation");
  CHECK(naive.at("points").get<double>() == 0);
  // The first case is 1 x 1: one element, so the planted writes land at indices 1..4.
  CHECK(message_of(run, "naive").find("wrote 4 elements past the end of out, indices 1..4") != std::string::npos);
  CHECK(run.output.find("buffer violation") != std::string::npos);
}

TEST_CASE("a kernel that writes before the start of its output is reported as a buffer violation with the indices") {
  const auto run = run_planted("write-before-start", "naive");
  INFO(run.output);
  CHECK(run.status("transpose", "naive") == "buffer_violation");
  CHECK(message_of(run, "naive").find("wrote 2 elements before the start of out, indices -2..-1") != std::string::npos);
}

TEST_CASE("a kernel that changes its input is reported as a buffer violation naming the input") {
  const auto run = run_planted("modify-input", "naive");
  INFO(run.output);
  CHECK(run.status("transpose", "naive") == "buffer_violation");
  CHECK(message_of(run, "naive").find("changed its input in: 1 of ") != std::string::npos);
  CHECK(message_of(run, "naive").find("the first at index 0") != std::string::npos);
}
