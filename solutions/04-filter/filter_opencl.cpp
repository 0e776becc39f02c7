// Lab 04-filter (OpenCL host code): launches the kernels of filter.cl. The grader passes buffers
// of width x height uchar4 pixels; keep the five signatures.
#include <stdexcept>
#include <string>

#include "gpulab/student/opencl.hpp"

using gpulab::check;
using gpulab::round_up;

namespace {

constexpr size_t kBlockX = 32, kBlockY = 8;  // BLOCK_X, BLOCK_Y in filter.cl
constexpr int kMaxRadius = 8;                 // MAX_RADIUS in filter.cl

// Enqueues a 2-D NDRange of work-groups `local` covering at least `cover` work-items.
void launch_2d(const gpulab::OpenCLLab& lab, const char* name, cl_kernel kernel, const size_t cover[2],
               const size_t local[2]) {
  const size_t global[2] = {round_up(cover[0], local[0]), round_up(cover[1], local[1])};
  check(clEnqueueNDRangeKernel(lab.queue(), kernel, 2, nullptr, global, local, 0, nullptr, nullptr),
        std::string("enqueueing ") + name);
}

void launch_per_pixel(const gpulab::OpenCLLab& lab, const char* name, cl_mem in, cl_mem out, int width, int height,
                      const int* radius) {
  cl_kernel kernel = lab.kernel(name);
  if (radius)
    gpulab::set_args(kernel, in, out, width, height, *radius);
  else
    gpulab::set_args(kernel, in, out, width, height);
  const size_t cover[2] = {static_cast<size_t>(width), static_cast<size_t>(height)}, local[2] = {kBlockX, kBlockY};
  launch_2d(lab, name, kernel, cover, local);
}

// filter.cl's median kernels: work-groups of 32 x 4 (MEDIAN_GROUP_X, _Y), each work-item `pixels`
// pixels of `rows` rows (M3_PIXELS, M3_ROWS; M5_PIXELS and 2).
void launch_median(const gpulab::OpenCLLab& lab, const char* name, cl_mem in, cl_mem out, int width, int height,
                   int pixels, int rows) {
  cl_kernel kernel = lab.kernel(name);
  gpulab::set_args(kernel, in, out, width, height);
  const size_t cover[2] = {static_cast<size_t>((width + pixels - 1) / pixels),
                           static_cast<size_t>((height + rows - 1) / rows)},
               local[2] = {32, 4};
  launch_2d(lab, name, kernel, cover, local);
}

}  // namespace

void box_naive(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, int width, int height, int radius) {
  launch_per_pixel(lab, "box_naive_kernel", in, out, width, height, &radius);
}

void box_tiled(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, int width, int height, int radius) {
  launch_per_pixel(lab, "box_tiled_kernel", in, out, width, height, &radius);
}

void gaussian(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem temp, cl_mem out, int width, int height, int radius) {
  if (radius < 0 || radius > kMaxRadius)
    throw std::invalid_argument("gaussian: radius " + std::to_string(radius) + " is outside 0.." + std::to_string(kMaxRadius));
  // filter.cl has one pair of kernels per radius, each unrolled for it; a work-item filters 4 pixels.
  const size_t chunks = (static_cast<size_t>(width) + 3) / 4;
  const std::string rows_name = "gaussian_rows_r" + std::to_string(radius);
  cl_kernel rows = lab.kernel(rows_name.c_str());
  gpulab::set_args(rows, in, temp, width);
  const size_t row_cover[2] = {chunks, static_cast<size_t>(height)}, row_local[2] = {128, 1};  // ROW_THREADS
  launch_2d(lab, rows_name.c_str(), rows, row_cover, row_local);
  // The queue is in order: the vertical pass starts when the horizontal one has finished.
  const std::string columns_name = "gaussian_columns_r" + std::to_string(radius);
  cl_kernel columns = lab.kernel(columns_name.c_str());
  gpulab::set_args(columns, temp, out, width, height);
  const size_t column_cover[2] = {chunks, (static_cast<size_t>(height) + 7) / 8},  // COLUMN_OUTPUTS rows each
      column_local[2] = {64, 1};                                                      // COLUMN_THREADS
  launch_2d(lab, columns_name.c_str(), columns, column_cover, column_local);
}


void median3(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, int width, int height) {
  launch_median(lab, "median3_kernel", in, out, width, height, 4, 8);
}

void median5(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, int width, int height) {
  launch_median(lab, "median5_kernel", in, out, width, height, 2, 2);
}
