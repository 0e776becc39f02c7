// Lab 05-reduction (OpenCL kernels): out[0] = in[0] + in[1] + ... + in[n - 1]. Launched by
// reduction_opencl.cpp.

// OpenCL 1.2 has no atomic addition of floats: read the sum, add, and swap the bits in only if
// nobody changed the sum meanwhile (compare-and-swap); otherwise try again with what they wrote.
void atomic_add_float(volatile __global float* target, float value) {
  volatile __global uint* bits = (volatile __global uint*)target;
  uint expected = *bits;
  for (;;) {
    const uint seen = atomic_cmpxchg(bits, expected, as_uint(as_float(expected) + value));
    if (seen == expected) return;
    expected = seen;
  }
}

__kernel void reduce_atomic_kernel(__global const float* in, __global float* out, int n) {
  // TODO (atomics): work-item i = get_global_id(0) < n adds in[i] to out[0] with atomic_add_float.
}

#define TREE_THREADS 256
#define TREE_ELEMENTS (2 * TREE_THREADS) /* each work-item adds two elements as it loads them */

__kernel __attribute__((reqd_work_group_size(TREE_THREADS, 1, 1)))
void reduce_tree_kernel(__global const float* src, int src_offset, int n, __global float* dst, int dst_offset) {
  // TODO 1-3 (a tree in local memory): the sources are src[src_offset ..], n of them. Work-group g
  // sums elements [g * TREE_ELEMENTS, (g + 1) * TREE_ELEMENTS): work-item t loads element
  // i = g * TREE_ELEMENTS + t and the one TREE_THREADS after it (0 past n), stores their sum in a
  // __local float partial[TREE_THREADS], and then for stride = 128 .. 1 the work-items t < stride add
  // partial[t + stride] to partial[t], with barrier(CLK_LOCAL_MEM_FENCE) after every step, outside
  // the `if`. Work-item 0 writes partial[0] to dst[dst_offset + g].
}

#define FAST_THREADS 256

// Bonus (fast): a kernel reduce_fast_kernel(in, out, n) with work-groups of FAST_THREADS: a fixed
// number of work-groups, float4 loads (vload4) strided by the whole NDRange, the work-group's sums
// combined in local memory, one atomic_add_float per work-group. See the README.
