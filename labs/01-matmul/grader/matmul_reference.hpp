// The CPU reference of lab 01-matmul: what the grader checks student results against, and the
// CPU versions a GPU kernel's speed is compared with.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "gpulab/compare.hpp"
#include "gpulab/random.hpp"

namespace gpulab::reference {

// 01-matmul: C = A * B with A m x k, B k x n, row-major. The check: each element accumulated in
// double, and the error bound a float computation of it must meet,
//   |c_ij - exact_ij| <= matmul_error_factor(k) * (|A| |B|)_ij + k * FLT_MIN,
// for any order of the k products and sums, with or without fused multiply-adds. Uses every core.
struct MatmulCheck {
  std::vector<double> expected;
  std::vector<double> bound;
};
// The smaller of two bounds on the relative error of a float inner product of length k (u = 2^-24):
// the worst case gamma_k = k u / (1 - k u), which always holds (Higham, Accuracy and Stability of
// Numerical Algorithms, section 3.5), and Higham and Mary's probabilistic bound
// exp(lambda sqrt(k) u + k u^2 / (1 - u)) - 1 with lambda = 10 (SIAM J. Sci. Comput. 41(5), 2019,
// theorem 3.1), which holds with probability at least 1 - 2k exp(-50) when rounding errors are
// independent, as they are for random inputs. Beyond k = 100 the second is the tighter: it grows
// like sqrt(k), so a dropped term or inputs rounded to half precision exceed it at every k we test.
double matmul_error_factor(std::size_t k);
MatmulCheck matmul_check(std::span<const float> a, std::span<const float> b, std::size_t m, std::size_t n,
                         std::size_t k);

// The inputs of a matmul case (its `inputs` parameter): "uniform" in [-1, 1), or "no-cancel":
// positive, in [0.5, 1), random in the top 7 bits of the mantissa and the alternating pattern
// kNoCancelLowBits in the low 16. Rounded to any shorter format (bfloat16, half, TF32) every such
// value moves the same way by about a third of that format's unit, so the errors of a kernel that
// rounds its inputs add up over k instead of cancelling; and positive products leave a dropped term
// nowhere to hide. Or "scaled": uniform in [-1, 1) times a power of two from 2^-32 to 2^32 drawn
// for every row of A and every column of B (`rows` x `cols`, row-major; `of` says which), so the
// elements of C range from about 2^-64 to 2^64 times their uniform size, each against a bound of its
// own size: a kernel that only holds for values near 1 (clamped, saturated or scaled inputs, a fixed
// epsilon) fails. Anything else throws std::invalid_argument naming the three kinds.
inline constexpr std::uint32_t kNoCancelLowBits = 0x5555;
inline constexpr int kScaledExponent = 32;
enum class MatmulOperand { a, b };
std::vector<float> matmul_inputs(Rng& rng, std::size_t rows, std::size_t cols, std::string_view inputs,
                                 MatmulOperand of);
// The same for "uniform" and "no-cancel", which do not depend on the shape ("scaled" throws).
std::vector<float> matmul_inputs(Rng& rng, std::size_t count, std::string_view inputs);

// The same check for the elements of C at rows[r], cols[q] only: expected and bound of element
// (r, q) at index r * cols.size() + q, equal to matmul_check's for that element. O(|rows| |cols| k).
MatmulCheck matmul_check_at(std::span<const float> a, std::span<const float> b, std::size_t m, std::size_t n,
                            std::size_t k, std::span<const std::size_t> rows, std::span<const std::size_t> cols);

// The rows (or columns) of C, of `size`, that a sampled check looks at, in increasing order:
// - with `boundaries`, the first and the last line of every block of kMatmulBoundaryTile lines (so
//   of every power-of-two tile up to it, 8 to 128, and of every block of a multiple of it: the fast
//   reference's 128 x 256), and every line of the last block when it is partial (the partial tiles of
//   every size end there); otherwise kMatmulQuickBoundaries of those lines at random;
// - always the first line and the last, and the first line of the last tile of every power of two
//   from 8 to 256 lines, where that tile is partial;
// - and `count` distinct lines more at random. Every line when `size` is at most the lines chosen.
inline constexpr std::size_t kMatmulBoundaryTile = 128, kMatmulQuickBoundaries = 16;
std::vector<std::size_t> matmul_sample_lines(Rng& rng, std::size_t size, std::size_t count, bool boundaries);

// Checks a computed C (m x n, row-major) against A B in O(mn + mk + kn), for cases where the full
// reference (O(mnk)) would dominate the run. Two parts:
// - projections: C x against A (B x) for kMatmulProjections random vectors x of +-1 (rows of C),
//   and y^T C against (y^T A) B likewise (columns), with per-row and per-column tolerances derived
//   from the element bound of matmul_check (see matmul.cpp). They flag rows and columns;
// - exact elements, as matmul_check computes them: the full rows and columns with the largest
//   residuals (up to kMatmulExactLines each), and a grid: the rows and the columns of
//   matmul_sample_lines with every boundary and kMatmulGridSide lines at random (at 4096^3 about
//   250 x 250 elements, 0.1 s on 16 cores).
// Only an exact element beyond its bound counts as wrong, so a C that meets matmul_check never
// fails. The comparison counts the elements checked exactly; its wrong rows and columns include
// the flagged ones. `rng` chooses the vectors and the grid.
inline constexpr std::size_t kMatmulProjections = 8, kMatmulExactLines = 8, kMatmulGridSide = 64;
Comparison matmul_check_large(std::span<const float> a, std::span<const float> b, std::span<const float> c,
                              std::size_t m, std::size_t n, std::size_t k, Rng& rng);

// The CPU versions a GPU kernel is compared with: the plain i-k-j triple loop on one core, as in
// the course, and a cache-blocked version on every core.
void matmul_one_core(std::span<const float> a, std::span<const float> b, std::span<float> c, std::size_t m,
                     std::size_t n, std::size_t k);
void matmul_all_cores(std::span<const float> a, std::span<const float> b, std::span<float> c, std::size_t m,
                      std::size_t n, std::size_t k);

}  // namespace gpulab::reference
