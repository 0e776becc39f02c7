// The CPU reference of lab 05-reduction: the exact sum the grader checks a GPU sum against, the
// tolerance a correct float sum of the lab's contract stays within, and the CPU sums a GPU kernel is
// compared with.
#pragma once
#include <array>
#include <cstdint>
#include <span>

namespace gpulab::reference {

// What the lab's inputs are: every element has a magnitude in [1, 2) (one binade), so an element is
// ±(1 + m * 2^-23) with a 23-bit mantissa m. Timed launches see the input with every word XORed by a
// mask of sign and mantissa bits: still one binade. The counts of each mantissa bit, per sign, give
// the exact sum of the input under any such mask in 2 x 23 steps, without a pass over it.
struct SignCounts {
  std::int64_t n = 0;
  std::array<std::int64_t, 23> ones{};  // ones[b]: elements whose mantissa bit b is set
};
struct BinadeCounts {
  SignCounts positive, negative;  // elements in [1, 2), and in (-2, -1]
  std::int64_t n() const { return positive.n + negative.n; }
};
// Throws std::invalid_argument if an element's magnitude lies outside [1, 2).
BinadeCounts count_mantissa_bits(std::span<const float> values);

inline constexpr std::uint32_t kSignAndMantissa = 0x807FFFFFu;

struct ExactSum {
  std::int64_t n = 0;
  double sum = 0;          // exact: n * 2^23 + the mantissas, below 2^53 units of 2^-23, per sign
  double sum_abs = 0;      // the sum of |x_i|
  double sum_squares = 0;  // at least the sum of x_i^2: 2 * sum_abs, as every |x_i| < 2
  // Every element is a multiple of 2^-unit_bits: 23 for arbitrary mantissas, 3 for eighths, 0 for
  // whole numbers.
  int unit_bits = 0;
};
// The exact sum of the counted input with every word XORed by `mask` (sign and mantissa bits only).
ExactSum exact_sum(const BinadeCounts& counts, std::uint32_t mask = 0);

// The contract of a correct sum (the lab's README): float additions in any order, of which
//  - a running sum (one thread's loop) adds at most kMaxSerialElements elements one after another,
//  - partial sums are combined by at most kMaxSerialPartials additions one after another (one
//    atomic addition per block of a grid of at most 4096 blocks) and kMaxPairLevels levels of pairs
//    (trees, in shared memory, in warps, or one launch per level).
// At the lab's sizes every design the lab teaches fits: the tree adds 2 elements serially and 28
// levels of pairs, the fast kernels about 10^3 elements per thread and 1056 (CUDA) or 264 (OpenCL)
// block sums with atomics. So an element passes through at most kMaxDepth roundings.
inline constexpr std::int64_t kMaxSerialElements = std::int64_t{1} << 16;
inline constexpr std::int64_t kMaxSerialPartials = std::int64_t{1} << 12;
inline constexpr std::int64_t kMaxPairLevels = 64;
inline constexpr std::int64_t kMaxDepth = kMaxSerialElements + kMaxSerialPartials + kMaxPairLevels;

// Which error analysis the inputs allow.
enum class Inputs {
  // Any elements (the distributions coarse, fine, ones: all of one sign).
  any,
  // Balanced (the distribution "precision"): each element's sign drawn at random, so a partial sum of
  // K elements is a random walk of size about sqrt(K); the positive elements' low 12 mantissa bits
  // are 0xFFF or 0x001 at random and the negative ones' low 13 bits are 0 (or the other way round,
  // under a sign mask). Adding an element to a running sum below 2^13 then rounds by exactly one
  // unit of 2^-23, up or down at random, or not at all, and only additions of partial sums round by
  // more. (Rounding an element to fewer bits, by contrast, moves every positive one the same way.)
  balanced,
};

// An element of the balanced inputs (the distribution "precision") from 64 random bits: sign at
// random; mantissa bits 13-22 at random, bit 12 clear, and the low 12 bits 0xFFF or 0x001 at random for
// a positive element, 0 for a negative one. Rounded to half's 10 mantissa bits a positive element
// loses 0xFFF or 0x001 units of 2^-23 (2048 on average), truncated to 16 bits 127 or 1, and a negative
// one nothing: an error that grows as n, against a tolerance that grows as sqrt(n).
float balanced_element(std::uint64_t random_bits);

// The distribution "lowbit", for small n (at most kLowbitMaxN): positive elements 1 + 7 random
// fraction bits + one lone bit at 2^-U, U = lowbit_unit_bits(n) = 23 - ceil(log2 n), with zeros
// between (1.0110101 000...0 1). The sum is below 2n <= 2^(24 - U) in units of 2^-U: exact in any
// order (tolerance 0). Every element rounded to p significant bits, 8 <= p <= U, loses its lone bit:
// whether truncated or rounded to nearest (the rest lies below half a unit of p bits; at p = U it is
// a tie, which half-away rounds up and half-even down, every element alike), so the sum is off by
// n * 2^-U, never 0. That covers half (11 bits), bfloat16 (8), and up to 17 bits at n = 64, 20 at n
// = 8, all 23 at n = 1, where the balanced precision inputs cannot tell rounding to nearest at 12 to
// 16 bits from a float sum's own rounding (one unit at random either way; see `balanced`).
inline constexpr std::int64_t kLowbitMaxN = 4096;
int lowbit_unit_bits(std::int64_t n);
float lowbit_element(std::uint64_t random_bits, int unit_bits);

// How far a float sum of the contract may be from the exact sum, where u = 2^-24 and lambda = 9:
// - 0 when every partial sum is a float: all elements are multiples of 2^-unit_bits and
//   sum_abs * 2^unit_bits <= 2^24, so every addition, in any order, is exact;
// - any inputs: lambda * sqrt(d) * u * sum_abs with d = min(n - 1, kMaxDepth), the bound of Higham
//   and Mary (2019) for every summation tree of depth d, which fails with probability below
//   2n * exp(-lambda^2 / 2) < 1e-9 at n = 2^28;
// - balanced inputs: lambda * u * sqrt((D + 1) * (sum_squares + sum^2)), D = kMaxSerialPartials / 2 +
//   kMaxPairLevels: Azuma's inequality over the roundings of partial sums, whose squares add up to
//   at most D * (sum of x_i^2) for levels of pairs and a random walk's bridge (about B / 6 * sum of
//   x_i^2 + B / 3 * sum^2) for B partials added one after another; the roundings of elements into
//   running sums (one unit each, at random) add the 1 in D + 1. Fails with probability below
//   2 * exp(-lambda^2 / 2). At n = 2^28 about 1.5: a five-thousandth of what rounding the inputs to
//   16 mantissa bits costs, a thirty-thousandth of half precision.
double sum_tolerance(const ExactSum& exact, Inputs inputs);
inline constexpr double kToleranceLambda = 9.0;

// The CPU sums a GPU reduction is compared with: in double, on one core and on all cores.
double sum_one_core(std::span<const float> values);
double sum_all_cores(std::span<const float> values);

}  // namespace gpulab::reference
