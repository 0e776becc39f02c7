// Lab 10-streams (OpenCL kernel): out[offset + i] = a * in[offset + i] + b + key for i < count, one
// work-item per element. Launched by streams_opencl.cpp, once for the whole array or per chunk; the
// grader sets key, the last argument, before every call.
// --8<-- [start:kernel]
__kernel void scale_shift_kernel(__global const float* in, __global float* out, int offset, int count, float a, float b,
                                 float key) {
  const int i = get_global_id(0);
  if (i < count) out[offset + i] = a * in[offset + i] + b + key;  // the last work-group may overhang count
}
// --8<-- [end:kernel]
