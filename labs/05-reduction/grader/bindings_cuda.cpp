// Calls the student's CUDA sums (labs/05-reduction/reduction.cu) with device pointers; the harness's
// tree is the staff calibration, CUB's DeviceReduce::Sum the library one.
#include "baselines_cuda.hpp"
#include "gpulab/backend/cuda.hpp"
#include "lab_contract.hpp"  // the functions lab.toml's [signatures] and tasks declare
#include "lab_driver.hpp"
#include "reduction_lab.hpp"

namespace gpulab::labs {

ReduceLaunch bind_reduce(Device&, const std::string& function) {
  const auto f = find_function(contract::reduction_functions(), function);
  return [f](Buffer& in, Buffer& scratch, Buffer& out, int n) {
    f(cuda::pointer<const float>(in), cuda::pointer<float>(scratch), cuda::pointer<float>(out), n);
  };
}

ReduceLaunch staff_reduce(Device&) {
  return [](Buffer& in, Buffer& scratch, Buffer& out, int n) {
    reduction_cuda::staff_tree_sum(cuda::pointer<const float>(in), cuda::pointer<float>(scratch),
                                   cuda::pointer<float>(out), n);
  };
}

std::optional<VendorReduce> vendor_reduce(Device&, int n) {
  auto cub_sum = std::make_shared<reduction_cuda::DeviceSum>(n);
  return VendorReduce{"CUB DeviceReduce::Sum", [cub_sum](Buffer& in, Buffer& out, int count) {
                        cub_sum->sum(cuda::pointer<const float>(in), cuda::pointer<float>(out), count);
                      }};
}

}  // namespace gpulab::labs
