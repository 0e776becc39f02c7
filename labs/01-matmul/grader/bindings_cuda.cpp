// Calls the student's CUDA functions (labs/01-matmul/matmul.cu) with device pointers; the
// harness's naive kernel and cuBLAS are the calibrations.
#include "baselines_cuda.hpp"
#include "gpulab/backend/cuda.hpp"
#include "lab_contract.hpp"  // the functions lab.toml's [signatures] and tasks declare
#include "lab_driver.hpp"
#include "matmul_lab.hpp"

namespace gpulab::labs {

namespace {
MatmulLaunch on_pointers(std::function<void(const float*, const float*, float*, int, int, int)> f) {
  return [f = std::move(f)](Buffer& a, Buffer& b, Buffer& c, int m, int n, int k) {
    f(cuda::pointer<const float>(a), cuda::pointer<const float>(b), cuda::pointer<float>(c), m, n, k);
  };
}
}  // namespace

MatmulLaunch bind_matmul(Device&, const std::string& function) {
  return on_pointers(find_function(contract::matmul_functions(), function));
}

MatmulLaunch harness_naive_matmul(Device&) { return on_pointers(matmul_cuda::launch_naive); }

std::optional<VendorGemm> vendor_sgemm(Device&) {
  auto cublas = std::make_shared<matmul_cuda::Cublas>();
  return VendorGemm{"cuBLAS SGEMM", on_pointers([cublas](const float* a, const float* b, float* c, int m, int n,
                                                         int k) { cublas->sgemm(a, b, c, m, n, k); })};
}

}  // namespace gpulab::labs
