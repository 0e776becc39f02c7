// Lab 01-matmul (OpenCL host code): launches the kernels of matmul.cl.
#include "gpulab/student/opencl.hpp"

using gpulab::check;
using gpulab::round_up;

namespace {
// The kernels of this lab all take (a, b, c, m, n, k) and cover C with a 2-D NDRange.
void launch(const gpulab::OpenCLLab& lab, const char* name, cl_mem a, cl_mem b, cl_mem c, int m, int n, int k,
            const size_t local[2], const size_t global[2]) {
  cl_kernel kernel = lab.kernel(name);
  gpulab::set_args(kernel, a, b, c, m, n, k);
  check(clEnqueueNDRangeKernel(lab.queue(), kernel, 2, nullptr, global, local, 0, nullptr, nullptr),
        std::string("launching ") + name);
}
}  // namespace

// --8<-- [start:naive]
void matmul_naive(const gpulab::OpenCLLab& lab, cl_mem a, cl_mem b, cl_mem c, int m, int n, int k) {
  const size_t local[2] = {16, 16};
  const size_t global[2] = {round_up(n, 16), round_up(m, 16)};  // dimension 0 runs along a row of C
  launch(lab, "matmul_naive_kernel", a, b, c, m, n, k, local, global);
}
// --8<-- [end:naive]

// --8<-- [start:tiled]
void matmul_tiled(const gpulab::OpenCLLab& lab, cl_mem a, cl_mem b, cl_mem c, int m, int n, int k) {
  constexpr size_t tile = 32;  // TILE in matmul.cl
  const size_t local[2] = {tile, tile};
  const size_t global[2] = {round_up(n, tile), round_up(m, tile)};
  launch(lab, "matmul_tiled_kernel", a, b, c, m, n, k, local, global);
}
// --8<-- [end:tiled]

// --8<-- [start:fast]
void matmul_fast(const gpulab::OpenCLLab& lab, cl_mem a, cl_mem b, cl_mem c, int m, int n, int k) {
  constexpr size_t block = 128, threads = 256;  // BLOCK_M = BLOCK_N and THREADS in matmul.cl
  const size_t local[2] = {threads, 1};
  // One work-group of 256 work-items per 128 x 128 tile of C.
  const size_t global[2] = {round_up(n, block) / block * threads, round_up(m, block) / block};
  launch(lab, "matmul_fast_kernel", a, b, c, m, n, k, local, global);
}
// --8<-- [end:fast]
