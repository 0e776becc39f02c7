// Calls the student's OpenCL host functions (labs/05-reduction/reduction_opencl.cpp) with buffers
// (OpenCL has no vendor reduction).
#include "gpulab/backend/opencl.hpp"
#include "lab_driver.hpp"
#include "reduction_lab.hpp"

// The lab's contract: these signatures are fixed, the grader calls them.
void reduce_atomic(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem scratch, cl_mem out, int n);
void reduce_tree(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem scratch, cl_mem out, int n);
void reduce_fast(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem scratch, cl_mem out, int n);

namespace gpulab::labs {

ReduceLaunch bind_reduce(Device& device, const std::string& function) {
  using Function = void (*)(const OpenCLLab&, cl_mem, cl_mem, cl_mem, int);
  static const std::map<std::string, Function> functions{
      {"reduce_atomic", reduce_atomic}, {"reduce_tree", reduce_tree}, {"reduce_fast", reduce_fast}};
  const Function f = find_function(functions, function);
  const OpenCLLab& lab = opencl::lab(device);
  return [f, &lab](Buffer& in, Buffer& scratch, Buffer& out, int n) {
    f(lab, opencl::memory(in), opencl::memory(scratch), opencl::memory(out), n);
  };
}

std::optional<VendorReduce> vendor_reduce(Device&, int) { return std::nullopt; }

}  // namespace gpulab::labs
