// Calls the student's OpenCL histograms (labs/07-histogram/histogram_opencl.cpp) with buffers; the
// harness's per-lane-bins histogram is the staff calibration (OpenCL has no vendor histogram).
#include <algorithm>

#include "gpulab/backend/opencl.hpp"
#include "histogram_lab.hpp"
#include "lab_contract.hpp"  // the functions lab.toml's [signatures] and tasks declare
#include "lab_driver.hpp"

namespace gpulab::labs {

namespace {
// The staff kernel, as the CUDA one (baselines_cuda.cu): bin b of lane l at lane_bins[b * 32 + l].
const char* kStaffHistogram = R"(
#define BINS 256
#define THREADS 256
#define LANES 32
void count_word(__local uint* mine, uint word) {
  for (int k = 0; k < 4; ++k) atomic_inc(&mine[((word >> (8 * k)) & 0xFF) * LANES]);
}
void count_vector(__local uint* mine, uint4 v) {
  count_word(mine, v.x);
  count_word(mine, v.y);
  count_word(mine, v.z);
  count_word(mine, v.w);
}
__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1)))
void harness_histogram(__global const uchar* restrict bytes, __global uint* bins, int n) {
  __local uint lane_bins[BINS * LANES];
  const int lid = get_local_id(0);
  for (int i = lid; i < BINS * LANES; i += THREADS) lane_bins[i] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  __local uint* mine = lane_bins + lid % LANES;
  const int stride = get_global_size(0), first = get_global_id(0);
  const int vectors = n / 16;
  __global const uint4* as_vectors = (__global const uint4*)bytes;
  int v = first;
  for (; v + stride < vectors; v += 2 * stride) {
    const uint4 a = as_vectors[v], b = as_vectors[v + stride];
    count_vector(mine, a);
    count_vector(mine, b);
  }
  if (v < vectors) count_vector(mine, as_vectors[v]);
  for (int i = vectors * 16 + first; i < n; i += stride) atomic_inc(&mine[bytes[i] * LANES]);
  barrier(CLK_LOCAL_MEM_FENCE);
  uint count = 0;
  for (int l = 0; l < LANES; ++l) count += lane_bins[lid * LANES + (lid + l) % LANES];
  if (count > 0) atomic_add(&bins[lid], count);
}
)";
}  // namespace

// Four work-groups of 32 KiB of bins per compute unit, as the reference solution launches.
HistogramLaunch staff_histogram(Device& device) {
  cl_kernel kernel = opencl::harness_kernel(device, kStaffHistogram, "harness_histogram");
  const OpenCLLab& lab = opencl::lab(device);
  cl_uint units = 1;
  check(clGetDeviceInfo(lab.device(), CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, nullptr),
        "asking for the compute unit count");
  return [kernel, &lab, units](Buffer& bytes, Buffer& bins, int n) {
    const cl_uint zero = 0;
    check(clEnqueueFillBuffer(lab.queue(), opencl::memory(bins), &zero, sizeof zero, 0, 256 * sizeof zero, 0, nullptr,
                              nullptr),
          "zeroing the bins of the harness's histogram");
    set_args(kernel, opencl::memory(bytes), opencl::memory(bins), n);
    const size_t threads = 256, needed = (static_cast<size_t>(n) / 16 + threads) / threads;
    const size_t groups = std::max<size_t>(1, std::min<size_t>(needed, size_t{units} * 4));
    const size_t global = groups * threads;
    check(clEnqueueNDRangeKernel(lab.queue(), kernel, 1, nullptr, &global, &threads, 0, nullptr, nullptr),
          "launching the harness's histogram");
  };
}

HistogramLaunch bind_histogram(Device& device, const std::string& function) {
  const auto f = find_function(contract::histogram_functions(), function);
  const OpenCLLab& lab = opencl::lab(device);
  return [f, &lab](Buffer& bytes, Buffer& bins, int n) { f(lab, opencl::memory(bytes), opencl::memory(bins), n); };
}

std::optional<VendorHistogram> vendor_histogram(Device&, int) { return std::nullopt; }

}  // namespace gpulab::labs
