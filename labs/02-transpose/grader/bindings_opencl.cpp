// Calls the student's OpenCL host functions (labs/02-transpose/transpose_opencl.cpp) with buffers.
#include "gpulab/backend/opencl.hpp"
#include "lab_driver.hpp"
#include "transpose_lab.hpp"

// The lab's contract: these signatures are fixed, the grader calls them.
void transpose_naive(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, int rows, int cols);
void transpose_optimized(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, int rows, int cols);

namespace gpulab::labs {

TransposeLaunch bind_transpose(Device& device, const std::string& function) {
  using Function = void (*)(const OpenCLLab&, cl_mem, cl_mem, int, int);
  static const std::map<std::string, Function> functions{{"transpose_naive", transpose_naive},
                                                         {"transpose_optimized", transpose_optimized}};
  const Function f = find_function(functions, function);
  const OpenCLLab& lab = opencl::lab(device);
  return [f, &lab](Buffer& in, Buffer& out, int rows, int cols) {
    f(lab, opencl::memory(in), opencl::memory(out), rows, cols);
  };
}

}  // namespace gpulab::labs
