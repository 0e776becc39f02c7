// The contract's orbit in double precision from the pixel's float point. The check must accept its
// counts.
// The window and the fractal, as the launch functions receive them.
struct Window {
  float x0, y0, dx, dy;  // pixel (px, py) stands for (x0 + px * dx, y0 + py * dy)
  int max_iter;
  int julia;  // 0: Mandelbrot (z = 0, c = the point); 1: Julia (z = the point, c = (cx, cy))
  float cx, cy;
};

// One pixel's orbit in progress.
struct Orbit {
  double x, y, c_re, c_im;
  int n;
};

__device__ Orbit start_orbit(const Window& w, int px, int py) {
  const float re = __fadd_rn(w.x0, __fmul_rn(static_cast<float>(px), w.dx));
  const float im = __fadd_rn(w.y0, __fmul_rn(static_cast<float>(py), w.dy));
  if (w.julia) return {re, im, w.cx, w.cy, 0};
  return {0.0, 0.0, re, im, 0};
}

__device__ bool step(Orbit& o, int max_iter) {
  if (o.n >= max_iter) return false;
  const double x2 = __dmul_rn(o.x, o.x), y2 = __dmul_rn(o.y, o.y);
  if (__dadd_rn(x2, y2) > 4.0) return false;
  const double xy = __dmul_rn(o.x, o.y);
  o.y = __dadd_rn(__dadd_rn(xy, xy), o.c_im);
  o.x = __dadd_rn(__dsub_rn(x2, y2), o.c_re);
  ++o.n;
  return true;
}
