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
// A persistent grid: work-item t takes pixels t, t + T, t + 2T, ... and starts its next pixel in the
// very step its orbit escapes, so no lane of a warp idles while another finishes a costly pixel. A
// lane that refills holds up its warp: the next column and row follow from the stride's, computed
// once, with no division per pixel.
__kernel void mandelbrot_balanced_kernel(__global uint* counts, int width, int height, float x0, float y0, float dx,
                                         float dy, int max_iter, int julia, float cx, float cy) {
  const int items = get_global_size(0), first = get_global_id(0);
  const int stride_x = items % width, stride_y = items / width;
  int px = first % width, py = first / width;
  if (py >= height) return;
  Orbit o = start_orbit(px, py, x0, y0, dx, dy, julia, cx, cy);
  for (;;) {
    if (step(&o, max_iter)) continue;
    counts[(size_t)py * width + px] = (uint)o.n;
    px += stride_x;
    py += stride_y;
    if (px >= width) {
      px -= width;
      ++py;
    }
    if (py >= height) break;
    o = start_orbit(px, py, x0, y0, dx, dy, julia, cx, cy);
  }
}
// --8<-- [end:balanced]
