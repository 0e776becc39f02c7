// Lab 00-hello (CUDA): turn "Hello " into "World!" on the GPU, one thread per character.
#include "gpulab/student/cuda.hpp"

// --8<-- [start:kernel]
__global__ void hello_kernel(const char* text, const int* offsets, char* result, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) result[i] = static_cast<char>(text[i] + offsets[i]);  // the last block may overhang n
}
// --8<-- [end:kernel]

// --8<-- [start:host]
void hello(const char* text, const int* offsets, char* result, int n) {
  char* d_text = nullptr;
  int* d_offsets = nullptr;
  char* d_result = nullptr;
  gpulab::check(cudaMalloc(&d_text, n * sizeof(char)), "allocating the text on the device");
  gpulab::check(cudaMalloc(&d_offsets, n * sizeof(int)), "allocating the offsets on the device");
  gpulab::check(cudaMalloc(&d_result, n * sizeof(char)), "allocating the result on the device");

  gpulab::check(cudaMemcpy(d_text, text, n * sizeof(char), cudaMemcpyHostToDevice), "copying the text to the device");
  gpulab::check(cudaMemcpy(d_offsets, offsets, n * sizeof(int), cudaMemcpyHostToDevice),
                "copying the offsets to the device");

  constexpr int threads_per_block = 256;
  hello_kernel<<<gpulab::blocks_for(n, threads_per_block), threads_per_block>>>(d_text, d_offsets, d_result, n);
  gpulab::check(cudaGetLastError(), "launching hello_kernel");

  // cudaMemcpy waits for the kernel: it runs on the same (default) stream.
  gpulab::check(cudaMemcpy(result, d_result, n * sizeof(char), cudaMemcpyDeviceToHost), "copying the result back");

  gpulab::check(cudaFree(d_text), "freeing the text");
  gpulab::check(cudaFree(d_offsets), "freeing the offsets");
  gpulab::check(cudaFree(d_result), "freeing the result");
}
// --8<-- [end:host]
