// Lab 03-bitonic (OpenCL kernels): sort n 32-bit keys in place with Batcher's bitonic network.
// Stage k has steps j = k/2 .. 1; step j compares key i with key i ^ j, except the first step of
// a stage, which compares i with its mirror i ^ (k - 1). The smaller key always goes to the lower
// index; positions past n act as the largest key and are never read or written.

// Pair t of step j is (i, partner) with i = t with a zero bit inserted at position log2(j).
uint first_of_pair(uint t, uint j) { return ((t & ~(j - 1)) << 1) | (t & (j - 1)); }

// --8<-- [start:global]
// One step of the network, one work-item per pair.
__kernel void bitonic_step_kernel(__global uint* keys, int n, int k, int j) {
  const uint i = first_of_pair(get_global_id(0), j);
  const uint partner = j == k / 2 ? i ^ (k - 1) : i + j;
  if (partner >= (uint)n) return;  // the partner is padding: nothing moves
  const uint a = keys[i], b = keys[partner];
  if (a > b) {
    keys[i] = b;
    keys[partner] = a;
  }
}
// --8<-- [end:global]

// --8<-- [start:shared]
#define CHUNK 2048              /* keys one work-group sorts in local memory */
#define CHUNK_THREADS (CHUNK / 2) /* one compare-exchange per work-item per step */

void chunk_step(__local uint* chunk, int k, int j) {
  const uint i = first_of_pair(get_local_id(0), j);
  const uint partner = j == k / 2 ? i ^ (k - 1) : i + j;
  const uint a = chunk[i], b = chunk[partner];
  if (a > b) {
    chunk[i] = b;
    chunk[partner] = a;
  }
}

// Key e of a chunk is at chunk[e], or at chunk[padded(e)] in the padded layout of the fast kernels.
uint padded(uint e) { return e + (e >> 5); }

void load_chunk(__local uint* chunk, __global const uint* keys, int n, bool pad) {
  const int base = get_group_id(0) * CHUNK;
  for (int e = get_local_id(0); e < CHUNK; e += get_local_size(0))
    chunk[pad ? padded(e) : e] = base + e < n ? keys[base + e] : UINT_MAX;
  barrier(CLK_LOCAL_MEM_FENCE);
}

void store_chunk(__local const uint* chunk, __global uint* keys, int n, bool pad) {
  barrier(CLK_LOCAL_MEM_FENCE);
  const int base = get_group_id(0) * CHUNK;
  for (int e = get_local_id(0); e < CHUNK; e += get_local_size(0))
    if (base + e < n) keys[base + e] = chunk[pad ? padded(e) : e];
}

// Stages 2 .. CHUNK entirely: every chunk comes out sorted.
__kernel __attribute__((reqd_work_group_size(CHUNK_THREADS, 1, 1)))
void bitonic_chunk_sort_kernel(__global uint* keys, int n, int padded) {
  __local uint chunk[CHUNK];
  load_chunk(chunk, keys, n, false);
  for (int k = 2; k <= min(CHUNK, padded); k <<= 1)
    for (int j = k / 2; j > 0; j >>= 1) {
      chunk_step(chunk, k, j);
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  store_chunk(chunk, keys, n, false);
}

// The near steps of a stage k > CHUNK: j = CHUNK / 2 .. 1.
__kernel __attribute__((reqd_work_group_size(CHUNK_THREADS, 1, 1)))
void bitonic_chunk_merge_kernel(__global uint* keys, int n, int k) {
  __local uint chunk[CHUNK];
  load_chunk(chunk, keys, n, false);
  for (int j = CHUNK / 2; j > 0; j >>= 1) {
    chunk_step(chunk, k, j);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  store_chunk(chunk, keys, n, false);
}
// --8<-- [end:shared]

// --8<-- [start:fast]
#define MAX_FUSED 4 /* far steps per launch: 16 keys per work-item, in private memory */

// `steps` consecutive far steps (k, j), (k, j/2), ... in one launch, on 2^steps keys per
// work-item that are closed under all of the steps' partner masks.
__kernel void bitonic_fused_kernel(__global uint* keys, int n, int k, int j, int steps) {
  const uint t = get_global_id(0);
  const int low = 31 - clz((uint)j) - steps + 1;  // the steps use bits low .. log2(j) of the index
  const uint first = ((t >> low) << (low + steps)) | (t & ((1u << low) - 1));
  uint index[1 << MAX_FUSED], key[1 << MAX_FUSED];
#pragma unroll
  for (int c = 0; c < (1 << MAX_FUSED); ++c) {
    index[c] = first;
#pragma unroll
    for (int q = 0; q < MAX_FUSED; ++q)
      if (q < steps && (c >> q & 1)) index[c] ^= q == 0 && j == k / 2 ? (uint)(k - 1) : (uint)j >> q;
    key[c] = c < (1 << steps) && index[c] < (uint)n ? keys[index[c]] : UINT_MAX;
  }
#pragma unroll
  for (int q = 0; q < MAX_FUSED; ++q)
#pragma unroll
    for (int c = 0; c < (1 << MAX_FUSED); ++c) {
      const int d = c | 1 << q;
      if (q >= steps || d >= (1 << steps) || (c >> q & 1)) continue;
      const bool c_low = index[c] < index[d];  // the smaller key goes to the lower index
      if (c_low ? key[c] > key[d] : key[d] > key[c]) {
        const uint x = key[c];
        key[c] = key[d];
        key[d] = x;
      }
    }
#pragma unroll
  for (int c = 0; c < (1 << MAX_FUSED); ++c)
    if (c < (1 << steps) && index[c] < (uint)n) keys[index[c]] = key[c];
}
// The near steps of the fast kernels run three per barrier, on 8 keys per work-item in private
// memory, in a chunk with a spare word after every 32 keys: the strided groups (8 keys 1 or 4
// apart, say) then spread over the 32 local-memory banks instead of queueing on a few.
#define NEAR_THREADS (CHUNK / 8)
#define PADDED_CHUNK (CHUNK + CHUNK / 32)

// `steps` (1 to 3) consecutive steps (k, j), (k, j/2), ... on group `group` of the padded chunk:
// the same index arithmetic as bitonic_fused_kernel.
void chunk_steps_in_private(__local uint* chunk, uint group, uint k, uint j, int steps) {
  const int low = 31 - clz(j) - steps + 1;
  const uint first = ((group >> low) << (low + steps)) | (group & ((1u << low) - 1));
  uint index[8], key[8];
#pragma unroll
  for (int c = 0; c < 8; ++c) {
    index[c] = first;
#pragma unroll
    for (int q = 0; q < 3; ++q)
      if (q < steps && (c >> q & 1)) index[c] ^= q == 0 && j == k / 2 ? k - 1 : j >> q;
    if (c < (1 << steps)) key[c] = chunk[padded(index[c])];
  }
#pragma unroll
  for (int q = 0; q < 3; ++q)
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      const int d = c | 1 << q;
      if (q >= steps || d >= (1 << steps) || (c >> q & 1)) continue;
      if (index[c] < index[d] ? key[c] > key[d] : key[d] > key[c]) {
        const uint x = key[c];
        key[c] = key[d];
        key[d] = x;
      }
    }
#pragma unroll
  for (int c = 0; c < 8; ++c)
    if (c < (1 << steps)) chunk[padded(index[c])] = key[c];
}

// Steps j .. 1 of stage k on the chunk: groups of three steps, then the two or one left over.
void near_steps(__local uint* chunk, int k, int j) {
  for (; j >= 4; j >>= 3) {
    chunk_steps_in_private(chunk, get_local_id(0), k, j, 3);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (j > 0) {
    const int steps = j == 2 ? 2 : 1;
    for (uint g = get_local_id(0); g < CHUNK >> steps; g += NEAR_THREADS) chunk_steps_in_private(chunk, g, k, j, steps);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

__kernel __attribute__((reqd_work_group_size(NEAR_THREADS, 1, 1)))
void bitonic_chunk_sort_fused_kernel(__global uint* keys, int n, int padded_n) {
  __local uint chunk[PADDED_CHUNK];
  load_chunk(chunk, keys, n, true);
  for (int k = 2; k <= min(CHUNK, padded_n); k <<= 1) near_steps(chunk, k, k / 2);
  store_chunk(chunk, keys, n, true);
}

// The near steps j = CHUNK/2 .. 1 of a stage k > CHUNK.
__kernel __attribute__((reqd_work_group_size(NEAR_THREADS, 1, 1)))
void bitonic_chunk_merge_fused_kernel(__global uint* keys, int n, int k) {
  __local uint chunk[PADDED_CHUNK];
  load_chunk(chunk, keys, n, true);
  near_steps(chunk, k, CHUNK / 2);
  store_chunk(chunk, keys, n, true);
}
// --8<-- [end:fast]
