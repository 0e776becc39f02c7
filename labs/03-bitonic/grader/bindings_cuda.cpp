// Calls the student's CUDA sorts (labs/03-bitonic/bitonic.cu) on a device buffer; the harness's
// naive bitonic sort and CUB's radix sort are the calibrations.
#include "baselines_cuda.hpp"
#include "bitonic_lab.hpp"
#include "gpulab/backend/cuda.hpp"
#include "lab_driver.hpp"

// The lab's contract: these signatures are fixed, the grader calls them.
void bitonic_global(unsigned* keys, int n);
void bitonic_shared(unsigned* keys, int n);
void bitonic_any_n(unsigned* keys, int n);
void bitonic_fast(unsigned* keys, int n);

namespace gpulab::labs {

namespace {
SortLaunch on_pointer(std::function<void(unsigned*, int)> f) {
  return [f = std::move(f)](Buffer& keys, int n) { f(cuda::pointer<unsigned>(keys), n); };
}
}  // namespace

SortLaunch bind_sort(Device&, const std::string& function) {
  using Function = void (*)(unsigned*, int);
  static const std::map<std::string, Function> functions{{"bitonic_global", bitonic_global},
                                                         {"bitonic_shared", bitonic_shared},
                                                         {"bitonic_any_n", bitonic_any_n},
                                                         {"bitonic_fast", bitonic_fast}};
  return on_pointer(find_function(functions, function));
}

SortLaunch harness_naive_sort(Device&) { return on_pointer(bitonic_cuda::naive_sort); }

std::optional<VendorSort> vendor_sort(Device&, int n) {
  auto radix = std::make_shared<bitonic_cuda::RadixSort>(n);
  return VendorSort{"CUB radix sort", on_pointer([radix](unsigned* keys, int count) { radix->sort(keys, count); })};
}

}  // namespace gpulab::labs
