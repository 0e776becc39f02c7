// What the launch guards share (opencl_guards.cpp, cuda_launch_guards.cpp): every kernel launch call
// of student code is counted, so the runner can tell a function that started no kernel from one
// that did, in labs whose inputs and outputs are host memory (Launchable::kernel_required).
#pragma once

// Defined by the runner (grader/runner/execute.cpp) and exported to the student's library. Weak: a
// library linked into anything else counts nothing; student code cannot reach it (an undefined
// symbol the allowlist does not name).
extern "C" {
__attribute__((weak)) extern volatile unsigned long gpulab_student_kernel_launches;
}

namespace gpulab::launch_guards {

inline void count_launch() {
  if (&gpulab_student_kernel_launches != nullptr) gpulab_student_kernel_launches = gpulab_student_kernel_launches + 1;
}

}  // namespace gpulab::launch_guards
