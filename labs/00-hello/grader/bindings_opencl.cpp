// Calls the student's OpenCL host function (labs/00-hello/hello_opencl.cpp) with host memory.
#include "gpulab/backend/opencl.hpp"
#include "hello_lab.hpp"
#include "lab_contract.hpp"  // the functions lab.toml's [signatures] and tasks declare
#include "lab_driver.hpp"

namespace gpulab::labs {

HelloLaunch bind_hello(Device& device, const std::string& function) {
  const auto f = find_function(contract::hello_functions(), function);
  const OpenCLLab& lab = opencl::lab(device);
  return [f, &lab](const char* text, const int* offsets, char* result, int n) { f(lab, text, offsets, result, n); };
}

}  // namespace gpulab::labs
