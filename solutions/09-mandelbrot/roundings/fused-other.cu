// The contract's orbit with the step's multiply-adds fused in the other operand order, as nvcc may
// also form them: x2 + y2 as fma(y, y, x2), 2 * x * y + c_im as fma(x + x, y, c_im), x2 - y2 as
// fma(-y, y, x2). The check must accept its counts.
// The window and the fractal, as the launch functions receive them.
struct Window {
  float x0, y0, dx, dy;  // pixel (px, py) stands for (x0 + px * dx, y0 + py * dy)
  int max_iter;
  int julia;  // 0: Mandelbrot (z = 0, c = the point); 1: Julia (z = the point, c = (cx, cy))
  float cx, cy;
};

// One pixel's orbit in progress.
struct Orbit {
  float x, y, c_re, c_im;
  int n;
};

__device__ Orbit start_orbit(const Window& w, int px, int py) {
  const float re = __fadd_rn(w.x0, __fmul_rn(static_cast<float>(px), w.dx));
  const float im = __fadd_rn(w.y0, __fmul_rn(static_cast<float>(py), w.dy));
  if (w.julia) return {re, im, w.cx, w.cy, 0};
  return {0.0f, 0.0f, re, im, 0};
}

__device__ bool step(Orbit& o, int max_iter) {
  if (o.n >= max_iter) return false;
  const float x = o.x, y = o.y, x2 = __fmul_rn(x, x);
  if (__fmaf_rn(y, y, x2) > 4.0f) return false;
  o.y = __fmaf_rn(__fadd_rn(x, x), y, o.c_im);
  o.x = __fadd_rn(__fmaf_rn(-y, y, x2), o.c_re);
  ++o.n;
  return true;
}
