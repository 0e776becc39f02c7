// Calls the student's CUDA histograms (labs/07-histogram/histogram.cu) on device buffers; the harness's
// per-lane-bins histogram is the staff calibration, CUB's HistogramEven the library one.
#include "baselines_cuda.hpp"
#include "gpulab/backend/cuda.hpp"
#include "histogram_lab.hpp"
#include "lab_driver.hpp"

// The lab's contract: these signatures are fixed, the grader calls them.
void histogram_global(const unsigned char* bytes, unsigned* bins, int n);
void histogram_shared(const unsigned char* bytes, unsigned* bins, int n);
void histogram_fast(const unsigned char* bytes, unsigned* bins, int n);

namespace gpulab::labs {

namespace {
HistogramLaunch on_pointers(std::function<void(const unsigned char*, unsigned*, int)> f) {
  return [f = std::move(f)](Buffer& bytes, Buffer& bins, int n) {
    f(cuda::pointer<const unsigned char>(bytes), cuda::pointer<unsigned>(bins), n);
  };
}
}  // namespace

HistogramLaunch bind_histogram(Device&, const std::string& function) {
  using Function = void (*)(const unsigned char*, unsigned*, int);
  static const std::map<std::string, Function> functions{{"histogram_global", histogram_global},
                                                         {"histogram_shared", histogram_shared},
                                                         {"histogram_fast", histogram_fast}};
  return on_pointers(find_function(functions, function));
}

HistogramLaunch staff_histogram(Device&) { return on_pointers(histogram_cuda::staff_histogram); }

std::optional<VendorHistogram> vendor_histogram(Device&, int n) {
  auto cub = std::make_shared<histogram_cuda::VendorHistogram>(n);
  return VendorHistogram{"CUB HistogramEven", on_pointers([cub](const unsigned char* bytes, unsigned* bins, int count) {
                           cub->count(bytes, bins, count);
                         })};
}

}  // namespace gpulab::labs
