// What a student's CUDA file includes: the runtime API, error checking and the TODO marker.
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "gpulab/errors.hpp"

namespace gpulab {

// Checks the status of a CUDA call; on failure throws with `what` (say what you were doing),
// for example: check(cudaMalloc(&d_text, n), "allocating the text on the device").
inline void check(cudaError_t status, const std::string& what) {
  if (status == cudaSuccess) return;
  throw ApiError("CUDA", static_cast<int>(status), cudaGetErrorName(status),
                 what + ": " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
}

// Blocks needed to cover `n` items with blocks of `block` threads (the last block may be partial).
constexpr int blocks_for(int n, int block) { return (n + block - 1) / block; }

}  // namespace gpulab
