// The CUDA calibration baseline of 09-mandelbrot, compiled by nvcc on its own: the harness's naive
// kernel, one thread per pixel, exact as the contract (labs/09-mandelbrot/README.md) defines it.
#pragma once

namespace gpulab::labs::mandelbrot_cuda {

void launch_naive(unsigned* counts, int width, int height, float x0, float y0, float dx, float dy, int max_iter,
                  int julia, float cx, float cy);

}  // namespace gpulab::labs::mandelbrot_cuda
