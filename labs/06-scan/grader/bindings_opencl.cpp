// Calls the student's OpenCL scans (labs/06-scan/scan_opencl.cpp) with buffers (OpenCL has no
// vendor scan).
#include "gpulab/backend/opencl.hpp"
#include "lab_driver.hpp"
#include "scan_lab.hpp"

// The lab's contract: these signatures are fixed, the grader calls them.
void scan_block(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, cl_mem scratch, int n);
void scan_any_n(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, cl_mem scratch, int n);
void scan_fast(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, cl_mem scratch, int n);

namespace gpulab::labs {

ScanLaunch bind_scan(Device& device, const std::string& function) {
  using Function = void (*)(const OpenCLLab&, cl_mem, cl_mem, cl_mem, int);
  static const std::map<std::string, Function> functions{
      {"scan_block", scan_block}, {"scan_any_n", scan_any_n}, {"scan_fast", scan_fast}};
  const Function f = find_function(functions, function);
  const OpenCLLab& lab = opencl::lab(device);
  return [f, &lab](Buffer& in, Buffer& out, Buffer& scratch, int n) {
    f(lab, opencl::memory(in), opencl::memory(out), opencl::memory(scratch), n);
  };
}

std::optional<VendorScan> vendor_scan(Device&, int) { return std::nullopt; }

}  // namespace gpulab::labs
