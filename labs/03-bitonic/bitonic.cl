// Lab 03-bitonic (OpenCL kernels): sort n 32-bit keys in place with Batcher's bitonic network.
// Stage k has steps j = k/2 .. 1; step j compares key i with key i ^ j, except the first step of
// a stage, which compares i with its mirror i ^ (k - 1). The smaller key goes to the lower index.
// Launched by bitonic_opencl.cpp.

// Pair t of step j is (i, partner) with i = t with a zero bit inserted at position log2(j).
uint first_of_pair(uint t, uint j) { return ((t & ~(j - 1)) << 1) | (t & (j - 1)); }

__kernel void bitonic_step_kernel(__global uint* keys, int n, int k, int j) {
  // TODO (compare-exchange): i = first_of_pair(get_global_id(0), j); the partner is i ^ (k - 1)
  // when j == k / 2, else i + j. Swap if keys[i] > keys[partner]; do nothing if partner >= n.
}

#define CHUNK 2048                /* keys one work-group sorts in local memory */
#define CHUNK_THREADS (CHUNK / 2) /* one compare-exchange per work-item per step */

__kernel __attribute__((reqd_work_group_size(CHUNK_THREADS, 1, 1)))
void bitonic_chunk_sort_kernel(__global uint* keys, int n) {
  // TODO 1-3 (local memory): load the work-group's CHUNK keys into a __local array, run every step
  // of the stages k = 2 .. min(CHUNK, n) there with barrier(CLK_LOCAL_MEM_FENCE) after each, and
  // write the chunk back.
}

__kernel __attribute__((reqd_work_group_size(CHUNK_THREADS, 1, 1)))
void bitonic_chunk_merge_kernel(__global uint* keys, int n, int k) {
  // TODO 4: the near steps j = CHUNK/2 .. 1 of stage k, in local memory.
}

// Bonus (fast): a kernel that runs up to 3 far steps on 8 keys per work-item (fewer passes). See
// the README. Beyond the bound (optional; README, "The reference's fast sort"): 32 keys per
// work-item and 5 far steps per launch; chunk kernels that run the near steps five per barrier on
// groups of 32 keys and the last five steps of each stage on 32 consecutive keys in private
// memory; chunks of 8192 keys (256 work-items: NVIDIA's OpenCL allows 48 KiB of local memory);
// key i in word i ^ ((i >> 5) & 31) of the chunk against bank conflicts.
