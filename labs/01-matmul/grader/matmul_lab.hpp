// 01-matmul: the student's functions, the harness's naive kernel and the vendor SGEMM, as the
// driver calls them on either backend.
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "gpulab/device.hpp"

namespace gpulab::labs {

// C (m x n) = A (m x k) * B (k x n), row-major float buffers.
using MatmulLaunch = std::function<void(Buffer& a, Buffer& b, Buffer& c, int m, int n, int k)>;
MatmulLaunch bind_matmul(Device& device, const std::string& function);

// The harness's own naive kernel (one thread per element of C): the naive_speedup baseline.
MatmulLaunch harness_naive_matmul(Device& device);

// The vendor's single-precision GEMM in plain FP32 (no TF32), where the backend has one.
struct VendorGemm {
  std::string name;
  MatmulLaunch launch;
};
std::optional<VendorGemm> vendor_sgemm(Device& device);

}  // namespace gpulab::labs
