// Calls the student's OpenCL host functions (labs/05-reduction/reduction_opencl.cpp) with buffers; the
// harness's tree is the staff calibration (OpenCL has no vendor reduction).
#include "gpulab/backend/opencl.hpp"
#include "lab_contract.hpp"  // the functions lab.toml's [signatures] and tasks declare
#include "lab_driver.hpp"
#include "reduction_lab.hpp"

namespace gpulab::labs {

namespace {
// The staff tree: as the CUDA one (baselines_cuda.cu), each level reading from `src + src_offset` and
// writing its block sums at `dst + dst_offset`.
const char* kStaffTree = R"(
#define THREADS 256
__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1)))
void harness_tree(__global const float* src, int src_offset, int n, __global float* dst, int dst_offset) {
  __local float partial[THREADS];
  const int t = get_local_id(0);
  const int i = get_group_id(0) * 2 * THREADS + t;
  src += src_offset;
  float sum = i < n ? src[i] : 0.0f;
  if (i + THREADS < n) sum += src[i + THREADS];
  partial[t] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int stride = THREADS / 2; stride > 0; stride /= 2) {
    if (t < stride) partial[t] += partial[t + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (t == 0) dst[dst_offset + get_group_id(0)] = partial[0];
}
)";
}  // namespace

ReduceLaunch bind_reduce(Device& device, const std::string& function) {
  const auto f = find_function(contract::reduction_functions(), function);
  const OpenCLLab& lab = opencl::lab(device);
  return [f, &lab](Buffer& in, Buffer& scratch, Buffer& out, int n) {
    f(lab, opencl::memory(in), opencl::memory(scratch), opencl::memory(out), n);
  };
}

ReduceLaunch staff_reduce(Device& device) {
  cl_kernel kernel = opencl::harness_kernel(device, kStaffTree, "harness_tree");
  const OpenCLLab& lab = opencl::lab(device);
  return [kernel, &lab](Buffer& in, Buffer& scratch, Buffer& out, int n) {
    constexpr int threads = 256, elements = 2 * threads;
    cl_mem level = opencl::memory(in);
    int level_offset = 0, next_offset = 0;
    for (int count = n;;) {
      const int groups = (count + elements - 1) / elements;
      cl_mem sums = groups == 1 ? opencl::memory(out) : opencl::memory(scratch);
      const int sums_offset = groups == 1 ? 0 : next_offset;
      set_args(kernel, level, level_offset, count, sums, sums_offset);
      const size_t global = static_cast<size_t>(groups) * threads, local = threads;
      check(clEnqueueNDRangeKernel(lab.queue(), kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr),
            "launching the harness's tree reduction");
      if (groups == 1) return;
      level = opencl::memory(scratch);
      level_offset = sums_offset;
      next_offset = sums_offset + groups;
      count = groups;
    }
  };
}

std::optional<VendorReduce> vendor_reduce(Device&, int) { return std::nullopt; }

}  // namespace gpulab::labs
