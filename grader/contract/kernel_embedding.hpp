// The harness's OpenCL kernels of a lab (labs/<lab>/grader/<kernel>.cl: its calibrations and staff
// kernels, the designs of graded tasks) as C++ that holds them encoded: the build compiles each
// lab's kernels from it, and the student release ships it in place of the .cl files, so a student's
// repository has no kernel of the harness as readable source (as it has the CUDA ones as objects).
// The encoding is no secret (the generated code decodes it): it keeps an answer from being read or
// copied from the repository, not from a student who runs the decoder on purpose.
#pragma once
#include <string>
#include <vector>

namespace gpulab {

struct OpenClKernelFile {
  std::string name;    // the file's stem, a C++ identifier: the function that returns its source
  std::string source;  // the OpenCL C text
};

struct EmbeddedOpenClKernels {
  std::string header;  // opencl_kernels.hpp: one `std::string <name>();` per file
  std::string source;  // opencl_kernels.cpp: the encoded bytes and the functions that decode them
};

// The two files for lab `lab` (its folder's name without the number, a C++ identifier): the functions
// are in namespace gpulab::labs::<lab>_opencl_kernels. Throws std::invalid_argument when a name is
// not a C++ identifier (the message names it and the fix).
EmbeddedOpenClKernels embed_opencl_kernels(const std::string& lab, const std::vector<OpenClKernelFile>& kernels);

// The kernel file's name as the generated function's (its stem), checked; for the build and the release.
std::string opencl_kernel_name(const std::string& file_name);

}  // namespace gpulab
