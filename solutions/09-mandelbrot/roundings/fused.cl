// The contract's orbit with the step's multiply-adds fused as a direct transcription reads them, as
// a compiler that contracts a * b + c forms them: x2 + y2 as fma(x, x, y2), xy + xy as fma(x, y, xy),
// x2 - y2 as fma(x, x, -y2). The check must accept its counts (README.md, "What the check accepts").
typedef struct {
  float x, y, c_re, c_im;
  int n;
} Orbit;

Orbit start_orbit(int px, int py, float x0, float y0, float dx, float dy, int julia, float cx, float cy) {
  const float re = x0 + (float)px * dx, im = y0 + (float)py * dy;
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
  const float x = o->x, y = o->y, y2 = y * y;
  if (fma(x, x, y2) > 4.0f) return false;
  const float xy = x * y;
  o->y = fma(x, y, xy) + o->c_im;
  o->x = fma(x, x, -y2) + o->c_re;
  o->n += 1;
  return true;
}
