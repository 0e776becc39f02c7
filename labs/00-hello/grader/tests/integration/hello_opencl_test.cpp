// End-to-end behaviour of `gpulab check` on the OpenCL backend (PoCL in CI), shown on the hello lab,
// where student code allocates its own device buffers. Part of gpulab_integration_tests.
#include <doctest/doctest.h>

#include "cli_harness.hpp"

using namespace gpulab::testing;

namespace {

// A hello solution whose kernel body was left empty (host code complete), or whose result is never
// copied back: both must read "never written", not random bytes of an uninitialised buffer.
void check_unwritten_result(const char* what, const std::string& file, const std::string& from, const std::string& to) {
  SourceTree tree(std::string("hello-") + what);
  tree.replace("00-hello/" + file, from, to);
  const auto run = run_check(tree.root(), "--backend opencl --lab hello");
  INFO(run.output);
  CHECK(run.exit_code == 1);
  CHECK(run.status("hello", "hello") == "wrong_result");
  const std::string message = run.task("hello", "hello").at("message");
  CHECK(message.find("none of them was written (they still hold the poison pattern)") != std::string::npos);
  CHECK(message.find("did it copy them back?") != std::string::npos);
}

}  // namespace

TEST_CASE("an empty kernel body in a buffer the student allocated reads as never written, with what to check") {
  check_unwritten_result("empty-kernel", "hello.cl", "if (i < n) result[i] = (char)(text[i] + offsets[i]);", "");
}

TEST_CASE("a result never copied back to the host reads as never written, with what to check") {
  check_unwritten_result("no-copy-back", "hello_opencl.cpp",
                         "  check(clEnqueueReadBuffer(lab.queue(), d_result, CL_TRUE, 0, n * sizeof(char), result, 0, "
                         "nullptr, nullptr),\n        \"copying the result back\");",
                         "  check(clFinish(lab.queue()), \"waiting for the kernel\");");
}
