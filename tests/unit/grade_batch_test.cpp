// How `gpulab grade` plans a batch (grade_batch): the jobs it runs at once by default.
#include <doctest/doctest.h>

#include "grade.hpp"

TEST_CASE("a CUDA batch grades three submissions per GPU by default, one per 4 cores at most, and OpenCL one") {
  using gpulab::cli::default_jobs;
  CHECK(default_jobs("cuda", "", 1, 16) == 3);  // one H100, 16 cores: two compile while one runs
  CHECK(default_jobs("cuda", "", 2, 32) == 6);
  CHECK(default_jobs("cuda", "", 8, 16) == 4);  // the cores run out first
  CHECK(default_jobs("cuda", "", 1, 2) == 1);
  CHECK(default_jobs("cuda", "0", 2, 32) == 1);  // a chosen device: one lock, one job
  CHECK(default_jobs("cuda", "", 0, 16) == 1);
  CHECK(default_jobs("opencl", "", 2, 32) == 1);  // PoCL timings are fair only alone
}
