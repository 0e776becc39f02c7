// Lab 04-filter (OpenCL kernels): RGBA8 image filters with clamped edges. Pixel (x, y) of a
// width x height image is in[y * width + x], one uchar4 (r, g, b, a). Launched by filter_opencl.cpp;
// the rounding rules are in README.md (the grader compares every byte).

#define MAX_RADIUS 8
#define BLOCK_X 32 /* work-groups of 32 x 8: 32 neighbouring pixels of a row per warp */
#define BLOCK_Y 8

// Given: coordinates outside the image read the nearest edge pixel.
int clamp_to(int v, int size) { return clamp(v, 0, size - 1); }

// Given: the mean of n pixels rounded half up, per channel: (sum + n / 2) / n. OpenCL's vector
// types do the four channels at once: convert_uint4(pixel) widens a pixel, sums are uint4.
uchar4 rounded_mean(uint4 sum, uint n) { return convert_uchar4((sum + n / 2) / n); }

__kernel void box_naive_kernel(__global const uchar4* in, __global uchar4* out, int width, int height, int radius) {
  // TODO (gather from global memory): one work-item per output pixel, x = get_global_id(0),
  // y = get_global_id(1); work-items outside the image return. Sum convert_uint4() of the
  // (2r+1) x (2r+1) window, reading in[clamp_to(y + dy, height) * width + clamp_to(x + dx, width)]
  // for dy, dx in -radius..radius, and store rounded_mean(sum, (2r+1)^2). Index in size_t.
}

__kernel __attribute__((reqd_work_group_size(BLOCK_X, BLOCK_Y, 1)))
void box_tiled_kernel(__global const uchar4* in, __global uchar4* out, int width, int height, int radius) {
  // TODO 1 (local memory with a halo): declare __local uchar4 tile[BLOCK_Y + 2 * MAX_RADIUS][BLOCK_X + 2 * MAX_RADIUS].
  //   The work-group's outputs need its BLOCK_X x BLOCK_Y pixels plus `radius` on every side: a tile
  //   of (BLOCK_X + 2r) x (BLOCK_Y + 2r) pixels whose top-left corner is
  //   (get_group_id(0) * BLOCK_X - radius, get_group_id(1) * BLOCK_Y - radius) in the image.
  // TODO 2 (cooperative, coalesced loading): with (lx, ly) = (get_local_id(0), get_local_id(1)):
  //   for (ty = ly; ty < tile_h; ty += BLOCK_Y) for (tx = lx; tx < tile_w; tx += BLOCK_X)
  //   tile[ty][tx] = the clamped image pixel at corner + (tx, ty).
  // TODO 3 (synchronisation): barrier(CLK_LOCAL_MEM_FENCE) before anyone reads the tile, and no
  //   `return` before it: work-items outside the image still help to load.
  // TODO 4 (reuse: the box is separable): summing the (2r+1)^2 window of every pixel from the tile
  //   is correct but costs (2r+1)^2 additions per channel. Instead declare
  //   __local uint4 row_sums[BLOCK_Y + 2 * MAX_RADIUS][BLOCK_X]; each thread
  //   fills row_sums[ty][lx] (for its tile rows ty, as in TODO 2) with the sum of tile[ty][lx + dx]
  //   for dx in 0..2r; barrier(CLK_LOCAL_MEM_FENCE); then threads inside the image add row_sums[ly + dy][lx] for
  //   dy in 0..2r and store rounded_mean(sum, (2r+1)^2). README question 2 asks how many additions
  //   this saves at r = 3, and why the threshold needs it.
}

// Given: row 2r of Pascal's triangle for every radius: the binomial weights C(2r, k), k = 0..2r,
// which sum to 4^r.
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

// Given: one pass rounds to 8 bits: (sum + 4^r / 2) >> 2r.
uchar4 binomial_round(uint4 sum, int radius) {
  const uint shift = 2 * radius, bias = (1u << shift) >> 1;
  return convert_uchar4((sum + bias) >> shift);
}

// TODO 1 (horizontal pass): write __kernel void gaussian_rows_kernel(in, out, width, height, radius):
//   out(x, y) = binomial_round(sum over k = 0..2r of BINOMIAL[radius][k] * in(clamp_to(x + k - radius), y)).
//   Stage each work-group's row segment plus r pixels on each side in local memory first, as in
//   box_tiled_kernel but one row high (e.g. work-groups of 128 x 2, one segment per row).
// TODO 2 (vertical pass): write gaussian_columns_kernel the same way along y: its tile is BLOCK_X
//   pixels wide and (rows of outputs + 2r) high, loaded row by row (coalesced). Let each work-item
//   compute several pixels of its column (e.g. 4), so the halo is loaded once for more outputs.

// Given: compare-exchange on all four channels at once (min and max work per component).
void order(uchar4* a, uchar4* b) {
  const uchar4 lo = min(*a, *b);
  *b = max(*a, *b);
  *a = lo;
}

__kernel __attribute__((reqd_work_group_size(BLOCK_X, BLOCK_Y, 1)))
void median3_kernel(__global const uchar4* in, __global uchar4* out, int width, int height) {
  // TODO 1 (tile with a halo of 1): load a (BLOCK_X + 2) x (BLOCK_Y + 2) tile as in box_tiled_kernel,
  //   then gather the pixel's 3 x 3 window from local memory into uchar4 v[9].
  // TODO 2 (a selection network): sort each row of three with order() (3 compare-exchanges per
  //   row); the median of the nine is the median of the largest row minimum, the median of the row
  //   medians and the smallest row maximum (README explains why): 19 compare-exchanges, no branches.
  //   TODOs 1-2 pass the bound with margin (about 18 % of the copy on the H100, 12 % needed).
  // Beyond the bound (optional; README, "Medians on 16-bit lanes"; the reference reaches 37 %):
  // TODO 3 (two channels per word): view the image as words, (__global const uint*)in, one pixel
  //   per uint p: p & 0x00FF00FF holds r and b in two 16-bit lanes, (p >> 8) & 0x00FF00FF g and a;
  //   min and max of as_ushort2() of two such words compare both lanes at once, and even | odd << 8
  //   joins them back into a pixel.
  // TODO 4 (many outputs per work-item, from registers): drop the tile; each work-item filters 4
  //   pixels of 8 rows (the work-group may stay BLOCK_X x BLOCK_Y; the reference's is 32 x 4; the
  //   launch then covers ceil(width / 4) x ceil(height / 8) work-items): it loads the 10 clamped rows
  //   of 6 pixels around them from global memory (vload4 for the 4 when width % 4 == 0), every load
  //   before the first compare, splits them into lanes and stores 4 outputs per row with one vstore4.
  //   Unroll every loop (#pragma unroll) so the arrays stay in registers, and test y0 + y < height
  //   around each output row instead of returning inside the loop.
  // TODO 5 (reuse of work: sort columns once): sort columns instead of rows in TODO 2: each
  //   column's min, mid and max then serve the three outputs beside it; two output rows y, y + 1
  //   both hold input rows y, y + 1: order those once, and merge each output row's third row in 4
  //   min/max. (The CUDA reference reaches 66 % with this design; NVIDIA's OpenCL probably does not
  //   turn ushort2 min/max into sm_90's two-lane instructions.)
}

__kernel __attribute__((reqd_work_group_size(BLOCK_X, BLOCK_Y, 1)))
void median5_kernel(__global const uchar4* in, __global uchar4* out, int width, int height) {
  // TODO (bonus, 5x5): a tile with a halo of 2 and a median of 25 values per channel by "forgetful
  //   selection" (README): hold 14 values, drop the smallest and the largest, take in the next.
  //   That passes the bonus bound (about 2.7 % of the copy on the H100, 1 % needed). Beyond it (the
  //   reference reaches 6 %, 12 % in CUDA): lane pairs from registers as in median3's TODOs 3-4, and
  //   a shared prefix (reuse of work): the order in which the 25 values come in does not matter, so
  //   a work-item filters a 2x2 block from the 6 x 6 pixels around it: the 4 windows take in the
  //   middle 4 x 4 first (hold 14, take in 2), the two windows of a column then copy the 14 held
  //   values and take in 4 more of their outer column, and each window copies again and takes in its
  //   own 5 of the outer row: 96 compare-exchanges per output instead of 168.
}
