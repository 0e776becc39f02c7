// Calls the student's CUDA functions (labs/01-matmul/matmul.cu) with device pointers; the
// harness's naive kernel and cuBLAS are the calibrations.
#include "baselines_cuda.hpp"
#include "gpulab/backend/cuda.hpp"
#include "lab_driver.hpp"
#include "matmul_lab.hpp"

// The lab's contract: these signatures are fixed, the grader calls them.
void matmul_naive(const float* a, const float* b, float* c, int m, int n, int k);
void matmul_tiled(const float* a, const float* b, float* c, int m, int n, int k);
void matmul_fast(const float* a, const float* b, float* c, int m, int n, int k);

namespace gpulab::labs {

namespace {
using Function = void (*)(const float*, const float*, float*, int, int, int);

MatmulLaunch on_pointers(std::function<void(const float*, const float*, float*, int, int, int)> f) {
  return [f = std::move(f)](Buffer& a, Buffer& b, Buffer& c, int m, int n, int k) {
    f(cuda::pointer<const float>(a), cuda::pointer<const float>(b), cuda::pointer<float>(c), m, n, k);
  };
}
}  // namespace

MatmulLaunch bind_matmul(Device&, const std::string& function) {
  static const std::map<std::string, Function> functions{
      {"matmul_naive", matmul_naive}, {"matmul_tiled", matmul_tiled}, {"matmul_fast", matmul_fast}};
  return on_pointers(find_function(functions, function));
}

MatmulLaunch harness_naive_matmul(Device&) { return on_pointers(matmul_cuda::launch_naive); }

std::optional<VendorGemm> vendor_sgemm(Device&) {
  auto cublas = std::make_shared<matmul_cuda::Cublas>();
  return VendorGemm{"cuBLAS SGEMM", on_pointers([cublas](const float* a, const float* b, float* c, int m, int n,
                                                         int k) { cublas->sgemm(a, b, c, m, n, k); })};
}

}  // namespace gpulab::labs
