// Lab 04-filter (CUDA): RGBA8 image filters with clamped edges. Pixel (x, y) of a width x height
// image is in[y * width + x], one uchar4 (r, g, b, a). Read README.md first (the rounding rules are
// there: the grader compares every byte), fill in the TODOs and run `make check` in this folder.
// The grader passes device pointers; keep the five signatures.
#include "gpulab/student/cuda.hpp"

constexpr int kMaxRadius = 8;              // the grader's radii are 0..8
constexpr int kBlockX = 32, kBlockY = 8;   // a warp covers 32 neighbouring pixels of a row

// Given: coordinates outside the image read the nearest edge pixel.
__device__ int clamp_to(int v, int size) { return min(max(v, 0), size - 1); }

// Given: adds weight * p to the four channel sums.
__device__ void accumulate(uint4& sum, uchar4 p, unsigned weight = 1) {
  sum.x += weight * p.x;
  sum.y += weight * p.y;
  sum.z += weight * p.z;
  sum.w += weight * p.w;
}

// Given: the mean of n pixels rounded half up, per channel: (sum + n / 2) / n.
__device__ uchar4 rounded_mean(uint4 sum, unsigned n) {
  return make_uchar4((sum.x + n / 2) / n, (sum.y + n / 2) / n, (sum.z + n / 2) / n, (sum.w + n / 2) / n);
}

__global__ void box_naive_kernel(const uchar4* in, uchar4* out, int width, int height, int radius) {
  // TODO (gather from global memory): one thread per output pixel (x from the x dimension of the
  // grid, y from the y dimension; threads outside the image return). Sum the (2r+1) x (2r+1)
  // window around (x, y) with accumulate(), reading in[clamp_to(y + dy, height) * width +
  // clamp_to(x + dx, width)] for dy, dx in -radius..radius, and store rounded_mean(sum, (2r+1)^2).
  // Index in size_t. How many times is each input pixel read, by how many threads?
}

void box_naive(const uchar4* in, uchar4* out, int width, int height, int radius) {
  // TODO (2-D launch): blocks of kBlockX x kBlockY threads, a grid of
  // gpulab::blocks_for(width, kBlockX) x gpulab::blocks_for(height, kBlockY); check the launch.
  GPULAB_NOT_IMPLEMENTED("box_naive: launch box_naive_kernel (see the TODOs above)");
}

__global__ void box_tiled_kernel(const uchar4* in, uchar4* out, int width, int height, int radius) {
  // TODO 1 (shared memory with a halo): declare
  //   __shared__ uchar4 tile[kBlockY + 2 * kMaxRadius][kBlockX + 2 * kMaxRadius];
  //   This block's outputs need its kBlockX x kBlockY pixels plus `radius` more on every side:
  //   tile_w = kBlockX + 2 * radius by tile_h = kBlockY + 2 * radius pixels, whose top-left corner
  //   is (blockIdx.x * kBlockX - radius, blockIdx.y * kBlockY - radius) in the image.
  // TODO 2 (cooperative, coalesced loading): the 256 threads load the whole tile, more pixels than
  //   threads: for (ty = threadIdx.y; ty < tile_h; ty += kBlockY) for (tx = threadIdx.x; tx < tile_w;
  //   tx += kBlockX) tile[ty][tx] = the clamped image pixel at corner + (tx, ty). A warp then reads
  //   consecutive pixels of one row: one 128-byte transaction.
  // TODO 3 (synchronisation): __syncthreads() before anyone reads the tile, and no `return` before
  //   it: threads outside the image still help to load.
  // TODO 4 (reuse: the box is separable): summing the (2r+1)^2 window of every pixel from the tile
  //   is correct but costs (2r+1)^2 additions per channel. Instead declare
  //   __shared__ uint4 row_sums[kBlockY + 2 * kMaxRadius][kBlockX]; each thread
  //   fills row_sums[ty][threadIdx.x] (for its tile rows ty, as in TODO 2) with the sum of tile[ty][threadIdx.x + dx]
  //   for dx in 0..2r; __syncthreads(); then threads inside the image add row_sums[threadIdx.y + dy][threadIdx.x] for
  //   dy in 0..2r and store rounded_mean(sum, (2r+1)^2). README question 2 asks how many additions
  //   this saves at r = 3, and why the threshold needs it.
}

void box_tiled(const uchar4* in, uchar4* out, int width, int height, int radius) {
  // TODO (launch): as box_naive, with box_tiled_kernel.
  GPULAB_NOT_IMPLEMENTED("box_tiled: launch box_tiled_kernel (see the TODOs above)");
}

// Given: row 2r of Pascal's triangle for every radius: the binomial weights C(2r, k), k = 0..2r,
// which sum to 4^r. In constant memory: all threads of a warp read the same weight, a broadcast.
__constant__ unsigned kBinomial[kMaxRadius + 1][2 * kMaxRadius + 1] = {
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
__device__ uchar4 binomial_round(uint4 sum, int radius) {
  const int shift = 2 * radius;
  const unsigned half = (1u << shift) >> 1;
  return make_uchar4((sum.x + half) >> shift, (sum.y + half) >> shift, (sum.z + half) >> shift, (sum.w + half) >> shift);
}

// TODO 1 (horizontal pass): write gaussian_rows_kernel(in, out, width, height, radius): out(x, y) =
//   binomial_round(sum over k = 0..2r of kBinomial[radius][k] * in(clamp_to(x + k - radius), y)).
//   Stage each block's row segment plus r pixels on each side in shared memory first, as in
//   box_tiled_kernel but one row high (e.g. blocks of 128 x 2 threads, one segment per row).
// TODO 2 (vertical pass): write gaussian_columns_kernel the same way along y. Its tile is a column
//   strip: kBlockX pixels wide and (rows of outputs + 2r) high, so a warp still loads one row
//   segment at a time (coalesced). Let each thread compute several pixels of its column (e.g. 4):
//   the halo is then loaded once for more outputs. README question 4 asks why this matters here.

void gaussian(const uchar4* in, uchar4* temp, uchar4* out, int width, int height, int radius) {
  // TODO 3 (two launches, one stream): the horizontal pass from in into temp, then the vertical
  // pass from temp into out. Kernels on one stream run in order: no synchronisation is needed in
  // between. Check both launches.
  GPULAB_NOT_IMPLEMENTED("gaussian: write and launch the two passes (see the TODOs above)");
}

// Given: compare-exchange on all four channels at once: a gets the smaller value, b the larger.
__device__ void order(uchar4& a, uchar4& b) {
  const uchar4 lo = make_uchar4(min(a.x, b.x), min(a.y, b.y), min(a.z, b.z), min(a.w, b.w));
  b = make_uchar4(max(a.x, b.x), max(a.y, b.y), max(a.z, b.z), max(a.w, b.w));
  a = lo;
}

// TODO 1 (a selection network): write __device__ uchar4 median_of_9(uchar4 v[9]) with order():
//   sort each row of three (3 compare-exchanges per row), then the median of the nine is the median
//   of three values: the largest row minimum, the median of the row medians and the smallest row
//   maximum (README explains why). 19 compare-exchanges in all, no branches: every thread of a
//   warp does the same work, whatever its pixels.
// TODO 2 (tile with a halo of 1): write median3_kernel like box_tiled_kernel with radius 1, gather
//   the 9 window pixels from shared memory into uchar4 window[9] and store median_of_9(window).
//   TODOs 1-3 pass the bound with margin (about 18 % of the copy on the H100, 12 % needed).
// Beyond the bound (optional; README, "Medians on 16-bit lanes"; the reference reaches 66 %):
// TODO 4 (two channels per word, a native instruction): a median compares and never adds, so with
//   a pixel as one unsigned p, p & 0x00FF00FF holds r and b in two 16-bit lanes, (p >> 8) & 0x00FF00FF
//   holds g and a, and __vminu2 / __vmaxu2 take the min / max of both lanes in one instruction on
//   sm_90 (the four-byte __vminu4 is emulated by about a dozen; min on a uchar4 is four). Write your
//   lane-pair order() and median of 3 with them; __byte_perm(even, odd, 0x6240) joins the two words
//   back into r, g, b, a.
// TODO 5 (many outputs per thread, from registers): drop the tile. Each thread filters P pixels of
//   ROWS rows (P = 4, ROWS = 8 in the reference; blocks of 32 x 4 threads): it loads the ROWS + 2
//   clamped rows of P + 2 pixels around them straight from global memory, every load before the first
//   compare (a uint4 for the P pixels when width % 4 == 0, the two side pixels alone), splits them
//   into lanes and writes P outputs per row with one 16-byte store. Unroll every loop (#pragma unroll,
//   P and ROWS compile-time constants) so the arrays stay in registers; no barrier, so threads past
//   the image may return at once. Test y0 + y < height around each output row, not `return`.
// TODO 6 (reuse of work: sort columns once): with columns instead of rows in TODO 1, a column's
//   min, mid and max serve the three outputs whose windows hold it: per output row, sort each of
//   the P + 2 columns once, then each output takes the max of 3 column mins, the median of 3 mids
//   and the min of 3 maxes, and the median of those. Two output rows y, y + 1 both hold input rows
//   y, y + 1: order those once (min, max) and merge each output row's third row in 4 min/max.
//   On the H100: 1 px x 4 rows 47 %, 2 x 8 62 %, 4 x 4 68 %, 4 x 8 67 % of the copy.

void median3(const uchar4* in, uchar4* out, int width, int height) {
  // TODO 3 (launch): blocks of kBlockX x kBlockY threads over the image; check the launch. (With
  //   TODO 5: a grid of blocks_for(blocks_for(width, P), 32) x blocks_for(blocks_for(height, ROWS), 4).)
  GPULAB_NOT_IMPLEMENTED("median3: write and launch the 3x3 median (see the TODOs above)");
}

// TODO (bonus, 5x5): a median of 25 values per channel. Sorting 25 values is wasteful; README
//   describes "forgetful selection": hold 14 values, drop the smallest and the largest, take in
//   the next one, repeat. Unroll every loop (#pragma unroll) so the arrays stay in registers.
//   A tile with a halo of 2 and order() on uchar4 (168 compare-exchanges per pixel) pass the bonus
//   bound: about 2.7 % of the copy on the H100, 1 % needed. Beyond it (the reference reaches 12 %):
//   - lane pairs and registers as in median3's TODOs 4 and 5 (1 output per thread: 5.7 %);
//   - share a prefix (reuse of work): the order in which the 25 values come in does not matter, so
//     outputs whose windows overlap take in their common values first, once, and each copies the
//     14 held values before taking in its own. A 2x2 block of outputs per thread, from the 6 x 6
//     pixels around it: the 4 windows share the middle 4 x 4 (hold 14 of them, take in 2), the two
//     windows of a column share 4 more of the outer column, and each takes in its own 5 of the
//     outer row: 96 compare-exchanges per output instead of 168 (two outputs of a column: 9.4 %,
//     the 2x2 block: 12.2 %).

void median5(const uchar4* in, uchar4* out, int width, int height) {
  GPULAB_NOT_IMPLEMENTED("median5 (bonus): write and launch the 5x5 median (see the TODO above)");
}
