// The contract's orbit with the step's multiply-adds fused as a direct transcription reads them, as
// nvcc contracts `x * x + y * y` and the like by default: x2 + y2 as fma(x, x, y2), xy + xy as
// fma(x, y, xy), x2 - y2 as fma(x, x, -y2). The check must accept its counts (README.md).
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
  const float x = o.x, y = o.y, y2 = __fmul_rn(y, y);
  if (__fmaf_rn(x, x, y2) > 4.0f) return false;
  const float xy = __fmul_rn(x, y);
  o.y = __fadd_rn(__fmaf_rn(x, y, xy), o.c_im);
  o.x = __fadd_rn(__fmaf_rn(x, x, -y2), o.c_re);
  ++o.n;
  return true;
}
