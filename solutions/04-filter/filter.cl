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
// Compare-exchange on all four channels at once: a gets the smaller value, b the larger.
void order(uchar4* a, uchar4* b) {
  const uchar4 lo = min(*a, *b);
  *b = max(*a, *b);
  *a = lo;
}

// The median of 3x3 = the median of (the largest row minimum, the median of the row medians, the
// smallest row maximum), once each row is sorted: 19 compare-exchanges instead of a sort of 9.
uchar4 median_of_9(uchar4 v[9]) {
  for (int row = 0; row < 9; row += 3) {
    order(&v[row], &v[row + 1]);
    order(&v[row + 1], &v[row + 2]);
    order(&v[row], &v[row + 1]);
  }
  order(&v[0], &v[3]), order(&v[3], &v[6]);                     // v[6]: the largest minimum
  order(&v[5], &v[8]), order(&v[2], &v[5]);                     // v[2]: the smallest maximum
  order(&v[1], &v[4]), order(&v[4], &v[7]), order(&v[1], &v[4]);  // v[4]: the median of the medians
  order(&v[2], &v[4]), order(&v[4], &v[6]), order(&v[2], &v[4]);  // the median of those three
  return v[4];
}

// Forgetful selection over 25 values: hold 14; repeatedly drop the smallest and the largest
// (neither can be the median of all 25) and take in the next value; the middle of the last three
// is the median.
uchar4 median_of_25(const uchar4 all[25]) {
  uchar4 v[14];
#pragma unroll
  for (int i = 0; i < 14; ++i) v[i] = all[i];
#pragma unroll
  for (int next = 14; next < 25; ++next) {
    const int last = 13 - (next - 14);  // the held values are v[0..last]
#pragma unroll
    for (int i = 1; i <= last; ++i) order(&v[0], &v[i]);    // v[0]: the smallest
#pragma unroll
    for (int i = 1; i < last; ++i) order(&v[i], &v[last]);  // v[last]: the largest
    v[0] = all[next];                                     // both dropped, the next value in
  }
  order(&v[0], &v[1]), order(&v[1], &v[2]), order(&v[0], &v[1]);
  return v[1];
}

// The work-group's tile plus a halo of R in local memory, as in box_tiled_kernel.
#define LOAD_TILE(R)                                                                        \
  __local uchar4 tile[BLOCK_Y + 2 * (R)][BLOCK_X + 2 * (R)];                                \
  const int lx = get_local_id(0), ly = get_local_id(1);                                     \
  const int x0 = get_group_id(0) * BLOCK_X - (R), y0 = get_group_id(1) * BLOCK_Y - (R);     \
  for (int ty = ly; ty < BLOCK_Y + 2 * (R); ty += BLOCK_Y) {                                \
    __global const uchar4* row = in + (size_t)clamp_to(y0 + ty, height) * width;            \
    for (int tx = lx; tx < BLOCK_X + 2 * (R); tx += BLOCK_X) tile[ty][tx] = row[clamp_to(x0 + tx, width)]; \
  }                                                                                         \
  barrier(CLK_LOCAL_MEM_FENCE);                                                             \
  const int x = get_global_id(0), y = get_global_id(1);                                     \
  if (x >= width || y >= height) return;

__kernel __attribute__((reqd_work_group_size(BLOCK_X, BLOCK_Y, 1)))
void median3_kernel(__global const uchar4* in, __global uchar4* out, int width, int height) {
  LOAD_TILE(1)
  uchar4 window[9];
#pragma unroll
  for (int i = 0; i < 9; ++i) window[i] = tile[ly + i / 3][lx + i % 3];
  out[(size_t)y * width + x] = median_of_9(window);
}

__kernel __attribute__((reqd_work_group_size(BLOCK_X, BLOCK_Y, 1)))
void median5_kernel(__global const uchar4* in, __global uchar4* out, int width, int height) {
  LOAD_TILE(2)
  uchar4 window[25];
#pragma unroll
  for (int i = 0; i < 25; ++i) window[i] = tile[ly + i / 5][lx + i % 5];
  out[(size_t)y * width + x] = median_of_25(window);
}
// --8<-- [end:median]
