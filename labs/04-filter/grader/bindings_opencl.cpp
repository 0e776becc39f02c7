// Calls the student's OpenCL host functions (labs/04-filter/filter_opencl.cpp) with buffers; the
// harness's staff kernels are the calibrations of the staff_fraction bounds.
#include "filter_lab.hpp"
#include "gpulab/backend/opencl.hpp"
#include "lab_contract.hpp"  // the functions lab.toml's [signatures] and tasks declare
#include "lab_driver.hpp"

namespace gpulab::labs {

namespace {

// The staff kernels (filter_lab.hpp): the reference solution's designs, written for the harness.
const char* kStaffBoxTiled = R"(
#define MAX_RADIUS 8
#define BLOCK_X 32
#define BLOCK_Y 8
__kernel __attribute__((reqd_work_group_size(BLOCK_X, BLOCK_Y, 1)))
void staff_box_tiled(__global const uchar4* in, __global uchar4* out, int width, int height, int radius) {
  __local uchar4 tile[BLOCK_Y + 2 * MAX_RADIUS][BLOCK_X + 2 * MAX_RADIUS];
  __local uint4 row_sums[BLOCK_Y + 2 * MAX_RADIUS][BLOCK_X];
  const int lx = get_local_id(0), ly = get_local_id(1);
  const int tile_w = BLOCK_X + 2 * radius, tile_h = BLOCK_Y + 2 * radius;
  const int x0 = get_group_id(0) * BLOCK_X - radius, y0 = get_group_id(1) * BLOCK_Y - radius;
  for (int ty = ly; ty < tile_h; ty += BLOCK_Y) {
    __global const uchar4* row = in + (size_t)clamp(y0 + ty, 0, height - 1) * width;
    for (int tx = lx; tx < tile_w; tx += BLOCK_X) tile[ty][tx] = row[clamp(x0 + tx, 0, width - 1)];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int ty = ly; ty < tile_h; ty += BLOCK_Y) {
    uint4 sum = (uint4)(0);
    for (int dx = 0; dx <= 2 * radius; ++dx) sum += convert_uint4(tile[ty][lx + dx]);
    row_sums[ty][lx] = sum;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  uint4 sum = (uint4)(0);
  for (int dy = 0; dy <= 2 * radius; ++dy) sum += row_sums[ly + dy][lx];
  const uint n = (2 * radius + 1) * (2 * radius + 1);
  out[(size_t)y * width + x] = convert_uchar4((sum + n / 2) / n);
}
)";

// Two channels per 32-bit word in 16-bit lanes (r, b and g, a), ushort2 min and max, forgetful
// selection, a 2 x 2 block of outputs per work-item that takes in their shared values first.
const char* kStaffMedian5 = R"(
uint even_lanes(uint pixel) { return pixel & 0x00FF00FFu; }
uint odd_lanes(uint pixel) { return (pixel >> 8) & 0x00FF00FFu; }
uint join_lanes(uint even, uint odd) { return even | odd << 8; }
uint lo(uint a, uint b) { return as_uint(min(as_ushort2(a), as_ushort2(b))); }
uint hi(uint a, uint b) { return as_uint(max(as_ushort2(a), as_ushort2(b))); }
void order(uint* a, uint* b) {
  const uint smaller = lo(*a, *b);
  *b = hi(*a, *b);
  *a = smaller;
}
uint median_of_3(uint a, uint b, uint c) { return hi(lo(a, b), lo(hi(a, b), c)); }
#define HELD 14
void forget_extremes(uint v[HELD], int last, uint next) {
#pragma unroll
  for (int i = 1; i <= last; ++i) order(&v[0], &v[i]);
#pragma unroll
  for (int i = 1; i < last; ++i) order(&v[i], &v[last]);
  v[0] = next;
}
void median5_lanes(const uint v[6][6], uint median[2][2]) {
  uint all[HELD];
#pragma unroll
  for (int k = 0; k < HELD; ++k) all[k] = v[1 + k / 4][1 + k % 4];
  forget_extremes(all, 13, v[4][3]);
  forget_extremes(all, 12, v[4][4]);
#pragma unroll
  for (int x = 0; x < 2; ++x) {
    uint column[HELD];
#pragma unroll
    for (int k = 0; k < HELD; ++k) column[k] = all[k];
#pragma unroll
    for (int k = 0; k < 4; ++k) forget_extremes(column, 11 - k, v[1 + k][x == 0 ? 0 : 5]);
#pragma unroll
    for (int y = 0; y < 2; ++y) {
      uint own[HELD];
#pragma unroll
      for (int k = 0; k < HELD; ++k) own[k] = column[k];
#pragma unroll
      for (int k = 0; k < 5; ++k) forget_extremes(own, 7 - k, v[y == 0 ? 0 : 5][x + k]);
      median[y][x] = median_of_3(own[0], own[1], own[2]);
    }
  }
}
__kernel __attribute__((reqd_work_group_size(32, 4, 1)))
void staff_median5(__global const uint* in, __global uint* out, int width, int height) {
  const int x0 = 2 * get_global_id(0), y0 = 2 * get_global_id(1);
  if (x0 >= width || y0 >= height) return;
  uint even[6][6], odd[6][6], even_median[2][2], odd_median[2][2];
#pragma unroll
  for (int r = 0; r < 6; ++r) {
    __global const uint* row = in + (size_t)clamp(y0 - 2 + r, 0, height - 1) * width;
    uint px[6];
    px[0] = row[max(x0 - 2, 0)];
    px[1] = row[max(x0 - 1, 0)];
    px[4] = row[min(x0 + 2, width - 1)];
    px[5] = row[min(x0 + 3, width - 1)];
    if (width % 2 == 0) {
      vstore2(vload2(0, row + x0), 0, px + 2);
    } else {
      px[2] = row[x0];
      px[3] = row[min(x0 + 1, width - 1)];
    }
#pragma unroll
    for (int c = 0; c < 6; ++c) even[r][c] = even_lanes(px[c]), odd[r][c] = odd_lanes(px[c]);
  }
  median5_lanes(even, even_median);
  median5_lanes(odd, odd_median);
#pragma unroll
  for (int y = 0; y < 2; ++y) {
    if (y0 + y >= height) break;
    __global uint* row = out + (size_t)(y0 + y) * width;
    row[x0] = join_lanes(even_median[y][0], odd_median[y][0]);
    if (x0 + 1 < width) row[x0 + 1] = join_lanes(even_median[y][1], odd_median[y][1]);
  }
}
)";

}  // namespace

FilterLaunch bind_filter(Device& device, const std::string& function) {
  const OpenCLLab& lab = opencl::lab(device);
  // One shape for all: the harness passes what a function needs and drops the rest.
  if (auto* f = lookup_function(contract::box_functions(), function))
    return [f, &lab](Buffer& in, Buffer&, Buffer& out, int width, int height, int radius) {
      f(lab, opencl::memory(in), opencl::memory(out), width, height, radius);
    };
  if (auto* f = lookup_function(contract::median_functions(), function))
    return [f, &lab](Buffer& in, Buffer&, Buffer& out, int width, int height, int) {
      f(lab, opencl::memory(in), opencl::memory(out), width, height);
    };
  const auto f = find_function(contract::gaussian_functions(), function);
  return [f, &lab](Buffer& in, Buffer& temp, Buffer& out, int width, int height, int radius) {
    f(lab, opencl::memory(in), opencl::memory(temp), opencl::memory(out), width, height, radius);
  };
}

}  // namespace gpulab::labs

namespace gpulab::labs {

StaffLaunch staff_filter(Device& device, const std::string& function) {
  const OpenCLLab& lab = opencl::lab(device);
  if (function == "box_tiled") {
    cl_kernel kernel = opencl::harness_kernel(device, kStaffBoxTiled, "staff_box_tiled");
    return [kernel, &lab](Buffer& in, Buffer& out, int width, int height, int radius) {
      set_args(kernel, opencl::memory(in), opencl::memory(out), width, height, radius);
      const size_t local[2] = {32, 8}, global[2] = {round_up(width, 32), round_up(height, 8)};
      check(clEnqueueNDRangeKernel(lab.queue(), kernel, 2, nullptr, global, local, 0, nullptr, nullptr),
            "launching the harness's tiled box filter");
    };
  }
  if (function == "median5") {
    cl_kernel kernel = opencl::harness_kernel(device, kStaffMedian5, "staff_median5");
    return [kernel, &lab](Buffer& in, Buffer& out, int width, int height, int) {
      set_args(kernel, opencl::memory(in), opencl::memory(out), width, height);
      const size_t local[2] = {32, 4};
      const size_t global[2] = {round_up((width + 1) / 2, 32), round_up((height + 1) / 2, 4)};
      check(clEnqueueNDRangeKernel(lab.queue(), kernel, 2, nullptr, global, local, 0, nullptr, nullptr),
            "launching the harness's 5x5 median");
    };
  }
  throw std::invalid_argument("the filter lab has no staff kernel for '" + function + "'");
}

}  // namespace gpulab::labs
