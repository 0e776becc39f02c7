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

// One pass rounds to 8 bits: (sum + 4^r / 2) >> 2r.
uchar4 binomial_round(uint4 sum, int radius) {
  const uint shift = 2 * radius, bias = (1u << shift) >> 1;
  return convert_uchar4((sum + bias) >> shift);
}

#define ROW_THREADS 128 /* horizontal pass: work-groups of 128 x 2 */
#define ROWS 2
#define COLUMN_OUTPUTS 4 /* vertical pass: each work-item computes 4 pixels */

// Horizontal pass: a work-group stages ROWS row segments of ROW_THREADS pixels plus r on each side.
__kernel __attribute__((reqd_work_group_size(ROW_THREADS, ROWS, 1)))
void gaussian_rows_kernel(__global const uchar4* in, __global uchar4* out, int width, int height, int radius) {
  __local uchar4 segment[ROWS][ROW_THREADS + 2 * MAX_RADIUS];
  const int lx = get_local_id(0), ly = get_local_id(1);
  const int y = get_global_id(1), x0 = get_group_id(0) * ROW_THREADS - radius;
  if (y < height) {  // uniform per row of work-items; the barrier below is outside the if
    __global const uchar4* row = in + (size_t)y * width;
    for (int tx = lx; tx < ROW_THREADS + 2 * radius; tx += ROW_THREADS) segment[ly][tx] = row[clamp_to(x0 + tx, width)];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const int x = get_global_id(0);
  if (x >= width || y >= height) return;
  uint4 sum = (uint4)(0);
  for (int k = 0; k <= 2 * radius; ++k) sum += convert_uint4(segment[ly][lx + k]) * BINOMIAL[radius][k];
  out[(size_t)y * width + x] = binomial_round(sum, radius);
}

// Vertical pass: a work-group of 32 x 8 computes a 32 x 32 tile; it stages 32 + 2r rows of 32
// pixels (coalesced), so each staged pixel serves up to 2r + 1 outputs.
__kernel __attribute__((reqd_work_group_size(BLOCK_X, BLOCK_Y, 1)))
void gaussian_columns_kernel(__global const uchar4* in, __global uchar4* out, int width, int height, int radius) {
  __local uchar4 tile[BLOCK_Y * COLUMN_OUTPUTS + 2 * MAX_RADIUS][BLOCK_X];
  const int lx = get_local_id(0), ly = get_local_id(1);
  const int x = get_global_id(0), y0 = get_group_id(1) * BLOCK_Y * COLUMN_OUTPUTS - radius;
  const int cx = min(x, width - 1);  // work-items past the right edge load a valid pixel and store nothing
  for (int ty = ly; ty < BLOCK_Y * COLUMN_OUTPUTS + 2 * radius; ty += BLOCK_Y)
    tile[ty][lx] = in[(size_t)clamp_to(y0 + ty, height) * width + cx];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (x >= width) return;
  for (int i = 0; i < COLUMN_OUTPUTS; ++i) {
    const int ty = ly + i * BLOCK_Y, y = get_group_id(1) * BLOCK_Y * COLUMN_OUTPUTS + ty;
    if (y >= height) return;
    uint4 sum = (uint4)(0);
    for (int k = 0; k <= 2 * radius; ++k) sum += convert_uint4(tile[ty + k][lx]) * BINOMIAL[radius][k];
    out[(size_t)y * width + x] = binomial_round(sum, radius);
  }
}
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
