// The CUDA staff kernels of 04-filter, compiled by nvcc on their own: the harness's tiled box filter
// and 5x5 median, the designs whose speed the box-tiled and median5 bounds are fractions of.
#pragma once

namespace gpulab::labs::filter_cuda {

// `in` and `out`: width x height RGBA8 pixels on the device.
void staff_box_tiled(const void* in, void* out, int width, int height, int radius);
void staff_median5(const void* in, void* out, int width, int height);

}  // namespace gpulab::labs::filter_cuda
