// Lab 02-transpose (OpenCL kernels): out (cols x rows) = transpose of in (rows x cols), row-major.

// --8<-- [start:naive]
// Neighbouring work-items read neighbouring elements of a row (coalesced), but write elements a
// whole column apart.
__kernel void transpose_naive_kernel(__global const float* in, __global float* out, int rows, int cols) {
  const int col = get_global_id(0);
  const int row = get_global_id(1);
  if (row < rows && col < cols) out[(size_t)col * rows + row] = in[(size_t)row * cols + col];
}
// --8<-- [end:naive]

// --8<-- [start:tiled]
#define TILE 32         /* a 32 x 32 tile: 32 work-items cover a tile row */
#define ROWS_PER_PASS 8 /* 32 x 8 work-items, each moving 4 elements */

// A work-group stages a 32 x 32 tile in local memory: it reads the tile's rows from `in` and
// writes the tile's columns as rows of `out`, so both global accesses are coalesced.
__kernel __attribute__((reqd_work_group_size(TILE, ROWS_PER_PASS, 1)))
void transpose_tiled_kernel(__global const float* restrict in, __global float* restrict out, int rows, int cols) {
  // One padding column: a tile column then spans all banks instead of hitting one bank 32 times.
  __local float tile[TILE][TILE + 1];
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int gx = get_group_id(0), gy = get_group_id(1);

  int col = gx * TILE + tx;
  int row = gy * TILE + ty;
  for (int j = 0; j < TILE; j += ROWS_PER_PASS)
    if (col < cols && row + j < rows) tile[ty + j][tx] = in[(size_t)(row + j) * cols + col];

  barrier(CLK_LOCAL_MEM_FENCE);  // the whole tile must be loaded before anyone reads another's element

  // Tile (gy, gx) of `in` is tile (gx, gy) of `out`.
  col = gy * TILE + tx;
  row = gx * TILE + ty;
  for (int j = 0; j < TILE; j += ROWS_PER_PASS)
    if (col < rows && row + j < cols) out[(size_t)(row + j) * rows + col] = tile[tx][ty + j];
}
// --8<-- [end:tiled]
