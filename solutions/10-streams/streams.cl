// Lab 10-streams (OpenCL kernel): out[offset + i] = a * in[offset + i] + b for i < count, one
// work-item per element. Launched by streams_opencl.cpp, once for the whole array or per chunk.
// --8<-- [start:kernel]
__kernel void scale_shift_kernel(__global const float* in, __global float* out, int offset, int count, float a,
                                 float b) {
  const int i = get_global_id(0);
  if (i < count) out[offset + i] = a * in[offset + i] + b;  // the last work-group may overhang count
}
// --8<-- [end:kernel]
