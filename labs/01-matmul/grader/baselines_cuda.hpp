// The CUDA calibration baselines of 01-matmul, compiled by nvcc on their own: the harness's naive
// kernel and cuBLAS SGEMM. Row-major device pointers throughout.
#pragma once
#include <memory>

namespace gpulab::labs::matmul_cuda {

void launch_naive(const float* a, const float* b, float* c, int m, int n, int k);

// A cuBLAS handle in plain FP32 mode (no TF32 tensor cores): a fair comparison for CUDA cores.
class Cublas {
 public:
  Cublas();
  ~Cublas();
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;
  void sgemm(const float* a, const float* b, float* c, int m, int n, int k);

 private:
  struct Handle;
  std::unique_ptr<Handle> handle_;
};

}  // namespace gpulab::labs::matmul_cuda
