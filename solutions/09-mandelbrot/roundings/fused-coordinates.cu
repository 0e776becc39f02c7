// The contract's orbit, started from the pixel's point with each coordinate computed as one fma
// (px * dx + x0 rounded once), as nvcc contracts x0 + px * dx. The check must accept its counts.
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
  const float re = __fmaf_rn(static_cast<float>(px), w.dx, w.x0);
  const float im = __fmaf_rn(static_cast<float>(py), w.dy, w.y0);
  if (w.julia) return {re, im, w.cx, w.cy, 0};
  return {0.0f, 0.0f, re, im, 0};
}

__device__ bool step(Orbit& o, int max_iter) {
  if (o.n >= max_iter) return false;
  const float x2 = __fmul_rn(o.x, o.x), y2 = __fmul_rn(o.y, o.y);
  if (__fadd_rn(x2, y2) > 4.0f) return false;
  const float xy = __fmul_rn(o.x, o.y);
  o.y = __fadd_rn(__fadd_rn(xy, xy), o.c_im);
  o.x = __fadd_rn(__fsub_rn(x2, y2), o.c_re);
  ++o.n;
  return true;
}
