// Lab 09-mandelbrot (OpenCL kernels), reference solution. Launched by mandelbrot_opencl.cpp.

// Each operation rounded on its own, none fused into an FMA: the counts equal the CPU reference's
// bit for bit (OpenCL C may contract a * b + c by default).
#pragma OPENCL FP_CONTRACT OFF

// --8<-- [start:orbit]
// One pixel's orbit in progress.
typedef struct {
  float x, y, c_re, c_im;
  int n;
} Orbit;

// Pixel (px, py) stands for (x0 + px * dx, y0 + py * dy). Mandelbrot: z = 0, c = the point;
// Julia: z = the point, c = (cx, cy).
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

// One step of z = z^2 + c; false (and no step) once the orbit has escaped or reached max_iter.
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
// --8<-- [end:orbit]

// --8<-- [start:naive]
__kernel void mandelbrot_naive_kernel(__global uint* counts, int width, int height, float x0, float y0, float dx,
                                      float dy, int max_iter, int julia, float cx, float cy) {
  const int px = get_global_id(0), py = get_global_id(1);
  if (px >= width || py >= height) return;
  Orbit o = start_orbit(px, py, x0, y0, dx, dy, julia, cx, cy);
  while (step(&o, max_iter)) {}
  counts[(size_t)py * width + px] = (uint)o.n;
}
// --8<-- [end:naive]

// --8<-- [start:balanced]
// "Balanced" without a vote. The CUDA reference keeps a warp's lanes busy by refilling the done ones
// together, once a warp vote (__ballot_sync) says enough are done. OpenCL has votes only in
// sub-groups (cl_khr_subgroups), which NVIDIA's driver does not offer; counting the done work-items
// on a local counter instead (one barrier a round, a 32-work-item work-group as the team) ran at
// 0.88-1.03x the naive kernel in a benchmark of variants on the H100 (CUDA), and 0.79x as this
// lab's OpenCL reference. So OpenCL keeps one work-item per pixel, as the naive kernel, and makes
// each step cheaper instead (1.10x in that benchmark): STEPS steps run with no branch, and the loop
// tests max_iter and the escape once per STEPS steps. The idle lanes of a warp stay: this kernel
// does not balance, which is why OpenCL's balanced task has no speed bound.
#define STEPS 8

// STEPS steps of the orbit without a branch: the same rounded operations as step(), and the same
// escape test, but a work-item whose orbit escaped goes on computing (on inf and NaN, at no cost to
// the warp) and stops counting. Past max_iter the count runs on: the caller stores min(n, max_iter).
void lean_steps(Orbit* o, int* alive) {
#pragma unroll
  for (int i = 0; i < STEPS; ++i) {
    const float x2 = o->x * o->x, y2 = o->y * o->y;
    *alive = *alive & !(x2 + y2 > 4.0f);  // &, not &&: no branch
    o->n += *alive;
    const float xy = o->x * o->y, two_xy = xy + xy, diff = x2 - y2;
    o->y = two_xy + o->c_im;
    o->x = diff + o->c_re;
  }
}

__kernel void mandelbrot_balanced_kernel(__global uint* counts, int width, int height, float x0, float y0, float dx,
                                         float dy, int max_iter, int julia, float cx, float cy) {
  const int px = get_global_id(0), py = get_global_id(1);
  if (px >= width || py >= height) return;
  Orbit o = start_orbit(px, py, x0, y0, dx, dy, julia, cx, cy);
  int alive = 1;
  while (alive && o.n < max_iter) lean_steps(&o, &alive);
  counts[(size_t)py * width + px] = (uint)min(o.n, max_iter);
}
// --8<-- [end:balanced]
