// The contract's orbit with the step's multiply-adds fused in the other operand order, as a
// compiler may also form them: x2 + y2 as fma(y, y, x2), 2 * x * y + c_im as fma(x + x, y, c_im),
// x2 - y2 as fma(-y, y, x2). The check must accept its counts.
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
  const float x = o->x, y = o->y, x2 = x * x;
  if (fma(y, y, x2) > 4.0f) return false;
  o->y = fma(x + x, y, o->c_im);
  o->x = fma(-y, y, x2) + o->c_re;
  o->n += 1;
  return true;
}
