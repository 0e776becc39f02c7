// Calls the student's CUDA histograms (labs/07-histogram/histogram.cu) on device buffers; the harness's
// per-lane-bins histogram is the staff calibration, CUB's HistogramEven the library one.
#include "baselines_cuda.hpp"
#include "gpulab/backend/cuda.hpp"
#include "histogram_lab.hpp"
#include "lab_contract.hpp"  // the functions lab.toml's [signatures] and tasks declare
#include "lab_driver.hpp"

namespace gpulab::labs {

namespace {
HistogramLaunch on_pointers(std::function<void(const unsigned char*, unsigned*, int)> f) {
  return [f = std::move(f)](Buffer& bytes, Buffer& bins, int n) {
    f(cuda::pointer<const unsigned char>(bytes), cuda::pointer<unsigned>(bins), n);
  };
}
}  // namespace

HistogramLaunch bind_histogram(Device&, const std::string& function) {
  return on_pointers(find_function(contract::histogram_functions(), function));
}

HistogramLaunch staff_histogram(Device&) { return on_pointers(histogram_cuda::staff_histogram); }

std::optional<VendorHistogram> vendor_histogram(Device&, int n) {
  auto cub = std::make_shared<histogram_cuda::VendorHistogram>(n);
  return VendorHistogram{"CUB HistogramEven", on_pointers([cub](const unsigned char* bytes, unsigned* bins, int count) {
                           cub->count(bytes, bins, count);
                         })};
}

}  // namespace gpulab::labs
