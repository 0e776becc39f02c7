// Lab 00-hello (OpenCL kernel): one work-item per character. Launched by hello_opencl.cpp.
__kernel void hello_kernel(__global const char* text, __global const int* offsets, __global char* result, int n) {
  // TODO (work-item indexing): take this work-item's index i from get_global_id(0). The global
  // size is rounded up to a multiple of the work-group size, so only if i < n, store
  // text[i] + offsets[i] into result[i].
}
