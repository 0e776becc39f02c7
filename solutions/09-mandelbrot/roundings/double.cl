// The contract's orbit in double precision from the pixel's float point. The check must accept its
// counts.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef struct {
  double x, y, c_re, c_im;
  int n;
} Orbit;

Orbit start_orbit(int px, int py, float x0, float y0, float dx, float dy, int julia, float cx, float cy) {
  const float re = x0 + (float)px * dx, im = y0 + (float)py * dy;
  Orbit o;
  o.x = julia ? re : 0.0;
  o.y = julia ? im : 0.0;
  o.c_re = julia ? cx : re;
  o.c_im = julia ? cy : im;
  o.n = 0;
  return o;
}

bool step(Orbit* o, int max_iter) {
  if (o->n >= max_iter) return false;
  const double x2 = o->x * o->x, y2 = o->y * o->y;
  if (x2 + y2 > 4.0) return false;
  const double xy = o->x * o->y;
  o->y = (xy + xy) + o->c_im;
  o->x = (x2 - y2) + o->c_re;
  o->n += 1;
  return true;
}
