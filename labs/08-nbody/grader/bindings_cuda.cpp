// Calls the student's CUDA functions (labs/08-nbody/nbody.cu) with device pointers; the harness's
// naive kernel is the calibration.
#include <vector_types.h>  // float4, as the student's .cu sees it

#include "baselines_cuda.hpp"
#include "gpulab/backend/cuda.hpp"
#include "lab_contract.hpp"  // the functions lab.toml's [signatures] and tasks declare
#include "lab_driver.hpp"
#include "nbody_lab.hpp"

namespace gpulab::labs {

NbodyLaunch bind_nbody(Device&, const std::string& function) {
  const auto f = find_function(contract::nbody_functions(), function);
  return [f](Buffer& bodies, Buffer& accel, int n, float softening2) {
    f(cuda::pointer<const float4>(bodies), cuda::pointer<float4>(accel), n, softening2);
  };
}

NbodyLaunch harness_naive_nbody(Device&) {
  return [](Buffer& bodies, Buffer& accel, int n, float softening2) {
    nbody_cuda::launch_naive(cuda::pointer<const float>(bodies), cuda::pointer<float>(accel), n, softening2);
  };
}

}  // namespace gpulab::labs
