// Calls the student's CUDA scans (labs/06-scan/scan.cu) with device pointers; CUB's inclusive scan
// is the library calibration.
#include "baselines_cuda.hpp"
#include "gpulab/backend/cuda.hpp"
#include "lab_contract.hpp"  // the functions lab.toml's [signatures] and tasks declare
#include "lab_driver.hpp"
#include "scan_lab.hpp"

namespace gpulab::labs {

ScanLaunch bind_scan(Device&, const std::string& function) {
  const auto f = find_function(contract::scan_functions(), function);
  return [f](Buffer& in, Buffer& out, Buffer& scratch, int n) {
    f(cuda::pointer<const unsigned>(in), cuda::pointer<unsigned>(out), cuda::pointer<unsigned>(scratch), n);
  };
}

std::optional<VendorScan> vendor_scan(Device&, int n) {
  auto cub = std::make_shared<scan_cuda::CubScan>(n);
  return VendorScan{"CUB DeviceScan", [cub](Buffer& in, Buffer& out, Buffer&, int count) {
                      cub->scan(cuda::pointer<const unsigned>(in), cuda::pointer<unsigned>(out), count);
                    }};
}

}  // namespace gpulab::labs
