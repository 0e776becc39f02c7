// Lab 06-scan (OpenCL host code), reference solution: launches the kernels of scan.cl.
#include "gpulab/student/opencl.hpp"

using gpulab::check;
using gpulab::round_up;
using gpulab::set_args;

namespace {

constexpr int kBlock = 1024;                                 // BLOCK in scan.cl
constexpr int kTileThreads = 256, kTile = kTileThreads * 4;  // TILE_THREADS and TILE in scan.cl
constexpr int kFastTile = 12 * kTile;                        // FAST_TILE in scan.cl

// Words of a buffer from `at` on: what a pointer is in CUDA, since a cl_mem has no arithmetic.
struct Words {
  cl_mem buffer;
  int at;
};

void enqueue(const gpulab::OpenCLLab& lab, cl_kernel kernel, size_t groups, size_t local, const char* what) {
  const size_t global = groups * local;
  check(clEnqueueNDRangeKernel(lab.queue(), kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr), what);
}

}  // namespace

// --8<-- [start:block]
void scan_block(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, cl_mem, int n) {
  cl_kernel kernel = lab.kernel("scan_block_kernel");
  set_args(kernel, in, out, n);
  enqueue(lab, kernel, 1, kBlock, "launching scan_block_kernel");
}
// --8<-- [end:block]

// --8<-- [start:any-n]
namespace {
// Scans n words of `in` into `out` (which may be `in`), with the scratch from `scratch` on; each
// level's tile sums start at a multiple of 4 words (the kernels' uint4 accesses).
void scan_levels(const gpulab::OpenCLLab& lab, Words in, Words out, Words scratch, int n) {
  const int tiles = static_cast<int>(round_up(n, kTile) / kTile);
  cl_kernel scan_tiles = lab.kernel("scan_tiles_kernel");
  set_args(scan_tiles, in.buffer, in.at, out.buffer, out.at, scratch.buffer, scratch.at, n);
  enqueue(lab, scan_tiles, tiles, kTileThreads, "launching scan_tiles_kernel");
  if (tiles == 1) return;
  // Phase 2: the tile sums are a scan of their own, in place, with the scratch after them for theirs.
  scan_levels(lab, scratch, scratch, {scratch.buffer, scratch.at + static_cast<int>(round_up(tiles, 4))}, tiles);
  cl_kernel add_offsets = lab.kernel("add_tile_offsets_kernel");
  set_args(add_offsets, out.buffer, out.at, scratch.buffer, scratch.at, n);
  enqueue(lab, add_offsets, tiles, kTileThreads, "launching add_tile_offsets_kernel");
}
}  // namespace

void scan_any_n(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, cl_mem scratch, int n) {
  scan_levels(lab, {in, 0}, {out, 0}, {scratch, 0}, n);
}
// --8<-- [end:any-n]

// --8<-- [start:fast]
void scan_fast(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, cl_mem scratch, int n) {
  const int tiles = static_cast<int>(round_up(n, kFastTile) / kFastTile);
  if (tiles > 1) {  // the scratch comes filled with garbage: clear the ticket and the tile states
    const cl_uint zero = 0;
    check(clEnqueueFillBuffer(lab.queue(), scratch, &zero, sizeof zero, 0, (2 + 2 * size_t(tiles)) * sizeof zero, 0,
                              nullptr, nullptr),
          "clearing the tile states");
  }
  cl_kernel scan = lab.kernel("scan_lookback_kernel");
  set_args(scan, in, out, scratch, n);
  enqueue(lab, scan, tiles, kTileThreads, "launching scan_lookback_kernel");
}
// --8<-- [end:fast]
