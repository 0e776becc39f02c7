// Lab 00's hello world in OpenACC: the loop stays a loop; a directive offloads it and moves the data.
// Built in the test suite with `g++ -fopenacc` (GCC runs it on the host when it has no offload target);
// with NVIDIA's compiler: `nvc++ -acc hello_openacc.cpp`.
#include <cstdio>

// --8<-- [start:hello]
void hello(const char* text, const int* offsets, char* result, int n) {
  // copyin: host -> device before the loop; copyout: device -> host after it.
#pragma acc parallel loop copyin(text[0:n], offsets[0:n]) copyout(result[0:n])
  for (int i = 0; i < n; ++i) result[i] = static_cast<char>(text[i] + offsets[i]);
}
// --8<-- [end:hello]

int main() {
  const char text[] = "Hello ";
  const int offsets[] = {15, 10, 6, 0, -11, 1};
  char result[7] = {};
  hello(text, offsets, result, 6);
  std::puts(result);
  return 0;
}
