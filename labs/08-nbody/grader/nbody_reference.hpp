// The CPU reference of lab 08-nbody: the accelerations the grader checks a GPU result against, with
// the error bound a float computation must meet, the lab's inputs, and the CPU versions a GPU
// kernel's speed is compared with.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "gpulab/compare.hpp"
#include "gpulab/random.hpp"

namespace gpulab::reference {

// Bodies are float4 words (x, y, z, mass), 4 floats per body; accelerations likewise (ax, ay, az, 0).
// The acceleration of body i is a_i = sum over every j (j = i included) of
//   m_j (r_j - r_i) / (|r_j - r_i|^2 + softening2)^(3/2),
// with G = 1. The term j = i is exactly 0 (r_j - r_i = 0, and softening2 > 0 keeps the denominator
// positive), so a kernel needs no test for it.
inline constexpr std::size_t kBodyFloats = 4;
inline constexpr double kFlopsPerInteraction = 20;  // the usual count for one body-body term

// The error bound of each component of a float acceleration, from the exact terms t_j of that
// component (j = 0..n-1) and the contract's algorithm: every term in float (within kTermError u of
// its exact value, u = 2^-24), then the n terms summed in float, in an order that does not depend on
// where the bodies are (index order, tiles, blocks, a tree over them: bodies are drawn independently,
// so any such order meets them in random order). Three parts:
// - the terms. A term in float: r_j - r_i (u), the squared distance plus softening2 (3 u more, 4 u
//   for the rounded differences), a reciprocal square root within 2 ulps (4 u, CUDA's rsqrtf and
//   OpenCL's rsqrt) inheriting half of that, cubed (3 times 6 u, plus 2 u), times m_j (u) and times
//   r_j - r_i (2 u): 27 u at first order; kTermError = 64 leaves room for pow, a division or a
//   square root done another way (OpenCL's 1 / sqrt: 3 ulps and 2.5 ulps, 33 u once cubed). What
//   the error of a term owes to its distance alone (a reciprocal square root always 2 ulps high, or
//   high for near bodies and low for far ones) is shared by the terms of one shell of distance, so
//   it moves the sum by at most kTermError u sum over shells |sum of the shell's terms| (`shells`:
//   a shell is a quarter of a binade of the squared distance); what varies from term to term (the
//   roundings, an rsqrt's error as a function of the last bits of its argument) adds up like the
//   sum's own rounding errors: kLambda kTermError u sqrt(sum t_j^2) (Hoeffding). Never more than
//   kTermError u sum |t_j|, which holds for any errors.
// - the sum. Its error is sum_k delta_k S_k over the partial sums S_k, |delta_k| <= u. Higham and
//   Mary (SIAM J. Sci. Comput. 41(5), 2019, theorem 3.1, lambda = 10) bound it by
//   lambda u sqrt(sum_k S_k^2), failing with probability below 2 exp(-50); over bodies in random
//   order, S_k is k a / n plus a random walk of the terms, so sum_k S_k^2 is about n a^2 / 3 + n
//   sum t_j^2 / 6, and `partial sums` below allows twice and four times that: (2n / 3)(a^2 + sum t_j^2).
//   Never more than Higham's worst case gamma_n sum |t_j| (any order, any data).
// - second order (n u^2 sum |t_j|) and underflow (n FLT_MIN).
// Relative to |a| and sqrt(sum t_j^2), not to sum |t_j|: the bound of the old rule,
// (64 u + 10 sqrt(n) u) sum |t_j|, let a reciprocal square root of 12 bits pass at 2^18 bodies, whose
// sum |t_j| is hundreds of times sqrt(sum t_j^2) and several times |a| (see the README's "Precision").
inline constexpr double kTermError = 64;
inline constexpr double kLambda = 10;
struct TermSums {
  double sum = 0;        // a = sum t_j (exact, in double)
  double magnitude = 0;  // sum |t_j|
  double squares = 0;    // sum t_j^2
  double shells = 0;     // sum over shells of |the shell's sum|
};
double nbody_bound(const TermSums& terms, std::size_t n);

// The acceleration of `body` in double, and each component's bound (nbody_bound).
struct BodyExpected {
  double accel[3];
  double bound[3];
};
BodyExpected nbody_expected(std::span<const float> bodies, std::size_t body, float softening2);

// Checks a computed `accel` (4n floats) against `bodies`: every word written and finite, every w
// component exactly 0, and the acceleration of each body in `sample` within its bound (see
// nbody_expected). The comparison is 2-D: a row per body, a column per component. Uses every core.
Comparison nbody_check(std::span<const float> bodies, float softening2, std::span<const float> accel,
                       std::span<const std::size_t> sample);

// The bodies a check compares, in increasing order: every body when n <= count; otherwise
// - when `boundaries` is true, the first and the last body of every tile of kBoundaryTile bodies
//   (so of every power-of-two tile up to it, and of every block of a multiple of it: the lab's
//   tiles of 32 to 512 bodies, the fast kernel's blocks of 1,024), and of each of them the first
//   body of the last, partial tile; otherwise kQuickBoundaries of those at random;
// - always the last body and the first;
// - and `count` distinct bodies more, chosen at random.
inline constexpr std::size_t kBoundaryTile = 256, kQuickBoundaries = 16;
std::vector<std::size_t> nbody_sample(Rng& rng, std::size_t n, std::size_t count, bool boundaries);

// The bodies of a case (its `distribution` parameter), masses uniform in [0.5, 1) but for one body in
// kMasslessOneIn at random, of mass 0: a test particle, pulled but pulling nothing (the formula holds
// for any mass; a(i) does not depend on m_i, so a kernel that computes a force and divides it by the
// body's own mass gets 0 / 0 there):
// - "cube": positions uniform in [-1, 1)^3;
// - "plummer": a Plummer sphere of scale radius 0.1 (a dense core and a sparse halo, cut off at
//   radius 2), so near neighbours are much closer than in the cube and their terms dominate;
// - "wide": the cube, but one body in kWideOneIn at random far out, in a random direction at a
//   distance from the centre log-uniform in [2^kWideLog2Near, 2^kWideLog2Far) = [4, 4096): such a
//   body is pulled only by bodies farther than 3 from it, and the cube's bodies feel them as a pull of
//   some 10^-4 of their own (well above the bound), so a kernel that leaves out the pairs beyond any
//   cutoff below about 4,000 is wrong there;
// - "signed": the cube with masses of either sign, +-[0.5, 1) (the kernel computes electrostatics
//   with charges as well). The pull of the whole cloud cancels, so each acceleration is a random
//   walk of its terms, of size sqrt(sum t_j^2) instead of n: the bound is as small as the sum's own
//   rounding allows, and a reciprocal square root of 12 bits fails even at 2^18 bodies.
// Anything else throws std::invalid_argument naming the kinds.
inline constexpr std::uint64_t kMasslessOneIn = 16, kWideOneIn = 4;
inline constexpr float kWideLog2Near = 2, kWideLog2Far = 12;
std::vector<float> nbody_inputs(Rng& rng, std::size_t n, std::string_view distribution);

// The CPU versions a GPU kernel is compared with: the plain double loop in float on one core, as in
// the course, and the same on every core.
void nbody_one_core(std::span<const float> bodies, std::span<float> accel, float softening2);
void nbody_all_cores(std::span<const float> bodies, std::span<float> accel, float softening2);

}  // namespace gpulab::reference
