// Calls the student's OpenCL scans (labs/06-scan/scan_opencl.cpp) with buffers (OpenCL has no
// vendor scan).
#include "gpulab/backend/opencl.hpp"
#include "lab_contract.hpp"  // the functions lab.toml's [signatures] and tasks declare
#include "lab_driver.hpp"
#include "scan_lab.hpp"

namespace gpulab::labs {

ScanLaunch bind_scan(Device& device, const std::string& function) {
  const auto f = find_function(contract::scan_functions(), function);
  const OpenCLLab& lab = opencl::lab(device);
  return [f, &lab](Buffer& in, Buffer& out, Buffer& scratch, int n) {
    f(lab, opencl::memory(in), opencl::memory(out), opencl::memory(scratch), n);
  };
}

std::optional<VendorScan> vendor_scan(Device&, int) { return std::nullopt; }

}  // namespace gpulab::labs
