// The small text helpers (gpulab/text.hpp).
#include <doctest/doctest.h>

#include "gpulab/text.hpp"

using namespace gpulab;

TEST_CASE("replace_all replaces or removes every occurrence, left to right, and never loops on its own output") {
  CHECK(replace_all("/scratch/x/a.cu and /scratch/x/b.cu", "/scratch/x/") == "a.cu and b.cu");
  CHECK(replace_all("257x3 failed; 257x3 again", "257x3", "hidden case 1") ==
        "hidden case 1 failed; hidden case 1 again");
  CHECK(replace_all("aaa", "a", "aa") == "aaaaaa");
  CHECK(replace_all("text", "", "x") == "text");
}

TEST_CASE("lower_case lowers ASCII letters only, and shell_quote makes one word of anything") {
  CHECK(lower_case("CuBLAS_Sgemm-2") == "cublas_sgemm-2");
  CHECK(shell_quote("it's") == "'it'\\''s'");
}
