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
// A finding is *proven* when an if, else or switch around the barrier (or around the early exit)
// has a condition that is surely thread-dependent: it reads a thread index by arithmetic alone,
// directly or through local variables that every assignment keeps so (not through memory, an
// atomic, a shuffle or vote, an assignment under a thread-dependent condition or of a uniform value).
// Then some threads of a block take it and some do not for the shapes every lab runs, and the task
// fails as unsafe code (barrier_verdict.hpp). A loop with a thread-dependent bound proves nothing
// (its trip count may still be the same for all), nor does a condition that only maybe differs:
// those stay warnings.
//
// Not detected: a helper that contains a barrier called under a divergent condition (each function
// is checked on its own), barriers inside macros (preprocessor lines are skipped), cooperative
// groups' sync(), barriers guarded by `&&` or `?:`, and divergence through pointers or references.
#pragma once
#include <set>
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
  bool proven = false;    // surely not reached by every thread (see above): a verdict, not a warning
};

// Every finding in `source` (a .cu or .cl file), in line order.
std::vector<BarrierFinding> find_divergent_barriers(const std::string& source);

// "__syncthreads() under `if (x < n)` in kernel k — <message>"
std::string describe(const BarrierFinding& finding);

// One function of a source file as the lexer sees it: what its body names (the functions it may call
// or launch), its string literals (an OpenCL kernel's name), and whether it uses shared (local)
// memory or a barrier. What kernel_map.hpp follows from a task's launch function to its kernels.
struct FunctionSummary {
  std::string name;
  bool kernel = false;             // __global__, __kernel or kernel
  std::set<std::string> names;     // the identifiers of its body
  std::set<std::string> literals;  // its string literals that are identifiers ("transpose_naive_kernel")
  bool shared_or_barrier = false;  // __shared__, __local, a barrier, __syncwarp, a cooperative sync, asm
};
struct SourceSummary {
  std::vector<FunctionSummary> functions;
  // The same words outside every function body: in a macro (#define, or token pasting that could
  // spell them), at file scope (a __shared__ variable), in an #include (<cuda/barrier>). Then no
  // function can be said to be free of them.
  bool shared_or_barrier_elsewhere = false;
};
SourceSummary summarize_functions(const std::string& source);

}  // namespace gpulab::cli
