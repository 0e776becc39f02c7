// Calls the student's OpenCL host function (labs/00-hello/hello_opencl.cpp) with host memory.
#include "gpulab/backend/opencl.hpp"
#include "hello_lab.hpp"
#include "lab_driver.hpp"

// The lab's contract: this signature is fixed, the grader calls it.
void hello(const gpulab::OpenCLLab& lab, const char* text, const int* offsets, char* result, int n);

namespace gpulab::labs {

HelloLaunch bind_hello(Device& device, const std::string& function) {
  using Function = void (*)(const OpenCLLab&, const char*, const int*, char*, int);
  static const std::map<std::string, Function> functions{{"hello", hello}};
  const Function f = find_function(functions, function);
  const OpenCLLab& lab = opencl::lab(device);
  return [f, &lab](const char* text, const int* offsets, char* result, int n) { f(lab, text, offsets, result, n); };
}

}  // namespace gpulab::labs
