// The contract's orbit, started from the pixel's point with each coordinate computed as one fma
// (px * dx + x0 rounded once), as a contracting compiler computes x0 + px * dx. The check must
// accept its counts.
typedef struct {
  float x, y, c_re, c_im;
  int n;
} Orbit;

Orbit start_orbit(int px, int py, float x0, float y0, float dx, float dy, int julia, float cx, float cy) {
  const float re = fma((float)px, dx, x0), im = fma((float)py, dy, y0);
  Orbit o;
  o.x = julia ? re : 0.0f;
  o.y = julia ? im : 0.0f;
  o.c_re = julia ? cx : re;
  o.c_im = julia ? cy : im;
  o.n = 0;
  return o;
}

bool step(Orbit* o, int max_iter) {
  if (o->n >= max_iter) return false;
  const float x2 = o->x * o->x, y2 = o->y * o->y;
  if (x2 + y2 > 4.0f) return false;
  const float xy = o->x * o->y;
  o->y = (xy + xy) + o->c_im;
  o->x = (x2 - y2) + o->c_re;
  o->n += 1;
  return true;
}
