#include "baselines_cuda.hpp"
#include "gpulab/student/cuda.hpp"

namespace gpulab::labs::mandelbrot_cuda {

namespace {

// __fmul_rn and __fadd_rn are never fused into an FMA: the counts equal the CPU reference's.
__global__ void harness_naive_kernel(unsigned* counts, int width, int height, float x0, float y0, float dx, float dy,
                                     int max_iter, int julia, float cx, float cy) {
  const int px = blockIdx.x * blockDim.x + threadIdx.x;
  const int py = blockIdx.y * blockDim.y + threadIdx.y;
  if (px >= width || py >= height) return;
  const float re = __fadd_rn(x0, __fmul_rn(static_cast<float>(px), dx));
  const float im = __fadd_rn(y0, __fmul_rn(static_cast<float>(py), dy));
  float x = julia ? re : 0.0f, y = julia ? im : 0.0f;
  const float c_re = julia ? cx : re, c_im = julia ? cy : im;
  int n = 0;
  while (n < max_iter) {
    const float x2 = __fmul_rn(x, x), y2 = __fmul_rn(y, y);
    if (__fadd_rn(x2, y2) > 4.0f) break;
    const float xy = __fmul_rn(x, y);
    y = __fadd_rn(__fadd_rn(xy, xy), c_im);
    x = __fadd_rn(__fsub_rn(x2, y2), c_re);
    ++n;
  }
  counts[static_cast<size_t>(py) * width + px] = static_cast<unsigned>(n);
}

}  // namespace

void launch_naive(unsigned* counts, int width, int height, float x0, float y0, float dx, float dy, int max_iter,
                  int julia, float cx, float cy) {
  const dim3 block(16, 16);
  const dim3 grid(blocks_for(width, 16), blocks_for(height, 16));
  harness_naive_kernel<<<grid, block>>>(counts, width, height, x0, y0, dx, dy, max_iter, julia, cx, cy);
  check(cudaGetLastError(), "launching the harness's naive mandelbrot kernel");
}

}  // namespace gpulab::labs::mandelbrot_cuda
