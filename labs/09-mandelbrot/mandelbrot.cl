// Lab 09-mandelbrot (OpenCL kernels): the escape count of every pixel. Launched by
// mandelbrot_opencl.cpp. README.md defines the count exactly.

// Each operation rounded on its own, none fused into an FMA (OpenCL C may contract a * b + c into
// one rounding by default, which changes a few counts at the boundary): keep this line.
#pragma OPENCL FP_CONTRACT OFF

// One pixel's orbit in progress: z = (x, y), c = (c_re, c_im), n steps done.
typedef struct {
  float x, y, c_re, c_im;
  int n;
} Orbit;

Orbit start_orbit(int px, int py, float x0, float y0, float dx, float dy, int julia, float cx, float cy) {
  Orbit o = {0.0f, 0.0f, 0.0f, 0.0f, 0};
  // TODO 1 (the contract): the pixel's point re = x0 + px * dx, im = y0 + py * dy (px, py as
  //   float). Mandelbrot (julia == 0): z = 0, c = (re, im); Julia: z = (re, im), c = (cx, cy).
  return o;
}

bool step(Orbit* o, int max_iter) {
  // TODO 2 (the iteration): return false, changing nothing, when n >= max_iter or when
  //   x2 + y2 > 4 (x2 = x * x, y2 = y * y). Else one step, in this order: xy = x * y;
  //   y = (xy + xy) + c_im; x = (x2 - y2) + c_re; n += 1; return true.
  return false;
}

__kernel void mandelbrot_naive_kernel(__global uint* counts, int width, int height, float x0, float y0, float dx,
                                      float dy, int max_iter, int julia, float cx, float cy) {
  // TODO 3 (one work-item per pixel): px = get_global_id(0), py = get_global_id(1); work-items
  //   outside the image return. Start the orbit, step until step() says no more, store n at
  //   counts[(size_t)py * width + px].
}

// Bonus (balanced): mandelbrot_balanced_kernel, with the naive kernel's arguments (README,
// "balanced"). A plan that passes the 1.25x bound: one work-item per pixel, as in TODO 3, with
// cheaper steps. Start the orbit and keep a copy, `saved`. Unless |c| > 1.99 (c_re * c_re +
// c_im * c_im > 3.96: the guard), run rounds while n <= max_iter - 16: 16 steps of step()'s
// operations with no test and no count, then one test that also counts inf and NaN as escaped,
// !(x2 + y2 <= 4). No escape: n += 16, saved = the orbit. An escape: leave the rounds. Then finish
// from `saved` with step() until it says no more (at most 16 steps, or a wide c's whole orbit) and
// store saved.n. Designs that balance (warps refilling their lanes together from a work queue)
// measured 1.18-1.26x the naive kernel on an H100: their refills cost about what the idle lanes waste.
