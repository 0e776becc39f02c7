// The contract's arithmetic: no multiply and add fused, so the counts equal the CPU reference's.
// The harness's harness_naive_mandelbrot kernel (bindings_opencl.cpp builds it); students get it encoded,
// never as this source (grader/contract/kernel_embedding.hpp).
#pragma OPENCL FP_CONTRACT OFF
__kernel void harness_naive_mandelbrot(__global uint* counts, int width, int height, float x0, float y0, float dx,
                                       float dy, int max_iter, int julia, float cx, float cy) {
  const int px = get_global_id(0), py = get_global_id(1);
  if (px >= width || py >= height) return;
  const float re = x0 + (float)px * dx, im = y0 + (float)py * dy;
  float x = julia ? re : 0.0f, y = julia ? im : 0.0f;
  const float c_re = julia ? cx : re, c_im = julia ? cy : im;
  int n = 0;
  while (n < max_iter) {
    const float x2 = x * x, y2 = y * y;
    if (x2 + y2 > 4.0f) break;
    const float xy = x * y;
    y = (xy + xy) + c_im;
    x = (x2 - y2) + c_re;
    ++n;
  }
  counts[(size_t)py * width + px] = (uint)n;
}
