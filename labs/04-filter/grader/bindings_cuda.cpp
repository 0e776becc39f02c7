// Calls the student's CUDA functions (labs/04-filter/filter.cu) with device pointers; the harness's
// staff kernels (baselines_cuda.cu) are the calibrations of the staff_fraction bounds.
#include <vector_types.h>  // uchar4

#include "baselines_cuda.hpp"
#include "filter_lab.hpp"
#include "gpulab/backend/cuda.hpp"
#include "lab_contract.hpp"  // the functions lab.toml's [signatures] and tasks declare
#include "lab_driver.hpp"

namespace gpulab::labs {

FilterLaunch bind_filter(Device&, const std::string& function) {
  // One shape for all: the harness passes what a function needs and drops the rest.
  if (auto* f = lookup_function(contract::box_functions(), function))
    return [f](Buffer& in, Buffer&, Buffer& out, int width, int height, int radius) {
      f(cuda::pointer<const uchar4>(in), cuda::pointer<uchar4>(out), width, height, radius);
    };
  if (auto* f = lookup_function(contract::median_functions(), function))
    return [f](Buffer& in, Buffer&, Buffer& out, int width, int height, int) {
      f(cuda::pointer<const uchar4>(in), cuda::pointer<uchar4>(out), width, height);
    };
  const auto f = find_function(contract::gaussian_functions(), function);
  return [f](Buffer& in, Buffer& temp, Buffer& out, int width, int height, int radius) {
    f(cuda::pointer<const uchar4>(in), cuda::pointer<uchar4>(temp), cuda::pointer<uchar4>(out), width, height, radius);
  };
}

StaffLaunch staff_filter(Device&, const std::string& function) {
  if (function == "box_tiled")
    return [](Buffer& in, Buffer& out, int width, int height, int radius) {
      filter_cuda::staff_box_tiled(cuda::pointer<const void>(in), cuda::pointer<void>(out), width, height, radius);
    };
  if (function == "median5")
    return [](Buffer& in, Buffer& out, int width, int height, int) {
      filter_cuda::staff_median5(cuda::pointer<const void>(in), cuda::pointer<void>(out), width, height);
    };
  throw std::invalid_argument("the filter lab has no staff kernel for '" + function + "'");
}

}  // namespace gpulab::labs
