// Lab 00-hello (CUDA): turn "Hello " into "World!" on the GPU, one thread per character.
// Read README.md first. Then fill in the TODOs and run `make check` in this folder.
#include "gpulab/student/cuda.hpp"

// Runs on the GPU, once per thread. Thread i computes result[i] = text[i] + offsets[i].
__global__ void hello_kernel(const char* text, const int* offsets, char* result, int n) {
  // TODO (thread indexing): compute this thread's global index i from blockIdx.x, blockDim.x and
  // threadIdx.x. The grid is rounded up to whole blocks, so the last block may have threads past
  // the end: only if i < n, store text[i] + offsets[i] into result[i].
}

// Called by the grader with host (CPU) memory: text and offsets hold n values each, result has
// room for n characters. Keep this signature.
void hello(const char* text, const int* offsets, char* result, int n) {
  // TODO 1 (device memory): allocate device buffers for the text (n chars), the offsets (n ints)
  //   and the result (n chars) with cudaMalloc. Check every CUDA call, e.g.
  //   gpulab::check(cudaMalloc(&d_text, n * sizeof(char)), "allocating the text on the device");
  // TODO 2 (host-to-device copies): copy text and offsets to the device (cudaMemcpyHostToDevice).
  // TODO 3 (launch configuration): launch hello_kernel<<<blocks, threads>>> with 256 threads per
  //   block and enough blocks to cover n characters (gpulab::blocks_for(n, 256)), then check
  //   cudaGetLastError(): a bad launch configuration is reported there.
  // TODO 4 (device-to-host copy): copy the result back into `result` (cudaMemcpyDeviceToHost).
  //   Why does this copy not need an explicit synchronisation with the kernel?
  // TODO 5 (cleanup): free the three device buffers with cudaFree.
  GPULAB_NOT_IMPLEMENTED("hello: allocate, copy in, launch hello_kernel, copy back and free (TODO 1-5)");
}
