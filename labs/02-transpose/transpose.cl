// Lab 02-transpose (OpenCL kernels): out (cols x rows) = transpose of in (rows x cols), row-major:
// out[c * rows + r] = in[r * cols + c]. Launched by transpose_opencl.cpp.

__kernel void transpose_naive_kernel(__global const float* in, __global float* out, int rows, int cols) {
  // TODO (2-D indexing): one work-item per element: col = get_global_id(0), row = get_global_id(1),
  // so neighbouring work-items read neighbouring elements of a row. The global size is rounded up,
  // so only work-items with row < rows and col < cols copy in[row * cols + col] to
  // out[col * rows + row] (index in size_t).
}

#define TILE 32         /* the tile is TILE x TILE elements */
#define ROWS_PER_PASS 8 /* work-groups of TILE x ROWS_PER_PASS: each work-item moves 4 elements */

__kernel __attribute__((reqd_work_group_size(TILE, ROWS_PER_PASS, 1)))
void transpose_tiled_kernel(__global const float* in, __global float* out, int rows, int cols) {
  // TODO 1 (local memory): declare a __local float tile[TILE][TILE + 1]. Why + 1? See the README's
  //   section on bank conflicts.
  // TODO 2 (coalesced loads): this work-group owns tile (get_group_id(1), get_group_id(0)) of `in`.
  //   Work-item (tx, ty) = (get_local_id(0), get_local_id(1)) loads in[(row + j) * cols + col] into
  //   tile[ty + j][tx] for j = 0, 8, 16, 24, with col = get_group_id(0) * TILE + tx and
  //   row = get_group_id(1) * TILE + ty, skipping elements outside the matrix.
  // TODO 3 (synchronisation): barrier(CLK_LOCAL_MEM_FENCE) so the tile is complete before anyone reads it.
  // TODO 4 (coalesced stores): the tile lands at tile (get_group_id(0), get_group_id(1)) of `out`,
  //   which has `rows` columns. With col = get_group_id(1) * TILE + tx and row = get_group_id(0) * TILE + ty,
  //   store tile[tx][ty + j] to out[(row + j) * rows + col], again with a bounds test.
}
