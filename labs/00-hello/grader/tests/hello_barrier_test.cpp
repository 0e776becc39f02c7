// An off-by-one bounds test is no barrier finding: the barrier check (grader/cli/checks/barrier_check.hpp) on
// this lab's reference solution, planted with the mistake the sanitizer finds instead.
#include <doctest/doctest.h>

#include "barrier_check.hpp"
#include "cli_harness.hpp"

using namespace gpulab;
namespace fs = std::filesystem;
using gpulab::testing::read_file;
using gpulab::testing::replaced;

TEST_CASE("an off-by-one bounds test in lab 00 is for the sanitizer, not a barrier finding" *
          doctest::skip(!gpulab::testing::instructor_repository())) {
  const fs::path lab = fs::path(GPULAB_REPO) / "solutions" / "00-hello";
  CHECK(cli::find_divergent_barriers(replaced(read_file(lab / "hello.cu"), "if (i < n)", "if (i <= n)")).empty());
  CHECK(cli::find_divergent_barriers(replaced(read_file(lab / "hello.cl"), "if (i < n)", "if (i <= n)")).empty());
}
