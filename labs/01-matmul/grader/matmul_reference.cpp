#include <algorithm>
#include <array>
#include <bit>
#include <cfloat>
#include <cmath>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "gpulab/parallel.hpp"
#include "matmul_reference.hpp"

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

// One row of A (`a_row`, k values) times B (k rows of `width` floats): each element's sum in double
// into `exact` and its error bound into `bound` (both zero on entry). matmul_check and
// matmul_check_at both sum this way, so an element gets the same expected value and bound from either.
void row_with_bound(const float* a_row, const float* b, std::size_t k, std::size_t width, double gamma, double* exact,
                    double* bound) {
  for (std::size_t p = 0; p < k; ++p) {
    const double x = a_row[p], ax = std::fabs(x);
    const float* row = &b[p * width];
    for (std::size_t j = 0; j < width; ++j) {
      exact[j] += x * row[j];
      bound[j] += ax * std::fabs(row[j]);
    }
  }
  for (std::size_t j = 0; j < width; ++j) bound[j] = gamma * bound[j] + k * static_cast<double>(FLT_MIN);
}

}  // namespace

std::vector<float> matmul_inputs(Rng& rng, std::size_t count, std::string_view inputs) {
  std::vector<float> out(count);
  if (inputs == "uniform") {
    draw_each(rng, std::span(out), [](Rng& r) { return r.uniform(-1.0f, 1.0f); });
  } else if (inputs == "no-cancel") {
    // One pattern for A and B alike: with opposite ones their rounding errors would cancel in a*b.
    draw_each(rng, std::span(out), [](Rng& r) {  // exponent 126: [0.5, 1)
      return std::bit_cast<float>((126u << 23) | (static_cast<std::uint32_t>(r.integer(0, 127)) << 16) |
                                  kNoCancelLowBits);
    });
  } else if (inputs == "scaled") {
    throw std::invalid_argument("matmul inputs \"scaled\" need the operand's shape");
  } else {
    throw std::invalid_argument("unknown matmul inputs '" + std::string(inputs) +
                                "': use \"uniform\", \"no-cancel\" or \"scaled\" in the case");
  }
  return out;
}

std::vector<float> matmul_inputs(Rng& rng, std::size_t rows, std::size_t cols, std::string_view inputs,
                                 MatmulOperand of) {
  if (inputs != "scaled") return matmul_inputs(rng, rows * cols, inputs);
  // One exponent per row of A, per column of B: element (i, j) of C is 2^(s_i + t_j) times a sum of
  // uniform products, its bound the same multiple of theirs.
  std::vector<int> exponent(of == MatmulOperand::a ? rows : cols);
  for (int& e : exponent) e = static_cast<int>(rng.integer(0, 2 * kScaledExponent)) - kScaledExponent;
  std::vector<float> out = matmul_inputs(rng, rows * cols, "uniform");
  parallel_ranges(out.size(), [&](std::size_t i0, std::size_t i1) {
    for (std::size_t i = i0; i < i1; ++i)
      out[i] = std::ldexp(out[i], exponent[of == MatmulOperand::a ? i / cols : i % cols]);
  });
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
    for (std::size_t i = r0; i < r1; ++i)
      row_with_bound(&a[i * k], b.data(), k, n, gamma, &out.expected[i * n], &out.bound[i * n]);
  });
  return out;
}

// ---- Large cases: projections and exact elements instead of the full reference ----

namespace {

// A row-major matrix as the projections see it.
struct Operand {
  std::span<const float> values;
  std::size_t rows, cols;
};

// M X for V vectors side by side (X is cols x V, row-major): out[i * V + v] = sum_j M_ij X_jv,
// with |M_ij| when `absolute`. Each output is a sum in order j = 0, 1, ...; rows on every core.
template <std::size_t V>
std::vector<double> times(const Operand& mat, std::span<const double> x, bool absolute) {
  std::vector<double> out(mat.rows * V);
  parallel_ranges(mat.rows, [&](std::size_t i0, std::size_t i1) {
    for (std::size_t i = i0; i < i1; ++i) {
      std::array<double, V> sum{};
      const float* row = &mat.values[i * mat.cols];
      for (std::size_t j = 0; j < mat.cols; ++j) {
        const double e = absolute ? std::fabs(row[j]) : row[j];
        for (std::size_t v = 0; v < V; ++v) sum[v] += e * x[j * V + v];
      }
      std::copy(sum.begin(), sum.end(), &out[i * V]);
    }
  });
  return out;
}

// Y^T M for V vectors side by side (Y is rows x V): out[j * V + v] = sum_i Y_iv M_ij, in order
// i = 0, 1, ...; columns on every core.
template <std::size_t V>
std::vector<double> times_left(const Operand& mat, std::span<const double> y, bool absolute) {
  std::vector<double> out(mat.cols * V);
  parallel_ranges(mat.cols, [&](std::size_t j0, std::size_t j1) {
    for (std::size_t i = 0; i < mat.rows; ++i) {
      const float* row = &mat.values[i * mat.cols];
      std::array<double, V> w;
      std::copy(&y[i * V], &y[i * V] + V, w.begin());
      for (std::size_t j = j0; j < j1; ++j) {
        const double e = absolute ? std::fabs(row[j]) : row[j];
        for (std::size_t v = 0; v < V; ++v) out[j * V + v] += e * w[v];
      }
    }
  });
  return out;
}

// Multiplies by the vectors from the right (rows of C) or, for `columns`, from the left.
template <std::size_t V>
std::vector<double> multiply(const Operand& mat, std::span<const double> x, bool absolute, bool columns) {
  return columns ? times_left<V>(mat, x, absolute) : times<V>(mat, x, absolute);
}

// The largest |element| of each row of `mat`, or of each column for `columns`.
std::vector<double> largest(const Operand& mat, bool columns) {
  std::vector<double> out(columns ? mat.cols : mat.rows);
  for (std::size_t i = 0; i < mat.rows; ++i)
    for (std::size_t j = 0; j < mat.cols; ++j) {
      double& slot = out[columns ? j : i];
      slot = std::max(slot, static_cast<double>(std::fabs(mat.values[i * mat.cols + j])));
    }
  return out;
}

// The tolerance of a row's residual r_i = sum_j x_j e_ij, e_ij = c_ij - (A B)_ij, x_j = +-1 (a
// column's alike, with m for n). A correct C meets matmul_check's element bound
// |e_ij| <= beta_ij = gamma M_ij + k FLT_MIN, M = |A| |B|. Then:
// - always |r_i| <= sum_j beta_ij = gamma (|A| |B| 1)_i + n k FLT_MIN = `sum_beta`;
// - x is drawn by the harness, independent of C, so by Hoeffding's inequality for a sum of random
//   signs P(|r_i| >= t) <= 2 exp(-t^2 / (2 sum_j e_ij^2)), and sum_j e_ij^2 <= max_j beta_ij
//   sum_j beta_ij, where max_j M_ij <= (|A| bmax)_i, bmax_p = max_j |b_pj| (`max_m`). With
//   t = 10 sqrt(max_beta sum_beta) a correct row exceeds t with probability below 2 exp(-50) =
//   4e-22, the confidence of matmul_error_factor's own bound; either bound may be the smaller.
// The residual is computed in double (u_d = 2^-53): B x and C x are sums of n exact products with
// +-1, A (B x) of k rounded products, so recursive summation puts the computed residual within
// about (n + k + 1) u_d ((|A| |B| 1)_i + (|C| 1)_i) of r_i; twice that covers the terms of second
// order. The tolerance's ingredients are computed in double too: a relative 1e-9 covers their
// rounding for n + k below 10^6.
double line_tolerance(double gamma, double sum_m, double max_m, std::size_t length, std::size_t k, double c_abs) {
  const double tiny = static_cast<double>(k) * FLT_MIN;
  const double sum_beta = gamma * sum_m + static_cast<double>(length) * tiny, max_beta = gamma * max_m + tiny;
  const double hoeffding = 10 * std::sqrt(max_beta * sum_beta);
  const double arithmetic = static_cast<double>(length + k + 2) * std::ldexp(1.0, -52) * (sum_m + c_abs);
  return std::min(sum_beta, hoeffding) * (1 + 1e-9) + arithmetic;
}

constexpr std::size_t kV = kMatmulProjections;

// One side's projections: residual[i * kV + v] of line i (a row, or a column) for vector v.
struct Projection {
  std::vector<double> residual, tolerance;
};

// Rows: C x against A (B x). Columns (`columns`): y^T C against (y^T A) B, which is the same for
// C^T = B^T A^T. O(kV (mn + mk + kn)) operations, no O(mnk) product.
Projection project(const Operand& a, const Operand& b, const Operand& c, double gamma, bool columns, Rng& rng) {
  const Operand& first = columns ? a : b;  // the factor the vectors meet first
  const Operand& second = columns ? b : a;
  const std::size_t length = columns ? c.rows : c.cols, lines = columns ? c.cols : c.rows, k = a.cols;
  std::vector<double> x(length * kV);
  for (double& s : x) s = rng.next() & 1 ? 1.0 : -1.0;
  const std::vector<double> ones(length, 1.0);
  const auto fx = multiply<kV>(first, x, false, columns);
  // Per p: |first| 1 and the largest |element| the vectors meet, the weights of the tolerance.
  const auto f1 = multiply<1>(first, ones, true, columns);
  const auto fmax = largest(first, columns);
  std::vector<double> weights(2 * k);
  for (std::size_t p = 0; p < k; ++p) weights[2 * p] = f1[p], weights[2 * p + 1] = fmax[p];
  const auto expected = multiply<kV>(second, fx, false, columns);
  const auto scale = multiply<2>(second, weights, true, columns);
  const auto got = multiply<kV>(c, x, false, columns);
  const auto c1 = multiply<1>(c, ones, true, columns);
  Projection out{std::vector<double>(lines * kV), std::vector<double>(lines)};
  for (std::size_t i = 0; i < lines; ++i) {
    out.tolerance[i] = line_tolerance(gamma, scale[2 * i], scale[2 * i + 1], length, k, c1[i]);
    for (std::size_t v = 0; v < kV; ++v) out.residual[i * kV + v] = got[i * kV + v] - expected[i * kV + v];
  }
  return out;
}

// The lines whose residual exceeds the tolerance for some vector, or is not finite, as
// (residual / tolerance, line), the worst first.
std::vector<std::pair<double, std::size_t>> flagged(const Projection& p) {
  std::vector<std::pair<double, std::size_t>> out;
  for (std::size_t i = 0; i < p.tolerance.size(); ++i) {
    double worst = 0;
    for (std::size_t v = 0; v < kV; ++v) {
      const double r = std::fabs(p.residual[i * kV + v]), t = p.tolerance[i];
      // An infinity in C makes both infinite: flagged too.
      if (!std::isfinite(r) || !std::isfinite(t))
        worst = HUGE_VAL;
      else if (r > t)
        worst = std::max(worst, r / t);
    }
    if (worst > 0) out.emplace_back(worst, i);
  }
  std::sort(out.begin(), out.end(), std::greater<>());
  return out;
}

// An element of C checked exactly.
struct Checked {
  std::size_t index;  // i * n + j
  double expected, bound;
  float got;
  bool wrong() const { return !(std::fabs(static_cast<double>(got) - expected) <= bound); }
};

void check_block(std::vector<Checked>& out, std::span<const float> a, std::span<const float> b,
                 std::span<const float> c, std::size_t m, std::size_t n, std::size_t k,
                 std::span<const std::size_t> rows, std::span<const std::size_t> cols) {
  if (rows.empty() || cols.empty()) return;
  const MatmulCheck ref = matmul_check_at(a, b, m, n, k, rows, cols);
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (std::size_t q = 0; q < cols.size(); ++q) {
      const std::size_t at = rows[r] * n + cols[q], e = r * cols.size() + q;
      out.push_back({at, ref.expected[e], ref.bound[e], c[at]});
    }
}

// The comparison of the elements checked exactly (each once, in index order) as 2-D data: its
// wrong rows and columns are those of the wrong elements and those the projections flagged.
Comparison compare_checked(std::vector<Checked> checked, std::vector<std::size_t> rows, std::vector<std::size_t> cols,
                           std::size_t m, std::size_t n) {
  std::sort(checked.begin(), checked.end(), [](const Checked& x, const Checked& y) { return x.index < y.index; });
  checked.erase(std::unique(checked.begin(), checked.end(),
                            [](const Checked& x, const Checked& y) { return x.index == y.index; }),
                checked.end());
  std::vector<double> expected, bound;
  std::vector<float> got;
  for (const Checked& x : checked) {
    expected.push_back(x.expected);
    bound.push_back(x.bound);
    got.push_back(x.got);
    if (x.wrong()) rows.push_back(x.index / n), cols.push_back(x.index % n);
  }
  Comparison cmp = compare_within(expected, bound, got);
  for (Mismatch& mismatch : cmp.first) mismatch.index = checked[mismatch.index].index;
  for (auto* list : {&rows, &cols}) {
    std::sort(list->begin(), list->end());
    list->erase(std::unique(list->begin(), list->end()), list->end());
  }
  cmp.rows = m;
  cmp.cols = n;
  cmp.wrong_rows = std::move(rows);
  cmp.wrong_cols = std::move(cols);
  return cmp;
}

std::vector<std::size_t> lines_of(const std::vector<std::pair<double, std::size_t>>& flagged, std::size_t most) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < std::min(most, flagged.size()); ++i) out.push_back(flagged[i].second);
  return out;
}

}  // namespace

std::vector<std::size_t> matmul_sample_lines(Rng& rng, std::size_t size, std::size_t count, bool boundaries) {
  std::vector<std::size_t> edges;  // the boundary lines
  for (std::size_t first = 0; first < size; first += kMatmulBoundaryTile) {
    edges.push_back(first);
    edges.push_back(std::min(size, first + kMatmulBoundaryTile) - 1);
  }
  for (std::size_t i = size / kMatmulBoundaryTile * kMatmulBoundaryTile; i < size; ++i) edges.push_back(i);
  std::vector<std::size_t> chosen;
  if (boundaries)
    chosen = edges;
  else
    for (std::size_t i = 0; i < kMatmulQuickBoundaries && size > 0; ++i)
      chosen.push_back(edges[static_cast<std::size_t>(rng.integer(0, static_cast<std::int64_t>(edges.size()) - 1))]);
  for (std::size_t tile = 8; tile <= 256; tile *= 2)
    if (size % tile != 0) chosen.push_back(size / tile * tile);
  if (size > 0) chosen.insert(chosen.end(), {std::size_t{0}, size - 1});
  std::sort(chosen.begin(), chosen.end());
  chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
  // `count` more at random, none of them chosen already.
  const std::size_t wanted = std::min(size, chosen.size() + count);
  std::vector<std::size_t> drawn;
  while (chosen.size() + drawn.size() < wanted) {
    const auto line = static_cast<std::size_t>(rng.integer(0, static_cast<std::int64_t>(size) - 1));
    if (!std::binary_search(chosen.begin(), chosen.end(), line) &&
        std::find(drawn.begin(), drawn.end(), line) == drawn.end())
      drawn.push_back(line);
  }
  chosen.insert(chosen.end(), drawn.begin(), drawn.end());
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

MatmulCheck matmul_check_at(std::span<const float> a, std::span<const float> b, std::size_t m, std::size_t n,
                            std::size_t k, std::span<const std::size_t> rows, std::span<const std::size_t> cols) {
  check_sizes(a, b, m, n, k);
  if (std::any_of(rows.begin(), rows.end(), [m](std::size_t i) { return i >= m; }) ||
      std::any_of(cols.begin(), cols.end(), [n](std::size_t j) { return j >= n; }))
    throw std::out_of_range("matmul_check_at: a row or column outside C");
  const std::size_t q = cols.size();
  // The chosen columns of B side by side (k x q), unless they are all of them in order.
  bool every = q == n;
  for (std::size_t t = 0; every && t < q; ++t) every = cols[t] == t;
  std::vector<float> gathered(every ? 0 : k * q);
  if (!every)
    for (std::size_t p = 0; p < k; ++p)
      for (std::size_t t = 0; t < q; ++t) gathered[p * q + t] = b[p * n + cols[t]];
  const float* chosen = every ? b.data() : gathered.data();
  MatmulCheck out{std::vector<double>(rows.size() * q), std::vector<double>(rows.size() * q)};
  const double gamma = matmul_error_factor(k);
  // The same sums, in the same order, as matmul_check's.
  parallel_for(rows.size(), [&](std::size_t r) {
    row_with_bound(&a[rows[r] * k], chosen, k, q, gamma, &out.expected[r * q], &out.bound[r * q]);
  });
  return out;
}

Comparison matmul_check_large(std::span<const float> a, std::span<const float> b, std::span<const float> c,
                              std::size_t m, std::size_t n, std::size_t k, Rng& rng) {
  check_sizes(a, b, m, n, k);
  if (c.size() != m * n) throw std::invalid_argument("matmul: C does not match m and n");
  const double gamma = matmul_error_factor(k);
  const Operand oa{a, m, k}, ob{b, k, n}, oc{c, m, n};
  const auto bad_rows = flagged(project(oa, ob, oc, gamma, false, rng));
  const auto bad_cols = flagged(project(oa, ob, oc, gamma, true, rng));
  // Exactly: the worst flagged rows and columns in full, and a random grid.
  std::vector<std::size_t> every_row(m), every_col(n);
  std::iota(every_row.begin(), every_row.end(), std::size_t{0});
  std::iota(every_col.begin(), every_col.end(), std::size_t{0});
  const auto full_rows = lines_of(bad_rows, kMatmulExactLines), full_cols = lines_of(bad_cols, kMatmulExactLines);
  const auto grid_rows = matmul_sample_lines(rng, m, kMatmulGridSide, true);
  const auto grid_cols = matmul_sample_lines(rng, n, kMatmulGridSide, true);
  std::vector<Checked> checked;
  check_block(checked, a, b, c, m, n, k, full_rows, every_col);
  check_block(checked, a, b, c, m, n, k, every_row, full_cols);
  check_block(checked, a, b, c, m, n, k, grid_rows, grid_cols);
  Comparison cmp = compare_checked(std::move(checked), lines_of(bad_rows, m), lines_of(bad_cols, n), m, n);
  // "worst: row 100, 88.7 times its tolerance"
  auto worst = [](const char* what, const std::vector<std::pair<double, std::size_t>>& lines) -> std::string {
    if (lines.empty()) return "";
    if (std::isinf(lines[0].first)) return fmt::format("; worst: {} {}, not finite", what, lines[0].second);
    return fmt::format("; worst: {} {}, {:.3g} times its tolerance", what, lines[0].second, lines[0].first);
  };
  cmp.note = fmt::format(
      "counted over the elements checked exactly: {} full row(s) and {} full column(s) with the largest projection "
      "residuals, and a grid of {} rows and {} columns (every tile boundary, the last partial tiles, the rest at "
      "random); projections on {} random ±1 vectors flag {} of {} rows (C x against A (B x){}) and {} of {} columns "
      "(y C against (y A) B{})",
      full_rows.size(), full_cols.size(), grid_rows.size(), grid_cols.size(), kV, bad_rows.size(), m,
      worst("row", bad_rows), bad_cols.size(), n, worst("column", bad_cols));
  return cmp;
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
