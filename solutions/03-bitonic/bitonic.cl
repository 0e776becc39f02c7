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

void load_chunk(__local uint* chunk, __global const uint* keys, int n) {
  const int base = get_group_id(0) * CHUNK;
  for (int e = get_local_id(0); e < CHUNK; e += get_local_size(0)) chunk[e] = base + e < n ? keys[base + e] : UINT_MAX;
  barrier(CLK_LOCAL_MEM_FENCE);
}

void store_chunk(__local const uint* chunk, __global uint* keys, int n) {
  barrier(CLK_LOCAL_MEM_FENCE);
  const int base = get_group_id(0) * CHUNK;
  for (int e = get_local_id(0); e < CHUNK; e += get_local_size(0))
    if (base + e < n) keys[base + e] = chunk[e];
}

// Stages 2 .. CHUNK entirely: every chunk comes out sorted.
__kernel __attribute__((reqd_work_group_size(CHUNK_THREADS, 1, 1)))
void bitonic_chunk_sort_kernel(__global uint* keys, int n, int padded) {
  __local uint chunk[CHUNK];
  load_chunk(chunk, keys, n);
  for (int k = 2; k <= min(CHUNK, padded); k <<= 1)
    for (int j = k / 2; j > 0; j >>= 1) {
      chunk_step(chunk, k, j);
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  store_chunk(chunk, keys, n);
}

// The near steps of a stage k > CHUNK: j = CHUNK / 2 .. 1.
__kernel __attribute__((reqd_work_group_size(CHUNK_THREADS, 1, 1)))
void bitonic_chunk_merge_kernel(__global uint* keys, int n, int k) {
  __local uint chunk[CHUNK];
  load_chunk(chunk, keys, n);
  for (int j = CHUNK / 2; j > 0; j >>= 1) {
    chunk_step(chunk, k, j);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  store_chunk(chunk, keys, n);
}
// --8<-- [end:shared]

// --8<-- [start:fast]
// Each work-item keeps 32 keys in private memory (registers); a work-group of 256 sorts a chunk of
// 8192 keys. The CUDA solution takes chunks of 16384 (64 KiB): NVIDIA's OpenCL allows a work-group
// 48 KiB of local memory, so here 32 KiB, and one more stage of far steps.
#define ITEMS 32 /* keys per work-item */
#define ITEM_BITS 5
#define FAST_THREADS 256
#define FAST_CHUNK (ITEMS * FAST_THREADS)
#define FAST_CHUNK_BITS 13

// The chunk in local memory is XOR-swizzled: key i lives in word i ^ (bits 5..9 of i), so bank
// (i ^ i >> 5) % 32. When the 32 work-items of a warp differ in five consecutive index bits (as
// every step here has them), they hit 32 different banks; other bit sets can collide.
uint swizzled(uint i) { return i ^ (i >> 5 & 31); }

// A group's keys come from and go to the array (with the padding rule: positions past n read as
// the largest key and are never written) or the chunk.
uint load_key(__global const uint* keys, uint n, __local const uint* chunk, bool global_memory, uint i) {
  if (global_memory) return i < n ? keys[i] : UINT_MAX;
  return chunk[swizzled(i)];
}

void store_key(__global uint* keys, uint n, __local uint* chunk, bool global_memory, uint i, uint key) {
  if (!global_memory) {
    chunk[swizzled(i)] = key;
  } else if (i < n) {
    keys[i] = key;
  }
}

// One compare-exchange: the smaller key to `low`. Two instructions (min, max), no branch.
void order(uint* low, uint* high) {
  const uint a = *low;
  *low = min(a, *high);
  *high = max(a, *high);
}

// The steps (k, 2^top), (k, 2^(top-1)), ... (`steps` of them, at most 5) on the 32 keys of group
// `group`: the keys whose indices differ only in bits top-4 .. top. The group is closed under every
// step's partner mask: one load and one store of each key for up to five steps. Slot c holds
// index first | c << low; step q works on slot bit 4 - q. After a mirror step (the first of a
// stage) the upper half of the slots holds its indices mirrored, i ^ (k - 1), and there the
// smaller key goes to the higher slot. The mirror case has its own copy of the loops, so neither
// copy tests it per exchange (and the keys stay in this function's registers).
void group_steps(__global uint* keys, uint n, __local uint* chunk, bool from_global, bool to_global, uint group,
                 uint k, int top, int steps) {
  const int low = top - (ITEM_BITS - 1);
  const uint first = ((group >> low) << (top + 1)) | (group & ((1u << low) - 1));
  const bool mirror = 2u << top == k;
  const uint mirrored = mirror ? (k - 1) ^ (1u << top) : 0;  // the bits below top, for slots c >= 16
  uint key[ITEMS];
#pragma unroll
  for (int c = 0; c < ITEMS; ++c)
    key[c] = load_key(keys, n, chunk, from_global, (first | c << low) ^ (c >= ITEMS / 2 ? mirrored : 0));
  if (mirror) {
#pragma unroll
    for (int q = 0; q < ITEM_BITS; ++q)
#pragma unroll
      for (int c = 0; c < ITEMS; ++c) {
        const int d = c | 1 << (ITEM_BITS - 1 - q);
        if (q >= steps || d == c) continue;
        if (q > 0 && c >= ITEMS / 2) {
          order(&key[d], &key[c]);
        } else {
          order(&key[c], &key[d]);
        }
      }
  } else {
#pragma unroll
    for (int q = 0; q < ITEM_BITS; ++q)
#pragma unroll
      for (int c = 0; c < ITEMS; ++c) {
        const int d = c | 1 << (ITEM_BITS - 1 - q);
        if (q < steps && d != c) order(&key[c], &key[d]);
      }
  }
  // The same indices as the loads (first has zeros in bits low .. top), written as a sum: the
  // compiler then recomputes them instead of holding 32 more registers across the exchanges.
#pragma unroll
  for (int c = 0; c < ITEMS; ++c)
    store_key(keys, n, chunk, to_global, (first + (c << low)) ^ (c >= ITEMS / 2 ? mirrored : 0), key[c]);
}

// Up to five far steps of stage k in one launch: one pass over the array instead of five.
__kernel void bitonic_far_kernel(__global uint* keys, int n, int k, int top, int steps) {
  group_steps(keys, n, 0, true, true, get_global_id(0), k, top, steps);
}

// The 32 consecutive keys t * 32 .. t * 32 + 31 of work-item t. Steps j <= 16 stay inside such a
// run: the last five steps of every stage, and the whole stages 2 .. 32, need no local memory.
// Stages 2 .. 32 on the run (the first thing the chunk sort does):
void sort_run(__local uint* chunk) {
  const uint first = get_local_id(0) * ITEMS;
  uint key[ITEMS];
#pragma unroll
  for (int c = 0; c < ITEMS; ++c) key[c] = chunk[swizzled(first + c)];
#pragma unroll
  for (int k = 2; k <= ITEMS; k <<= 1) {
#pragma unroll
    for (int c = 0; c < ITEMS; ++c)
      if (!(c & k / 2)) order(&key[c], &key[c ^ (k - 1)]);  // the mirror step
#pragma unroll
    for (int j = k / 4; j > 0; j >>= 1)
#pragma unroll
      for (int c = 0; c < ITEMS; ++c)
        if (!(c & j)) order(&key[c], &key[c | j]);
  }
#pragma unroll
  for (int c = 0; c < ITEMS; ++c) chunk[swizzled(first + c)] = key[c];
}

// The last five steps j = 16 .. 1 of a stage k > 32 on the run (never a mirror step).
void merge_run(__local uint* chunk) {
  const uint first = get_local_id(0) * ITEMS;
  uint key[ITEMS];
#pragma unroll
  for (int c = 0; c < ITEMS; ++c) key[c] = chunk[swizzled(first + c)];
#pragma unroll
  for (int j = ITEMS / 2; j > 0; j >>= 1)
#pragma unroll
    for (int c = 0; c < ITEMS; ++c)
      if (!(c & j)) order(&key[c], &key[c | j]);
#pragma unroll
  for (int c = 0; c < ITEMS; ++c) chunk[swizzled(first + c)] = key[c];
}

// The steps 2^top .. 32 of stage k on the chunk, five per barrier (the last group may be shorter).
void chunk_group_steps(__local uint* chunk, uint k, int top) {
  for (int steps; top >= ITEM_BITS; top -= steps) {
    steps = min(ITEM_BITS, top - ITEM_BITS + 1);
    group_steps(0, 0, chunk, false, false, get_local_id(0), k, top, steps);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

// Stages 2 .. FAST_CHUNK: a stage k is ceil((log2(k) - 5) / 5) groups in local memory and one run
// in registers, so 3 barriers at most instead of log2(k).
__kernel __attribute__((reqd_work_group_size(FAST_THREADS, 1, 1)))
void bitonic_chunk_sort_registers_kernel(__global uint* keys, int n) {
  __local uint chunk[FAST_CHUNK];
  const uint base = get_group_id(0) * FAST_CHUNK;
  for (uint e = get_local_id(0); e < FAST_CHUNK; e += FAST_THREADS)  // coalesced
    chunk[swizzled(e)] = base + e < (uint)n ? keys[base + e] : UINT_MAX;
  barrier(CLK_LOCAL_MEM_FENCE);
  sort_run(chunk);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint k = 2 * ITEMS; k <= FAST_CHUNK; k <<= 1) {
    chunk_group_steps(chunk, k, 30 - clz(k));
    merge_run(chunk);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (uint e = get_local_id(0); e < FAST_CHUNK; e += FAST_THREADS)
    if (base + e < (uint)n) keys[base + e] = chunk[swizzled(e)];
}

// The 13 near steps j = 4096 .. 1 of a stage k > FAST_CHUNK: 5 + 3 in local memory, 5 in
// registers. The first group comes straight from global memory (its 32 keys are 256 apart, so
// neighbouring work-items read consecutive keys): no copy into local memory first, one barrier less.
__kernel __attribute__((reqd_work_group_size(FAST_THREADS, 1, 1)))
void bitonic_chunk_merge_registers_kernel(__global uint* keys, int n, int k) {
  __local uint chunk[FAST_CHUNK];
  const uint base = get_group_id(0) * FAST_CHUNK;
  group_steps(keys + base, n - base, chunk, true, false, get_local_id(0), k, FAST_CHUNK_BITS - 1, ITEM_BITS);
  barrier(CLK_LOCAL_MEM_FENCE);
  chunk_group_steps(chunk, k, FAST_CHUNK_BITS - 1 - ITEM_BITS);
  merge_run(chunk);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint e = get_local_id(0); e < FAST_CHUNK; e += FAST_THREADS)
    if (base + e < (uint)n) keys[base + e] = chunk[swizzled(e)];
}
// --8<-- [end:fast]
