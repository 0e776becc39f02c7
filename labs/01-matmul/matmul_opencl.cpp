// Lab 01-matmul (OpenCL host code): launches the kernels of matmul.cl. Read README.md, fill in the
// TODOs, and run `make check BACKEND=opencl` in this folder. Keep the three signatures.
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

void matmul_naive(const gpulab::OpenCLLab& lab, cl_mem a, cl_mem b, cl_mem c, int m, int n, int k) {
  // TODO (NDRange): local size {16, 16}; a global size that covers C, rounded up to whole
  // work-groups: {round_up(n, 16), round_up(m, 16)} (dimension 0 runs along a row of C). Then
  // launch(lab, "matmul_naive_kernel", a, b, c, m, n, k, local, global).
  GPULAB_NOT_IMPLEMENTED("matmul_naive: launch matmul_naive_kernel (see the TODO above)");
}

void matmul_tiled(const gpulab::OpenCLLab& lab, cl_mem a, cl_mem b, cl_mem c, int m, int n, int k) {
  // TODO (NDRange for tiles): local size {32, 32} (TILE in matmul.cl), global {round_up(n, 32), round_up(m, 32)}.
  GPULAB_NOT_IMPLEMENTED("matmul_tiled: launch matmul_tiled_kernel (see the TODO above)");
}

void matmul_fast(const gpulab::OpenCLLab& lab, cl_mem a, cl_mem b, cl_mem c, int m, int n, int k) {
  // TODO (bonus): launch your matmul_fast_kernel with the NDRange it needs.
  GPULAB_NOT_IMPLEMENTED("matmul_fast: write and launch matmul_fast_kernel (bonus)");
}
