// Calls the student's CUDA functions (labs/02-transpose/transpose.cu) with device pointers.
#include "gpulab/backend/cuda.hpp"
#include "lab_contract.hpp"  // the functions lab.toml's [signatures] and tasks declare
#include "lab_driver.hpp"
#include "transpose_lab.hpp"

namespace gpulab::labs {

TransposeLaunch bind_transpose(Device&, const std::string& function) {
  const auto f = find_function(contract::transpose_functions(), function);
  return [f](Buffer& in, Buffer& out, int rows, int cols) {
    f(cuda::pointer<const float>(in), cuda::pointer<float>(out), rows, cols);
  };
}

}  // namespace gpulab::labs
