// Calls the student's CUDA functions (labs/04-filter/filter.cu) with device pointers; the harness's
// staff kernels (baselines_cuda.cu) are the calibrations of the staff_fraction bounds.
#include <vector_types.h>  // uchar4

#include "baselines_cuda.hpp"
#include "filter_lab.hpp"
#include "gpulab/backend/cuda.hpp"
#include "lab_driver.hpp"

// The lab's contract: these signatures are fixed, the grader calls them.
void box_naive(const uchar4* in, uchar4* out, int width, int height, int radius);
void box_tiled(const uchar4* in, uchar4* out, int width, int height, int radius);
void gaussian(const uchar4* in, uchar4* temp, uchar4* out, int width, int height, int radius);
void median3(const uchar4* in, uchar4* out, int width, int height);
void median5(const uchar4* in, uchar4* out, int width, int height);

namespace gpulab::labs {

FilterLaunch bind_filter(Device&, const std::string& function) {
  using Launch = void (*)(const uchar4*, uchar4*, uchar4*, int, int, int);
  // One shape for all: the harness passes what a function needs and drops the rest.
  static const std::map<std::string, Launch> functions{
      {"box_naive", [](const uchar4* in, uchar4*, uchar4* out, int w, int h, int r) { box_naive(in, out, w, h, r); }},
      {"box_tiled", [](const uchar4* in, uchar4*, uchar4* out, int w, int h, int r) { box_tiled(in, out, w, h, r); }},
      {"gaussian",
       [](const uchar4* in, uchar4* temp, uchar4* out, int w, int h, int r) { gaussian(in, temp, out, w, h, r); }},
      {"median3", [](const uchar4* in, uchar4*, uchar4* out, int w, int h, int) { median3(in, out, w, h); }},
      {"median5", [](const uchar4* in, uchar4*, uchar4* out, int w, int h, int) { median5(in, out, w, h); }},
  };
  const Launch f = find_function(functions, function);
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
