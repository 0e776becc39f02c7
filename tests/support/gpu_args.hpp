// The arguments that pick the GPU for `gpulab check` in the GPU-only tests.
#pragma once
#include <string>

namespace gpulab::testing {

inline std::string gpu_args(const std::string& backend) {
  // OpenCL lists GPUs first, so device 0 is the GPU when there is one.
  return "--backend " + backend + " --device 0";
}

}  // namespace gpulab::testing
