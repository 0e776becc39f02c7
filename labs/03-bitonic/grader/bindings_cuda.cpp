// Calls the student's CUDA sorts (labs/03-bitonic/bitonic.cu) on a device buffer; the harness's
// naive bitonic sort and CUB's radix sort are the calibrations.
#include "baselines_cuda.hpp"
#include "bitonic_lab.hpp"
#include "gpulab/backend/cuda.hpp"
#include "lab_contract.hpp"  // the functions lab.toml's [signatures] and tasks declare
#include "lab_driver.hpp"

namespace gpulab::labs {

namespace {
SortLaunch on_pointer(std::function<void(unsigned*, int)> f) {
  return [f = std::move(f)](Buffer& keys, int n) { f(cuda::pointer<unsigned>(keys), n); };
}
}  // namespace

SortLaunch bind_sort(Device&, const std::string& function) {
  return on_pointer(find_function(contract::bitonic_functions(), function));
}

SortLaunch harness_naive_sort(Device&) { return on_pointer(bitonic_cuda::naive_sort); }

std::optional<VendorSort> vendor_sort(Device&, int n) {
  auto radix = std::make_shared<bitonic_cuda::RadixSort>(n);
  return VendorSort{"CUB radix sort", on_pointer([radix](unsigned* keys, int count) { radix->sort(keys, count); })};
}

}  // namespace gpulab::labs
