// Lab 04-filter (OpenCL kernels): RGBA8 image filters with clamped edges. Pixel (x, y) of a
// width x height image is in[y * width + x], one uchar4 (r, g, b, a). Launched by filter_opencl.cpp.

#define MAX_RADIUS 8
#define BLOCK_X 32 /* work-groups of 32 x 8: 32 neighbouring pixels of a row per warp */
#define BLOCK_Y 8

// --8<-- [start:helpers]
// Coordinates outside the image read the nearest edge pixel.
int clamp_to(int v, int size) { return clamp(v, 0, size - 1); }

// The mean of n pixels rounded half up, per channel: (sum + n / 2) / n.
uchar4 rounded_mean(uint4 sum, uint n) { return convert_uchar4((sum + n / 2) / n); }
// --8<-- [end:helpers]

// --8<-- [start:box_naive]
// One work-item per output pixel, every input pixel read straight from global memory.
__kernel void box_naive_kernel(__global const uchar4* in, __global uchar4* out, int width, int height, int radius) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  uint4 sum = (uint4)(0);
  for (int dy = -radius; dy <= radius; ++dy) {
    __global const uchar4* row = in + (size_t)clamp_to(y + dy, height) * width;
    for (int dx = -radius; dx <= radius; ++dx) sum += convert_uint4(row[clamp_to(x + dx, width)]);
  }
  const uint side = 2 * radius + 1;
  out[(size_t)y * width + x] = rounded_mean(sum, side * side);
}
// --8<-- [end:box_naive]

// --8<-- [start:box_tiled]
// The work-group loads its BLOCK_X x BLOCK_Y pixels plus a halo of `radius` into local memory, row
// by row (coalesced). The box is separable, so the window sums come in two steps from there: sums
// of 2r + 1 pixels along each tile row, then sums of 2r + 1 of those down each column.
__kernel __attribute__((reqd_work_group_size(BLOCK_X, BLOCK_Y, 1)))
void box_tiled_kernel(__global const uchar4* in, __global uchar4* out, int width, int height, int radius) {
  __local uchar4 tile[BLOCK_Y + 2 * MAX_RADIUS][BLOCK_X + 2 * MAX_RADIUS];
  __local uint4 row_sums[BLOCK_Y + 2 * MAX_RADIUS][BLOCK_X];
  const int lx = get_local_id(0), ly = get_local_id(1);
  const int tile_w = BLOCK_X + 2 * radius, tile_h = BLOCK_Y + 2 * radius;
  const int x0 = get_group_id(0) * BLOCK_X - radius, y0 = get_group_id(1) * BLOCK_Y - radius;
  for (int ty = ly; ty < tile_h; ty += BLOCK_Y) {
    __global const uchar4* row = in + (size_t)clamp_to(y0 + ty, height) * width;
    for (int tx = lx; tx < tile_w; tx += BLOCK_X) tile[ty][tx] = row[clamp_to(x0 + tx, width)];
  }
  barrier(CLK_LOCAL_MEM_FENCE);  // the tile is complete before anyone reads a neighbour's pixel

  for (int ty = ly; ty < tile_h; ty += BLOCK_Y) {
    uint4 sum = (uint4)(0);
    for (int dx = 0; dx <= 2 * radius; ++dx) sum += convert_uint4(tile[ty][lx + dx]);
    row_sums[ty][lx] = sum;
  }
  barrier(CLK_LOCAL_MEM_FENCE);  // every row sum is written before the column sums read them

  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;  // after the barriers: every work-item helped
  uint4 sum = (uint4)(0);
  for (int dy = 0; dy <= 2 * radius; ++dy) sum += row_sums[ly + dy][lx];
  const uint side = 2 * radius + 1;
  out[(size_t)y * width + x] = rounded_mean(sum, side * side);
}
// --8<-- [end:box_tiled]

// --8<-- [start:gaussian]
// Row 2r of Pascal's triangle for every radius: the binomial weights C(2r, k), which sum to 4^r.
__constant uint BINOMIAL[MAX_RADIUS + 1][2 * MAX_RADIUS + 1] = {
    {1},
    {1, 2, 1},
    {1, 4, 6, 4, 1},
    {1, 6, 15, 20, 15, 6, 1},
    {1, 8, 28, 56, 70, 56, 28, 8, 1},
    {1, 10, 45, 120, 210, 252, 210, 120, 45, 10, 1},
    {1, 12, 66, 220, 495, 792, 924, 792, 495, 220, 66, 12, 1},
    {1, 14, 91, 364, 1001, 2002, 3003, 3432, 3003, 2002, 1001, 364, 91, 14, 1},
    {1, 16, 120, 560, 1820, 4368, 8008, 11440, 12870, 11440, 8008, 4368, 1820, 560, 120, 16, 1},
};

// The gaussian kernels see a pixel as one 32-bit word: r in bits 0-7, g 8-15, b 16-23, a 24-31.
// Up to PACKED_RADIUS two channels share a word (SWAR): r and b in the 16-bit lanes of sum.x, g and
// a in those of sum.y, so one multiply-add weighs two channels; a lane holds at most
// 255 * 4^r + 4^r / 2, which fits in 16 bits while r <= 4. Larger radii: one word per channel.
#define PACKED_RADIUS 4
uint4 add_weighted(uint4 sum, uint pixel, uint weight, int radius) {
  if (radius <= PACKED_RADIUS)
    return sum + (uint4)(weight * (pixel & 0x00FF00FFu), weight * ((pixel >> 8) & 0x00FF00FFu), 0, 0);
  return sum + weight * ((uint4)(pixel, pixel >> 8, pixel >> 16, pixel >> 24) & 0xFFu);
}

// One pass rounds to 8 bits: (sum + 4^r / 2) >> 2r in every lane or channel, packed back into a pixel.
uint binomial_round(uint4 sum, int radius) {
  const uint shift = 2 * radius, bias = (1u << shift) >> 1;
  if (radius <= PACKED_RADIUS) {
    const uint even = (sum.x + bias * 0x00010001u) >> shift, odd = (sum.y + bias * 0x00010001u) >> shift;
    return (even & 0x00FF00FFu) | (odd & 0x00FF00FFu) << 8;
  }
  const uint4 c = (sum + bias) >> shift;
  return c.x | c.y << 8 | c.z << 16 | c.w << 24;
}

// Each work-item handles 4 neighbouring pixels of a row: one 16-byte load or store moves them all.
// Rows start 16-byte aligned when width % 4 == 0 (the timed images); other widths take 4-byte
// accesses, clamped at the right edge.
#define CHUNK 4
uint4 load_chunk(__global const uint* row, int x, int width) {
  if (width % CHUNK == 0 && x < width) return *(__global const uint4*)(row + x);
  const int last = width - 1;
  return (uint4)(row[min(x, last)], row[min(x + 1, last)], row[min(x + 2, last)], row[min(x + 3, last)]);
}

void store_chunk(__global uint* row, int x, int width, uint4 v) {  // x < width
  if (width % CHUNK == 0) {
    *(__global uint4*)(row + x) = v;
    return;
  }
  row[x] = v.x;
  if (x + 1 < width) row[x + 1] = v.y;
  if (x + 2 < width) row[x + 2] = v.z;
  if (x + 3 < width) row[x + 3] = v.w;
}

#define ROW_THREADS 128   /* horizontal pass: a work-group filters 512 pixels of one row */
#define COLUMN_THREADS 64 /* vertical pass: a work-group covers 256 pixels of a row ... */
#define COLUMN_OUTPUTS 8  /* ... and 8 rows: each work-item computes 8 chunks down its column */
#define MAX_HALO 8        /* halo words per side of the horizontal segment, a multiple of 4 */

// Horizontal pass: the work-group stages its 512 pixels plus a halo on each side in local memory
// (one 16-byte store per work-item), then each work-item reads its 4 + 2r pixels back as 16-byte
// words and computes 4 outputs: every input pixel is unpacked once for up to 2r + 1 outputs.
// `radius` is a literal in every caller (the kernels below): inlined there, the loops unroll.
static inline __attribute__((always_inline)) void gaussian_rows(__global const uint* in, __global uint* out, int width, const int radius, __local uint* segment) {
  const int halo = radius <= 4 ? 4 : MAX_HALO, window_size = CHUNK + 2 * halo;
  __global const uint* row = in + (size_t)get_group_id(1) * width;
  const int lx = get_local_id(0), x0 = get_group_id(0) * ROW_THREADS * CHUNK, x = x0 + CHUNK * lx;
  *(__local uint4*)(segment + halo + CHUNK * lx) = load_chunk(row, x, width);
  if (lx < 2 * halo) {  // the halo: `halo` pixels left and right of the segment, clamped
    const int i = lx < halo ? lx : ROW_THREADS * CHUNK + lx;
    segment[i] = row[clamp_to(x0 - halo + i, width)];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (x >= width) return;
  uint window[CHUNK + 2 * MAX_HALO];  // pixels x - halo .. x + 3 + halo
#pragma unroll
  for (int i = 0; i < window_size; i += 4) vstore4(*(__local const uint4*)(segment + CHUNK * lx + i), 0, window + i);
  uint result[CHUNK];
#pragma unroll
  for (int j = 0; j < CHUNK; ++j) {
    uint4 sum = (uint4)(0);
#pragma unroll
    for (int k = 0; k <= 2 * radius; ++k) sum = add_weighted(sum, window[halo - radius + j + k], BINOMIAL[radius][k], radius);
    result[j] = binomial_round(sum, radius);
  }
  store_chunk(out + (size_t)get_group_id(1) * width, x, width, vload4(0, result));
}

// Vertical pass, no local memory: each work-item loads the 8 + 2r chunks of its column that its 8
// outputs need, all at once (8 + 2r independent 16-byte loads in flight), and slides the window
// down in registers. The 2r halo rows are also loaded by the work-groups above and below (L2).
static inline __attribute__((always_inline)) void gaussian_columns(__global const uint* in, __global uint* out, int width, int height, const int radius) {
  const int x = CHUNK * get_global_id(0), y0 = get_group_id(1) * COLUMN_OUTPUTS;
  if (x >= width) return;  // no barrier in this kernel
  uint4 rows[COLUMN_OUTPUTS + 2 * MAX_RADIUS];  // rows y0 - r .. y0 + 7 + r, clamped
#pragma unroll
  for (int i = 0; i < COLUMN_OUTPUTS + 2 * radius; ++i)
    rows[i] = load_chunk(in + (size_t)clamp_to(y0 - radius + i, height) * width, x, width);
#pragma unroll
  for (int i = 0; i < COLUMN_OUTPUTS; ++i) {
    // Not `return` past the last row: with that exit in the loop, the NVIDIA compiler left `rows`
    // in memory, and this pass ran at half the speed.
    if (y0 + i < height) {
      uint result[CHUNK];
#pragma unroll
      for (int j = 0; j < CHUNK; ++j) {
        uint4 sum = (uint4)(0);
#pragma unroll
        for (int k = 0; k <= 2 * radius; ++k) {
          const uint4 chunk = rows[i + k];
          sum = add_weighted(sum, j == 0 ? chunk.x : j == 1 ? chunk.y : j == 2 ? chunk.z : chunk.w, BINOMIAL[radius][k], radius);
        }
        result[j] = binomial_round(sum, radius);
      }
      store_chunk(out + (size_t)(y0 + i) * width, x, width, vload4(0, result));
    }
  }
}

// One pair of kernels per radius, gaussian_rows_r0 .. gaussian_rows_r8 and gaussian_columns_r0 ..:
// each calls the pass with a literal radius, so the compiler unrolls every loop for it.
#define GAUSSIAN_KERNELS(R)                                                                          \
  __kernel __attribute__((reqd_work_group_size(ROW_THREADS, 1, 1)))                                 \
  void gaussian_rows_r##R(__global const uint* in, __global uint* out, int width) {                 \
    __local uint4 segment[(MAX_HALO + ROW_THREADS * CHUNK + MAX_HALO) / 4];                          \
    gaussian_rows(in, out, width, R, (__local uint*)segment);                                        \
  }                                                                                                 \
  __kernel __attribute__((reqd_work_group_size(COLUMN_THREADS, 1, 1)))                              \
  void gaussian_columns_r##R(__global const uint* in, __global uint* out, int width, int height) {   \
    gaussian_columns(in, out, width, height, R);                                                     \
  }
GAUSSIAN_KERNELS(0)
GAUSSIAN_KERNELS(1)
GAUSSIAN_KERNELS(2)
GAUSSIAN_KERNELS(3)
GAUSSIAN_KERNELS(4)
GAUSSIAN_KERNELS(5)
GAUSSIAN_KERNELS(6)
GAUSSIAN_KERNELS(7)
GAUSSIAN_KERNELS(8)
// --8<-- [end:gaussian]

// --8<-- [start:median]
// A median compares bytes and never adds them, so two channels can share a 32-bit word: r and b in
// the 16-bit lanes of one word (0x00BB00RR), g and a in those of another (0x00AA00GG), and one
// ushort2 min or max serves two channels (CUDA's __vminu2: one instruction on sm_90).
uint even_lanes(uint pixel) { return pixel & 0x00FF00FFu; }        // r, b
uint odd_lanes(uint pixel) { return (pixel >> 8) & 0x00FF00FFu; }  // g, a
uint join_lanes(uint even, uint odd) { return even | odd << 8; }
uint lo(uint a, uint b) { return as_uint(min(as_ushort2(a), as_ushort2(b))); }
uint hi(uint a, uint b) { return as_uint(max(as_ushort2(a), as_ushort2(b))); }
// Compare-exchange, lane by lane: a gets the smaller value, b the larger.
void order(uint* a, uint* b) {
  const uint smaller = lo(*a, *b);
  *b = hi(*a, *b);
  *a = smaller;
}
uint median_of_3(uint a, uint b, uint c) { return hi(lo(a, b), lo(hi(a, b), c)); }

// A work-item's run of one row: P pixels from x0 (one vector load when the rows are a multiple of
// P pixels wide, as the timed image is) and H pixels either side, clamped at the edges.
#define LOAD_RUN(px, row, x0, width, P, H)                                                   \
  for (int i = 0; i < (H); ++i) {                                                            \
    (px)[i] = (row)[max((x0) - (H) + i, 0)];                                                 \
    (px)[(H) + (P) + i] = (row)[min((x0) + (P) + i, (width) - 1)];                           \
  }                                                                                          \
  if ((width) % (P) == 0)                                                                    \
    for (int i = 0; i < (P); i += 2) vstore2(vload2(0, (row) + (x0) + i), 0, (px) + (H) + i); \
  else                                                                                       \
    for (int i = 0; i < (P); ++i) (px)[(H) + i] = (row)[min((x0) + i, (width) - 1)];

void store_run(__global uint* row, int x0, int width, const uint* px, int P) {
  for (int i = 0; i < P; ++i)
    if (x0 + i < width) row[x0 + i] = px[i];
}

#define M3_PIXELS 4 /* 3x3: each work-item filters 4 pixels of 8 rows */
#define M3_ROWS 8
#define M5_PIXELS 2 /* 5x5: each work-item filters a 2x2 block */
#define MEDIAN_GROUP_X 32
#define MEDIAN_GROUP_Y 4

// 3x3 medians of M3_ROWS x M3_PIXELS outputs from the rows and columns around them, one word of
// lanes each. Sort the 3 values of each column of a window: the median of the 9 is the median of
// (the largest column minimum, the median of the column medians, the smallest column maximum).
// Neighbouring outputs share work: a column's sort serves the 3 outputs beside it, and rows 2k+1,
// 2k+2 are ordered once for the two output rows whose windows hold both.
void median3_lanes(const uint v[M3_ROWS + 2][M3_PIXELS + 2], uint median[M3_ROWS][M3_PIXELS]) {
#pragma unroll
  for (int pair = 1; pair < M3_ROWS + 1; pair += 2) {  // rows pair, pair + 1: windows of output rows pair - 1, pair
    uint low[M3_PIXELS + 2], high[M3_PIXELS + 2];
#pragma unroll
    for (int c = 0; c < M3_PIXELS + 2; ++c)
      low[c] = lo(v[pair][c], v[pair + 1][c]), high[c] = hi(v[pair][c], v[pair + 1][c]);
#pragma unroll
    for (int y = pair - 1; y <= pair; ++y) {
      const int third = y == pair - 1 ? pair - 1 : pair + 2;  // the window's row outside the pair
      uint mins[M3_PIXELS + 2], mids[M3_PIXELS + 2], maxs[M3_PIXELS + 2];
#pragma unroll
      for (int c = 0; c < M3_PIXELS + 2; ++c) {
        const uint t = v[third][c];
        mins[c] = lo(t, low[c]), mids[c] = hi(low[c], lo(t, high[c])), maxs[c] = hi(t, high[c]);
      }
#pragma unroll
      for (int x = 0; x < M3_PIXELS; ++x) {
        // Outputs x and x + 1 (x even) share columns x + 1, x + 2: their max and min are taken once.
        const int shared = x - x % 2 + 1, own = x % 2 ? x + 2 : x;
        const uint max_of_mins = hi(hi(mins[shared], mins[shared + 1]), mins[own]);
        const uint min_of_maxs = lo(lo(maxs[shared], maxs[shared + 1]), maxs[own]);
        median[y][x] = median_of_3(max_of_mins, median_of_3(mids[x], mids[x + 1], mids[x + 2]), min_of_maxs);
      }
    }
  }
}

__kernel __attribute__((reqd_work_group_size(MEDIAN_GROUP_X, MEDIAN_GROUP_Y, 1)))
void median3_kernel(__global const uint* in, __global uint* out, int width, int height) {
  const int x0 = M3_PIXELS * get_global_id(0), y0 = M3_ROWS * get_global_id(1);
  if (x0 >= width || y0 >= height) return;  // no barrier in this kernel
  uint even[M3_ROWS + 2][M3_PIXELS + 2], odd[M3_ROWS + 2][M3_PIXELS + 2];
#pragma unroll
  for (int r = 0; r < M3_ROWS + 2; ++r) {
    __global const uint* row = in + (size_t)clamp_to(y0 - 1 + r, height) * width;
    uint px[M3_PIXELS + 2];
    LOAD_RUN(px, row, x0, width, M3_PIXELS, 1)
#pragma unroll
    for (int c = 0; c < M3_PIXELS + 2; ++c) even[r][c] = even_lanes(px[c]), odd[r][c] = odd_lanes(px[c]);
  }
  uint even_median[M3_ROWS][M3_PIXELS], odd_median[M3_ROWS][M3_PIXELS];
  median3_lanes(even, even_median);
  median3_lanes(odd, odd_median);
#pragma unroll
  for (int y = 0; y < M3_ROWS; ++y) {
    if (y0 + y < height) {  // not `return`: an exit inside the loop can keep it from unrolling
      uint result[M3_PIXELS];
#pragma unroll
      for (int x = 0; x < M3_PIXELS; ++x) result[x] = join_lanes(even_median[y][x], odd_median[y][x]);
      __global uint* row = out + (size_t)(y0 + y) * width;
      if (width % M3_PIXELS == 0)
        vstore4(vload4(0, result), 0, row + x0);
      else
        store_run(row, x0, width, result, M3_PIXELS);
    }
  }
}

// Forgetful selection of the median of 25: hold 14 values; take in the other 11 one by one, each
// time dropping the smallest and the largest held (neither can be the median of all 25); the
// middle of the last three is the median. One step: v[0..last] held; the smallest goes to v[0] and
// the largest to v[last], both are dropped, and `next` takes v[0]'s place: v[0..last-1] held.
#define HELD 14
void forget_extremes(uint v[HELD], int last, uint next) {
#pragma unroll
  for (int i = 1; i <= last; ++i) order(&v[0], &v[i]);
#pragma unroll
  for (int i = 1; i < last; ++i) order(&v[i], &v[last]);
  v[0] = next;
}

// 5x5 medians of a 2x2 block of outputs from the 6x6 values around it, v[row][column], one word of
// lanes each. The order in which the 25 values are taken in does not matter, so the values that
// windows share are taken in first and their work is done once: all four windows hold the middle
// 4x4 (14 held + 2 steps, shared by 4); the two windows of a column also hold 4 more values of
// column 0 or 5 (4 steps, shared by 2); each window has 5 values of row 0 or 5 of its own (5 steps).
// 96 compare-exchanges per output instead of 168.
void median5_lanes(const uint v[6][6], uint median[2][2]) {
  uint all[HELD];
#pragma unroll
  for (int k = 0; k < HELD; ++k) all[k] = v[1 + k / 4][1 + k % 4];
  forget_extremes(all, 13, v[4][3]);
  forget_extremes(all, 12, v[4][4]);
#pragma unroll
  for (int x = 0; x < 2; ++x) {
    uint column[HELD];
#pragma unroll
    for (int k = 0; k < HELD; ++k) column[k] = all[k];
#pragma unroll
    for (int k = 0; k < 4; ++k) forget_extremes(column, 11 - k, v[1 + k][x == 0 ? 0 : 5]);
#pragma unroll
    for (int y = 0; y < 2; ++y) {
      uint own[HELD];
#pragma unroll
      for (int k = 0; k < HELD; ++k) own[k] = column[k];
#pragma unroll
      for (int k = 0; k < 5; ++k) forget_extremes(own, 7 - k, v[y == 0 ? 0 : 5][x + k]);
      median[y][x] = median_of_3(own[0], own[1], own[2]);
    }
  }
}

__kernel __attribute__((reqd_work_group_size(MEDIAN_GROUP_X, MEDIAN_GROUP_Y, 1)))
void median5_kernel(__global const uint* in, __global uint* out, int width, int height) {
  const int x0 = M5_PIXELS * get_global_id(0), y0 = 2 * get_global_id(1);
  if (x0 >= width || y0 >= height) return;
  uint even[6][6], odd[6][6], even_median[2][2], odd_median[2][2];  // rows y0 - 2 .., columns x0 - 2 ..
#pragma unroll
  for (int r = 0; r < 6; ++r) {
    __global const uint* row = in + (size_t)clamp_to(y0 - 2 + r, height) * width;
    uint px[M5_PIXELS + 4];
    LOAD_RUN(px, row, x0, width, M5_PIXELS, 2)
#pragma unroll
    for (int c = 0; c < 6; ++c) even[r][c] = even_lanes(px[c]), odd[r][c] = odd_lanes(px[c]);
  }
  median5_lanes(even, even_median);
  median5_lanes(odd, odd_median);
#pragma unroll
  for (int y = 0; y < 2; ++y) {
    const uint result[2] = {join_lanes(even_median[y][0], odd_median[y][0]),
                            join_lanes(even_median[y][1], odd_median[y][1])};
    if (y0 + y < height) store_run(out + (size_t)(y0 + y) * width, x0, width, result, M5_PIXELS);
  }
}
// --8<-- [end:median]
