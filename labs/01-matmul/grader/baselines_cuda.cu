#include "baselines_cuda.hpp"

#include <cublas_v2.h>

#include <string>

#include "gpulab/student/cuda.hpp"

namespace gpulab::labs::matmul_cuda {

namespace {

__global__ void harness_naive_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= m || col >= n) return;
  float sum = 0.0f;
  for (int p = 0; p < k; ++p) sum += a[static_cast<size_t>(row) * k + p] * b[static_cast<size_t>(p) * n + col];
  c[static_cast<size_t>(row) * n + col] = sum;
}

void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw ApiError("cuBLAS", status, cublasGetStatusName(status),
                   std::string(what) + ": " + cublasGetStatusName(status) + " (" + cublasGetStatusString(status) + ")");
}

}  // namespace

void launch_naive(const float* a, const float* b, float* c, int m, int n, int k) {
  const dim3 block(16, 16);
  const dim3 grid(blocks_for(n, 16), blocks_for(m, 16));
  harness_naive_kernel<<<grid, block>>>(a, b, c, m, n, k);
  check(cudaGetLastError(), "launching the harness's naive matmul kernel");
}

struct Cublas::Handle {
  cublasHandle_t handle{};
};

Cublas::Cublas() : handle_(std::make_unique<Handle>()) {
  check_cublas(cublasCreate(&handle_->handle), "creating a cuBLAS handle");
  check_cublas(cublasSetMathMode(handle_->handle, CUBLAS_DEFAULT_MATH), "selecting cuBLAS's plain FP32 math");
}

Cublas::~Cublas() { cublasDestroy(handle_->handle); }

void Cublas::sgemm(const float* a, const float* b, float* c, int m, int n, int k) {
  // Row-major C = A B is column-major C^T = B^T A^T: swap the operands.
  const float one = 1.0f, zero = 0.0f;
  check_cublas(cublasSgemm(handle_->handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, n, a, k, &zero, c, n),
               "running cublasSgemm");
}

}  // namespace gpulab::labs::matmul_cuda
