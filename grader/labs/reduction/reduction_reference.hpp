// The CPU reference of lab 05-reduction: the exact sum the grader checks a GPU sum against, the
// tolerance of a float sum in tree or grid-stride order, and the CPU sums a GPU kernel is compared with.
#pragma once
#include <array>
#include <cstdint>
#include <span>

namespace gpulab::reference {

// What the lab's inputs are: every element in [1, 2) (one binade, positive), so an element is
// 1 + m * 2^-23 with a 23-bit mantissa m. Timed launches see the input with every word XORed by a
// mask of sign and mantissa bits: still one binade, all of one sign. The counts of each mantissa
// bit give the exact sum of the input under any such mask in 23 steps, without a pass over it.
struct BinadeCounts {
  std::int64_t n = 0;
  std::array<std::int64_t, 23> ones{};  // ones[b]: elements whose mantissa bit b is set
};
// Throws std::invalid_argument if an element lies outside [1, 2).
BinadeCounts count_mantissa_bits(std::span<const float> values);

inline constexpr std::uint32_t kSignAndMantissa = 0x807FFFFFu;

struct ExactSum {
  double sum = 0;      // exact: n * 2^23 + sum of mantissas < 2^53 units of 2^-23
  double sum_abs = 0;  // the sum of |x_i|, which is |sum| for values of one sign
  // Every element is a multiple of 2^-unit_bits: 23 for arbitrary mantissas, 3 for eighths, 0 for
  // whole numbers.
  int unit_bits = 0;
};
// The exact sum of the counted input with every word XORed by `mask` (sign and mantissa bits only).
ExactSum exact_sum(const BinadeCounts& counts, std::uint32_t mask = 0);

// How far a float sum of n numbers may be from the exact sum, whatever the order of the additions.
// - 0 when every partial sum is a float: all elements are multiples of 2^-unit_bits and
//   sum_abs * 2^unit_bits <= 2^24, so every addition, in any order, is exact.
// - else lambda * sqrt(n - 1) * u * sum_abs with u = 2^-24 and lambda = 9: the probabilistic bound
//   of Higham and Mary (2019) for any summation order (serial, tree, atomics), which fails with
//   probability below 2n * exp(-lambda^2 / 2) < 1e-9 at n = 2^28. The worst case (n - 1) * u *
//   sum_abs would exceed the sum itself for n > 2^24; a tree of depth d has d * u * sum_abs.
double sum_tolerance(std::int64_t n, const ExactSum& exact);
inline constexpr double kToleranceLambda = 9.0;

// The CPU sums a GPU reduction is compared with: in double, on one core and on all cores.
double sum_one_core(std::span<const float> values);
double sum_all_cores(std::span<const float> values);

}  // namespace gpulab::reference
