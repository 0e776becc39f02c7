// The staff kernels (filter_lab.hpp): the reference solution's designs, written for the harness.
// The harness's staff_box_tiled kernel (bindings_opencl.cpp builds it); students get it encoded,
// never as this source (grader/contract/kernel_embedding.hpp).
#define MAX_RADIUS 8
#define BLOCK_X 32
#define BLOCK_Y 8
__kernel __attribute__((reqd_work_group_size(BLOCK_X, BLOCK_Y, 1))) void staff_box_tiled(__global const uchar4* in,
                                                                                         __global uchar4* out,
                                                                                         int width, int height,
                                                                                         int radius) {
  __local uchar4 tile[BLOCK_Y + 2 * MAX_RADIUS][BLOCK_X + 2 * MAX_RADIUS];
  __local uint4 row_sums[BLOCK_Y + 2 * MAX_RADIUS][BLOCK_X];
  const int lx = get_local_id(0), ly = get_local_id(1);
  const int tile_w = BLOCK_X + 2 * radius, tile_h = BLOCK_Y + 2 * radius;
  const int x0 = get_group_id(0) * BLOCK_X - radius, y0 = get_group_id(1) * BLOCK_Y - radius;
  for (int ty = ly; ty < tile_h; ty += BLOCK_Y) {
    __global const uchar4* row = in + (size_t)clamp(y0 + ty, 0, height - 1) * width;
    for (int tx = lx; tx < tile_w; tx += BLOCK_X) tile[ty][tx] = row[clamp(x0 + tx, 0, width - 1)];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int ty = ly; ty < tile_h; ty += BLOCK_Y) {
    uint4 sum = (uint4)(0);
    for (int dx = 0; dx <= 2 * radius; ++dx) sum += convert_uint4(tile[ty][lx + dx]);
    row_sums[ty][lx] = sum;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  uint4 sum = (uint4)(0);
  for (int dy = 0; dy <= 2 * radius; ++dy) sum += row_sums[ly + dy][lx];
  const uint n = (2 * radius + 1) * (2 * radius + 1);
  out[(size_t)y * width + x] = convert_uchar4((sum + n / 2) / n);
}
