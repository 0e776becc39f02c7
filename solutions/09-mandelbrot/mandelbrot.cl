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
// Balanced: each work-group is a team of 32 work-items (one warp on NVIDIA) sharing one list of
// pixels, and a work-item whose orbit is done takes the list's next pixel. The naive kernel's warp
// runs as long as its slowest pixel while the lanes that escaped idle (57% busy on the timing
// spiral); refilling lanes keep it busy, but a refill costs the whole warp (a store, a division, a
// new orbit), so two things keep it cheap:
// - the team looks at its work-items only every STEPS steps, which run with no branch at all;
// - it refills only once REFILL_AT work-items are done, all of them in one go.
// CUDA counts the done lanes with one warp vote (__ballot_sync); OpenCL 1.2 has no vote, so the team
// counts them on a local counter, with one barrier a round (cheap in a one-warp work-group).
#define TEAM 32
#define STEPS 8
#define REFILL_AT 8
#define CHUNK 32  // a team's list: chunks of 32 neighbouring pixels, spread over the image

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

// The pixel at `position` in the list of team `team` of `teams` (chunks team, team + teams, ...), or
// -1 past the image's end. Chunks interleaved over the image give every team a similar mix of cheap
// and costly pixels, so the teams finish together.
long pixel_of(long team, long teams, long position, long pixels) {
  const long pixel = (team + position / CHUNK * teams) * CHUNK + position % CHUNK;
  return pixel < pixels ? pixel : -1;
}

__kernel __attribute__((reqd_work_group_size(TEAM, 1, 1))) void mandelbrot_balanced_kernel(
    __global uint* counts, int width, int height, float x0, float y0, float dx, float dy, int max_iter, int julia,
    float cx, float cy) {
  // The done work-items of round r count themselves on done_votes[r % 3]. Three counters need one
  // barrier a round: while round r counts on its own, work-item 0 zeroes the next round's, which
  // nobody has read since round r - 2.
  __local int done_votes[3];
  const long team = get_group_id(0), teams = get_num_groups(0), pixels = (long)width * height;
  long taken = 0;   // pixels the team has taken from its list: the same in all its work-items
  long pixel = -1;  // this work-item's pixel, -1 when none
  int alive = 0;    // the orbit has not escaped: a work-item is done when not alive or at max_iter
  Orbit o = start_orbit(0, 0, x0, y0, dx, dy, julia, cx, cy);
  if (get_local_id(0) == 0) done_votes[0] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int round = 0;; round = round == 2 ? 0 : round + 1) {
    const bool done = !alive || o.n >= max_iter;
    const int rank = done ? atomic_inc(&done_votes[round]) : 0;  // the done ones, in some order
    if (get_local_id(0) == 0) done_votes[round == 2 ? 0 : round + 1] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    const int n_done = done_votes[round];  // the same in every work-item: the team branches as one
    if (n_done >= REFILL_AT) {
      if (done && pixel >= 0) counts[pixel] = (uint)min(o.n, max_iter);
      if (n_done == TEAM && pixel_of(team, teams, taken, pixels) < 0) return;  // all done, list empty
      if (done) {
        pixel = pixel_of(team, teams, taken + rank, pixels);  // the done ones take the next n_done pixels
        alive = pixel >= 0;
        if (alive) o = start_orbit((uint)pixel % width, (uint)pixel / width, x0, y0, dx, dy, julia, cx, cy);
      }
      taken += n_done;
    }
    lean_steps(&o, &alive);
  }
}
// --8<-- [end:balanced]
