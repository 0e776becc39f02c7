// Lab 00-hello (OpenCL kernel): one work-item per character.
// --8<-- [start:kernel]
__kernel void hello_kernel(__global const char* text, __global const int* offsets, __global char* result, int n) {
  const int i = get_global_id(0);
  if (i < n) result[i] = (char)(text[i] + offsets[i]);  // the NDRange is rounded up past n
}
// --8<-- [end:kernel]
