// Calls the student's OpenCL histograms (labs/07-histogram/histogram_opencl.cpp) with buffers
// (OpenCL has no vendor histogram).
#include "gpulab/backend/opencl.hpp"
#include "histogram_lab.hpp"
#include "lab_driver.hpp"

// The lab's contract: these signatures are fixed, the grader calls them.
void histogram_global(const gpulab::OpenCLLab& lab, cl_mem bytes, cl_mem bins, int n);
void histogram_shared(const gpulab::OpenCLLab& lab, cl_mem bytes, cl_mem bins, int n);
void histogram_fast(const gpulab::OpenCLLab& lab, cl_mem bytes, cl_mem bins, int n);

namespace gpulab::labs {

HistogramLaunch bind_histogram(Device& device, const std::string& function) {
  using Function = void (*)(const OpenCLLab&, cl_mem, cl_mem, int);
  static const std::map<std::string, Function> functions{{"histogram_global", histogram_global},
                                                         {"histogram_shared", histogram_shared},
                                                         {"histogram_fast", histogram_fast}};
  const Function f = find_function(functions, function);
  const OpenCLLab& lab = opencl::lab(device);
  return [f, &lab](Buffer& bytes, Buffer& bins, int n) { f(lab, opencl::memory(bytes), opencl::memory(bins), n); };
}

std::optional<VendorHistogram> vendor_histogram(Device&, int) { return std::nullopt; }

}  // namespace gpulab::labs
