// A made-up lab for unit tests, so they depend on no real lab's manifest: 05-saxpy, one CUDA file
// and two OpenCL files, one task, one case.
#pragma once

namespace gpulab::testing {

inline constexpr const char* kSaxpyManifest = R"(name = "saxpy"
title = "A made-up lab"

[files]
cuda = ["saxpy.cu"]
opencl = ["saxpy.cl", "saxpy_opencl.cpp"]

[[tasks]]
name = "naive"
function = "saxpy_naive"

[[cases]]
name = "tiny"
n = 3
)";

}  // namespace gpulab::testing
