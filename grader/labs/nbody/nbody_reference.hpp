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

// The relative error allowed in each component: kTermError * u for the terms (u = 2^-24), and the
// error of a float sum of n terms, the smaller of Higham's worst case gamma_n = n u / (1 - n u) and
// Higham and Mary's probabilistic bound exp(lambda sqrt(n) u + n u^2 / (1 - u)) - 1 with lambda = 10
// (holds with probability at least 1 - 2n exp(-50)), each relative to sum_j |term_j| of that
// component. A term in float: r_j - r_i (u), the squared distance plus softening2 (3 u more, 4 u
// for the rounded differences), a reciprocal square root within 2 ulps (4 u) of that (2 u of it
// inherited), cubed (3 times 6 u, plus 2 u), times m_j (u) and times r_j - r_i (2 u): 27 u at first
// order; kTermError = 64 leaves room for pow, a division or a square root done another way.
inline constexpr double kTermError = 64;
double nbody_error_factor(std::size_t n);

// The acceleration of `body` in double, and each component's bound:
//   |a_float - a| <= nbody_error_factor(n) * sum_j |term_j| + n * FLT_MIN.
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

// `count` distinct bodies of n chosen at random, in increasing order; every body when n <= count.
std::vector<std::size_t> nbody_sample(Rng& rng, std::size_t n, std::size_t count);

// The bodies of a case (its `distribution` parameter), masses uniform in [0.5, 1):
// - "cube": positions uniform in [-1, 1)^3;
// - "plummer": a Plummer sphere of scale radius 0.1 (a dense core and a sparse halo, cut off at
//   radius 2), so near neighbours are much closer than in the cube and their terms dominate.
// Anything else throws std::invalid_argument naming the two kinds.
std::vector<float> nbody_inputs(Rng& rng, std::size_t n, std::string_view distribution);

// The CPU versions a GPU kernel is compared with: the plain double loop in float on one core, as in
// the course, and the same on every core.
void nbody_one_core(std::span<const float> bodies, std::span<float> accel, float softening2);
void nbody_all_cores(std::span<const float> bodies, std::span<float> accel, float softening2);

}  // namespace gpulab::reference
