// The backend the planted-fault tests (gpulab_precision_tests) run on: `--backend=opencl` (the
// default, PoCL in CI) or `--backend=cuda`; set by tests/integration/planted_main.cpp.
#pragma once
#include <string>

namespace gpulab::testing {

std::string& planted_backend();

}  // namespace gpulab::testing
