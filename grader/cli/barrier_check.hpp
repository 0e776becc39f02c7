// A static check of student kernels (CUDA C++ and OpenCL C) for barriers that not every thread of a
// block (work-item of a work-group) reaches: a barrier under an if, else or switch whose condition
// depends on the thread, in a loop whose trip count does, or after an early `return` (or a `break`
// or `continue` out of the barrier's loop) taken by some threads only. On a GPU such code hangs or
// races; on PoCL it usually runs without a sign, so this warning is the only one a student gets.
//
// It is a small lexer plus a recursive walk over statements, not a C++ parser: clang's libtooling
// would be far too heavy to install on student machines, and lab kernels are short and plain.
// A variable is thread-dependent when an initialiser or assignment of it mentions threadIdx,
// get_local_id, get_global_id, a lane id, an atomic's result or another thread-dependent variable,
// or when it is assigned under a thread-dependent condition (to a fixed point, with block scopes).
// blockIdx, blockDim, gridDim, get_group_id, get_local_size, ... and parameters are uniform;
// __shared__ / __local variables are never thread-dependent (every thread sees the same value).
//
// Not detected: a helper that contains a barrier called under a divergent condition (each function
// is checked on its own), barriers inside macros (preprocessor lines are skipped), cooperative
// groups' sync(), barriers guarded by `&&` or `?:`, and divergence through pointers or references.
#pragma once
#include <string>
#include <vector>

namespace gpulab::cli {

struct BarrierFinding {
  int line = 0;         // the barrier's line; for an early exit, the return's (break's, continue's)
  std::string kernel;   // the function the barrier is in
  std::string barrier;  // as written: "__syncthreads()", "barrier(CLK_LOCAL_MEM_FENCE)"
  // "barrier under a thread-dependent condition" | "barrier in a loop with a thread-dependent bound"
  // | "early return before a barrier"
  std::string kind;
  std::string condition;  // the condition's text, trimmed, whitespace collapsed
  std::string message;    // why it hangs or races on a GPU, and the fix
  std::string summary;    // "__syncthreads() under `if (col < cols)`": what was found, where
  bool in_kernel = true;  // false for a helper (__device__ function, OpenCL non-kernel function)
};

// Every finding in `source` (a .cu or .cl file), in line order.
std::vector<BarrierFinding> find_divergent_barriers(const std::string& source);

// `source` with comments turned into spaces and string and character literals emptied (their quotes
// stay), newlines kept: offsets and line numbers are the source's. Also what the mutation audit uses
// to tell code from comments.
std::string blank_comments_and_literals(std::string source);

// "__syncthreads() under `if (x < n)` in kernel k — <message>"
std::string describe(const BarrierFinding& finding);

}  // namespace gpulab::cli
