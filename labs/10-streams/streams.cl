// Lab 10-streams (OpenCL kernel): one work-item per element of a chunk. Launched by
// streams_opencl.cpp, once for the whole array or once per chunk. The last parameter, key, is the
// grader's: it sets it before every call, and your host code never sees it (keep the signature).
__kernel void scale_shift_kernel(__global const float* in, __global float* out, int offset, int count, float a, float b,
                                 float key) {
  // TODO (the kernel): take the work-item's index i from get_global_id(0); only if i < count, store
  // a * in[offset + i] + b + key into out[offset + i]. The chunk starts at element `offset` of the
  // buffers.
}
