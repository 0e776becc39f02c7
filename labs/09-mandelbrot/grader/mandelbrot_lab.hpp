// 09-mandelbrot: the student's kernels and the harness's naive kernel, as the driver calls them on
// either backend. Each writes the escape count of every pixel of `view` into `counts`.
#pragma once
#include <functional>
#include <string>

#include "gpulab/device.hpp"
#include "mandelbrot_reference.hpp"

namespace gpulab::labs {

// `counts`: width x height 32-bit counts, row-major, top row first.
using MandelbrotLaunch = std::function<void(Buffer& counts, int width, int height, const reference::View& view)>;
MandelbrotLaunch bind_mandelbrot(Device& device, const std::string& function);

// The harness's own kernel, one thread per pixel in 16 x 16 blocks: the naive_speedup baseline.
MandelbrotLaunch harness_naive_mandelbrot(Device& device);

}  // namespace gpulab::labs
