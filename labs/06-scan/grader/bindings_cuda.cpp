// Calls the student's CUDA scans (labs/06-scan/scan.cu) with device pointers; CUB's inclusive scan
// is the library calibration.
#include "baselines_cuda.hpp"
#include "gpulab/backend/cuda.hpp"
#include "lab_driver.hpp"
#include "scan_lab.hpp"

// The lab's contract: these signatures are fixed, the grader calls them.
void scan_block(const unsigned* in, unsigned* out, unsigned* scratch, int n);
void scan_any_n(const unsigned* in, unsigned* out, unsigned* scratch, int n);
void scan_fast(const unsigned* in, unsigned* out, unsigned* scratch, int n);

namespace gpulab::labs {

ScanLaunch bind_scan(Device&, const std::string& function) {
  using Function = void (*)(const unsigned*, unsigned*, unsigned*, int);
  static const std::map<std::string, Function> functions{
      {"scan_block", scan_block}, {"scan_any_n", scan_any_n}, {"scan_fast", scan_fast}};
  const Function f = find_function(functions, function);
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
