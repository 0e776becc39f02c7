// Calls the student's CUDA functions (labs/08-nbody/nbody.cu) with device pointers; the harness's
// naive kernel is the calibration.
#include <vector_types.h>  // float4, as the student's .cu sees it

#include "baselines_cuda.hpp"
#include "gpulab/backend/cuda.hpp"
#include "lab_driver.hpp"
#include "nbody_lab.hpp"

// The lab's contract: these signatures are fixed, the grader calls them.
void nbody_naive(const float4* bodies, float4* accel, int n, float softening2);
void nbody_tiled(const float4* bodies, float4* accel, int n, float softening2);
void nbody_fast(const float4* bodies, float4* accel, int n, float softening2);

namespace gpulab::labs {

NbodyLaunch bind_nbody(Device&, const std::string& function) {
  using Function = void (*)(const float4*, float4*, int, float);
  static const std::map<std::string, Function> functions{
      {"nbody_naive", nbody_naive}, {"nbody_tiled", nbody_tiled}, {"nbody_fast", nbody_fast}};
  const Function f = find_function(functions, function);
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
