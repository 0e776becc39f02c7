// Calls the student's OpenCL host functions (labs/02-transpose/transpose_opencl.cpp) with buffers.
#include "gpulab/backend/opencl.hpp"
#include "lab_contract.hpp"  // the functions lab.toml's [signatures] and tasks declare
#include "lab_driver.hpp"
#include "transpose_lab.hpp"

namespace gpulab::labs {

TransposeLaunch bind_transpose(Device& device, const std::string& function) {
  const auto f = find_function(contract::transpose_functions(), function);
  const OpenCLLab& lab = opencl::lab(device);
  return [f, &lab](Buffer& in, Buffer& out, int rows, int cols) {
    f(lab, opencl::memory(in), opencl::memory(out), rows, cols);
  };
}

}  // namespace gpulab::labs
