#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <stdexcept>
#include <string>

#include "gpulab/parallel.hpp"
#include "gpulab/reference.hpp"

namespace gpulab::reference {

namespace {

void check_sizes(std::span<const float> a, std::span<const float> b, std::size_t m, std::size_t n, std::size_t k) {
  if (a.size() != m * k || b.size() != k * n) throw std::invalid_argument("matmul: A or B does not match m, n, k");
}

// Runs body(first_row, end_row) on every core, over blocks of rows.
template <typename Body>
void for_row_blocks(std::size_t rows, std::size_t block, Body body) {
  parallel_for((rows + block - 1) / block, [&](std::size_t b) { body(b * block, std::min(rows, (b + 1) * block)); });
}

}  // namespace

std::vector<float> matmul_inputs(Rng& rng, std::size_t count, std::string_view inputs) {
  std::vector<float> out(count);
  if (inputs == "uniform") {
    for (float& x : out) x = rng.uniform(-1.0f, 1.0f);
  } else if (inputs == "no-cancel") {
    // One pattern for A and B alike: with opposite ones their rounding errors would cancel in a*b.
    for (float& x : out)  // exponent 126: [0.5, 1)
      x = std::bit_cast<float>((126u << 23) | (static_cast<std::uint32_t>(rng.integer(0, 127)) << 16) | kNoCancelLowBits);
  } else {
    throw std::invalid_argument("unknown matmul inputs '" + std::string(inputs) +
                                "': use \"uniform\" or \"no-cancel\" in the case");
  }
  return out;
}

double matmul_error_factor(std::size_t k) {
  const double u = std::ldexp(1.0, -24), kd = static_cast<double>(k);
  const double worst_case = kd * u / (1 - kd * u);
  const double lambda = 10;  // fails a correct element with probability below 2 k exp(-50) = k 4e-22
  const double probabilistic = std::expm1(lambda * std::sqrt(kd) * u + kd * u * u / (1 - u));
  return std::min(worst_case, probabilistic);
}

MatmulCheck matmul_check(std::span<const float> a, std::span<const float> b, std::size_t m, std::size_t n,
                         std::size_t k) {
  check_sizes(a, b, m, n, k);
  MatmulCheck out{std::vector<double>(m * n), std::vector<double>(m * n)};
  const double gamma = matmul_error_factor(k);
  // Blocks of 16 rows share each streamed row of B; per row, accumulators of n doubles stay in cache.
  for_row_blocks(m, 16, [&](std::size_t r0, std::size_t r1) {
    for (std::size_t i = r0; i < r1; ++i) {
      double* exact = &out.expected[i * n];
      double* magnitude = &out.bound[i * n];
      for (std::size_t p = 0; p < k; ++p) {
        const double x = a[i * k + p], ax = std::fabs(x);
        const float* row = &b[p * n];
        for (std::size_t j = 0; j < n; ++j) {
          exact[j] += x * row[j];
          magnitude[j] += ax * std::fabs(row[j]);
        }
      }
      for (std::size_t j = 0; j < n; ++j) magnitude[j] = gamma * magnitude[j] + k * static_cast<double>(FLT_MIN);
    }
  });
  return out;
}

void matmul_one_core(std::span<const float> a, std::span<const float> b, std::span<float> c, std::size_t m,
                     std::size_t n, std::size_t k) {
  check_sizes(a, b, m, n, k);
  std::fill(c.begin(), c.end(), 0.0f);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t p = 0; p < k; ++p) {
      const float x = a[i * k + p];
      for (std::size_t j = 0; j < n; ++j) c[i * n + j] += x * b[p * n + j];
    }
}

void matmul_all_cores(std::span<const float> a, std::span<const float> b, std::span<float> c, std::size_t m,
                      std::size_t n, std::size_t k) {
  check_sizes(a, b, m, n, k);
  std::fill(c.begin(), c.end(), 0.0f);
  constexpr std::size_t kb = 256, nb = 512;  // a 256 x 512 block of B (512 KiB) stays in L2
  for_row_blocks(m, 32, [&](std::size_t r0, std::size_t r1) {
    for (std::size_t p0 = 0; p0 < k; p0 += kb)
      for (std::size_t j0 = 0; j0 < n; j0 += nb)
        for (std::size_t i = r0; i < r1; ++i)
          for (std::size_t p = p0; p < std::min(k, p0 + kb); ++p) {
            const float x = a[i * k + p];
            const std::size_t j1 = std::min(n, j0 + nb);
            for (std::size_t j = j0; j < j1; ++j) c[i * n + j] += x * b[p * n + j];
          }
  });
}

}  // namespace gpulab::reference
