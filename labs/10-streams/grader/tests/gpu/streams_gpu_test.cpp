// The streams lab's defences on an NVIDIA GPU, with CUDA and with NVIDIA's OpenCL, where streams and
// queues really run at once: a result the host computed fails every task; work left on a stream or
// queue of one's own is waited for before the clock stops and the checks run; clCreateSubBuffer
// works on the buffers student code holds. Part of gpulab_gpu_tests (skipped, exit 77, without a
// CUDA device; GPULAB_TEST_LABS may leave streams out).
#include <doctest/doctest.h>

#include "cli_harness.hpp"
#include "gpu_args.hpp"

using namespace gpulab::testing;

namespace {

// The solutions with the files of `fixture` in place of 10-streams', graded on the GPU.
CliRun run_planted_on_gpu(const std::string& backend, const std::string& name, const std::string& fixture,
                          const std::string& args = "") {
  SourceTree tree("gpu-streams-" + backend + "-" + name);
  for (const auto& entry : fs::directory_iterator(repo_path(fixture)))
    if (entry.path().extension() != ".md")
      write_file(tree.root() / "10-streams" / entry.path().filename(), read_file(entry.path()));
  return run_check(tree.root(), gpu_args(backend) + " --lab streams " + args);
}

}  // namespace

TEST_CASE("on an NVIDIA GPU, a streams result computed on the host fails every task, with CUDA and with OpenCL") {
  if (!lab_selected("streams")) return;
  for (const std::string backend : {"cuda", "opencl"}) {
    CAPTURE(backend);
    const auto run =
        run_planted_on_gpu(backend, "host-computed", "tests/fixtures/submissions/host-computed/labs/10-streams");
    INFO(run.output);
    for (const char* task : {"serial", "pinned", "overlap"}) {
      CAPTURE(task);
      CHECK(run.status("streams", task) == "wrong_result");
      CHECK(run.task("streams", task).at("message").get<std::string>().find("without the key") != std::string::npos);
    }
  }
}

TEST_CASE("on an NVIDIA GPU, work left on a stream or queue of one's own is waited for before the checks") {
  if (!lab_selected("streams")) return;
  for (const std::string backend : {"cuda", "opencl"}) {
    CAPTURE(backend);
    const auto run = run_planted_on_gpu(backend, "second-stream",
                                        "tests/fixtures/submissions/second-stream/labs/10-streams", "--task overlap");
    INFO(run.output);
    // Correct (d_in's late copy counted): the grade is then the bound's, which a pipeline that also runs
    // busy kernels and a whole extra copy may miss. Either way the late work was waited for.
    const std::string status = run.status("streams", "overlap");
    CHECK((status == "passed" || status == "too_slow"));
  }
}

TEST_CASE("on NVIDIA's OpenCL, clCreateSubBuffer works on the buffers student code holds and stays guarded") {
  if (!lab_selected("streams")) return;
  const auto run = run_planted_on_gpu("opencl", "sub-buffers", "labs/10-streams/grader/tests/planted/sub-buffers");
  INFO(run.output);
  CHECK(run.status("streams", "pinned") == "buffer_violation");
  CHECK(run.status("streams", "overlap") == "buffer_violation");
  // serial is right; on a GPU its grade is only correctness (no bound), so it passes.
  CHECK(run.status("streams", "serial") == "passed");
}
