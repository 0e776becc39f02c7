#include "nbody_reference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <numbers>
#include <stdexcept>
#include <string>

#include "gpulab/parallel.hpp"

namespace gpulab::reference {

namespace {

std::size_t bodies_in(std::span<const float> words) {
  if (words.size() % kBodyFloats != 0)
    throw std::invalid_argument("nbody: a body array holds 4 floats per body (x, y, z, mass)");
  return words.size() / kBodyFloats;
}

// One word of the output as the report shows it when no reference value is known for it.
Mismatch unchecked_word(std::size_t index, float got) {
  const bool w = index % kBodyFloats == 3;
  return {index, w ? "0 (w is always 0)" : "a finite value", show_value(got), {}};
}

bool poison(float v) {
  std::uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits == 0xFFFFFFFFu;
}

// The float acceleration of body i over bodies [0, n), summed in order j = 0, 1, ...: the course's
// loop, shared by the one-core and all-core CPU versions.
void accelerate(std::span<const float> b, std::span<float> accel, std::size_t i, float softening2) {
  const std::size_t n = b.size() / kBodyFloats;
  const float xi = b[4 * i], yi = b[4 * i + 1], zi = b[4 * i + 2];
  float ax = 0, ay = 0, az = 0;
  for (std::size_t j = 0; j < n; ++j) {
    const float dx = b[4 * j] - xi, dy = b[4 * j + 1] - yi, dz = b[4 * j + 2] - zi;
    const float dist2 = dx * dx + dy * dy + dz * dz + softening2;
    const float inv_dist = 1.0f / std::sqrt(dist2);
    const float s = b[4 * j + 3] * inv_dist * inv_dist * inv_dist;
    ax += dx * s;
    ay += dy * s;
    az += dz * s;
  }
  accel[4 * i] = ax;
  accel[4 * i + 1] = ay;
  accel[4 * i + 2] = az;
  accel[4 * i + 3] = 0;
}

// A point of a Plummer sphere of scale radius `a`, cut off at `cutoff`: the radius from the inverse
// of the cumulative mass M(r) = r^3 / (r^2 + a^2)^(3/2), the direction uniform on the sphere.
void plummer_point(Rng& rng, float a, float cutoff, float* xyz) {
  double r = 0;
  do {
    const double mass_fraction = std::max(1e-7, static_cast<double>(rng.uniform(0.0f, 1.0f)));
    r = a / std::sqrt(std::pow(mass_fraction, -2.0 / 3.0) - 1.0);
  } while (!(r <= cutoff));
  const double z = rng.uniform(-1.0f, 1.0f), phi = rng.uniform(0.0f, 2.0f * std::numbers::pi_v<float>);
  const double ring = std::sqrt(std::max(0.0, 1.0 - z * z));
  xyz[0] = static_cast<float>(r * ring * std::cos(phi));
  xyz[1] = static_cast<float>(r * ring * std::sin(phi));
  xyz[2] = static_cast<float>(r * z);
}

// The shell of distance of a term, for nbody_bound's `shells`: a quarter of a binade of the squared
// distance (the exponent and the two leading mantissa bits of its float), 1,024 shells in all.
constexpr int kShellBits = 2;
constexpr std::size_t kShells = std::size_t{1} << (8 + kShellBits);
std::size_t shell_of(double dist2) {
  return std::bit_cast<std::uint32_t>(static_cast<float>(dist2)) >> (23 - kShellBits);
}

}  // namespace

double nbody_bound(const TermSums& t, std::size_t n) {
  const double u = std::ldexp(1.0, -24), nd = static_cast<double>(n);
  const double terms = kTermError * u * std::min(t.magnitude, t.shells + kLambda * std::sqrt(t.squares));
  const double worst_case = nd * u < 1 ? nd * u / (1 - nd * u) * t.magnitude : INFINITY;
  // Higham and Mary's bound over partial sums of about k a / n plus a random walk; the last factor
  // covers the partial sums being the computed ones, within about lambda sqrt(n) u of the exact.
  const double partial_sums = 2 * nd / 3 * (t.sum * t.sum + t.squares);
  const double probabilistic = kLambda * u * std::sqrt(partial_sums) * (1 + kLambda * std::sqrt(nd) * u);
  return terms + std::min(worst_case, probabilistic) + nd * u * u * t.magnitude + nd * FLT_MIN;
}

namespace {

// The terms of body i's acceleration over a block of bodies [j0, j0 + count), count <= kTermBlock:
// one loop without a branch or a loop-carried sum, which the compiler turns into vector code (the
// square root and the division are most of a check's time, at 2^18 bodies about 8e8 terms).
constexpr std::size_t kTermBlock = 256;
struct TermBlock {
  double term[3][kTermBlock];
  std::uint32_t shell[kTermBlock];
};

void block_terms(std::span<const float> bodies, std::size_t j0, std::size_t count, const double (&r)[3], double eps2,
                 TermBlock& out) {
  const float* b = bodies.data() + 4 * j0;
  for (std::size_t k = 0; k < count; ++k) {
    const double dx = b[4 * k] - r[0], dy = b[4 * k + 1] - r[1], dz = b[4 * k + 2] - r[2];
    const double dist2 = dx * dx + dy * dy + dz * dz + eps2;
    const double s = b[4 * k + 3] / (dist2 * std::sqrt(dist2));
    out.term[0][k] = dx * s;
    out.term[1][k] = dy * s;
    out.term[2][k] = dz * s;
    out.shell[k] = static_cast<std::uint32_t>(shell_of(dist2));
  }
}

// Sums of terms in kLanes lanes (term k in lane k % kLanes), added up at the end: independent
// additions the compiler can do side by side, where one running sum waits for each addition.
constexpr std::size_t kLanes = 4;
struct LaneSums {
  double sum[3][kLanes] = {}, magnitude[3][kLanes] = {}, squares[3][kLanes] = {};

  void add(const TermBlock& t, std::size_t count) {
    for (int c = 0; c < 3; ++c) {
      std::size_t k = 0;
      for (; k + kLanes <= count; k += kLanes)
        for (std::size_t l = 0; l < kLanes; ++l) {
          const double term = t.term[c][k + l];
          sum[c][l] += term;
          magnitude[c][l] += std::fabs(term);
          squares[c][l] += term * term;
        }
      for (; k < count; ++k) {
        const double term = t.term[c][k];
        sum[c][k % kLanes] += term;
        magnitude[c][k % kLanes] += std::fabs(term);
        squares[c][k % kLanes] += term * term;
      }
    }
  }
  TermSums of(int c) const {
    TermSums t;
    for (std::size_t l = 0; l < kLanes; ++l) {
      t.sum += sum[c][l];
      t.magnitude += magnitude[c][l];
      t.squares += squares[c][l];
    }
    return t;
  }
};

}  // namespace

BodyExpected nbody_expected(std::span<const float> bodies, std::size_t body, float softening2) {
  const std::size_t n = bodies_in(bodies);
  const double r[3] = {bodies[4 * body], bodies[4 * body + 1], bodies[4 * body + 2]};
  // The sum of each shell's terms, per component (3 of 4 doubles), in kCopies copies that successive
  // terms take in turn: neighbours in the same shell do not wait for each other's additions.
  constexpr std::size_t kCopies = 4;
  std::vector<double> shells(kCopies * kShells * 4);
  std::size_t lowest = kShells, highest = 0;
  LaneSums sums;
  TermBlock block;
  for (std::size_t j0 = 0; j0 < n; j0 += kTermBlock) {
    const std::size_t count = std::min(kTermBlock, n - j0);
    block_terms(bodies, j0, count, r, softening2, block);
    sums.add(block, count);
    for (std::size_t k = 0; k < count; ++k) {
      const std::size_t shell = block.shell[k];
      lowest = std::min(lowest, shell);
      highest = std::max(highest, shell);
      double* to = &shells[((k % kCopies) * kShells + shell) * 4];
      for (int c = 0; c < 3; ++c) to[c] += block.term[c][k];
    }
  }
  BodyExpected out{};
  for (int c = 0; c < 3; ++c) {
    TermSums t = sums.of(c);
    for (std::size_t shell = lowest; shell <= highest && n > 0; ++shell) {
      double in_shell = 0;
      for (std::size_t copy = 0; copy < kCopies; ++copy) in_shell += shells[(copy * kShells + shell) * 4 + c];
      t.shells += std::fabs(in_shell);
    }
    out.accel[c] = t.sum;
    out.bound[c] = nbody_bound(t, n);
  }
  return out;
}

Comparison nbody_check(std::span<const float> bodies, float softening2, std::span<const float> accel,
                       std::span<const std::size_t> sample) {
  const std::size_t n = bodies_in(bodies);
  if (accel.size() != bodies.size()) throw std::invalid_argument("nbody_check: accel must hold 4 floats per body");
  std::vector<BodyExpected> expected(sample.size());
  parallel_for(sample.size(), [&](std::size_t s) { expected[s] = nbody_expected(bodies, sample[s], softening2); });

  constexpr std::size_t kListed = 8;
  Comparison c;
  c.total = accel.size();
  c.rows = n;
  c.cols = kBodyFloats;
  std::vector<std::size_t> wrong;
  auto wrong_word = [&](std::size_t index, Mismatch mismatch) {
    wrong.push_back(index);
    if (poison(accel[index])) ++c.untouched;
    if (c.first.size() < kListed) c.first.push_back(std::move(mismatch));
  };
  std::size_t next_sampled = 0;  // sample is in increasing order
  for (std::size_t i = 0; i < n; ++i) {
    const bool sampled = next_sampled < sample.size() && sample[next_sampled] == i;
    for (std::size_t k = 0; k < kBodyFloats; ++k) {
      const std::size_t index = i * kBodyFloats + k;
      const float got = accel[index];
      if (k == 3) {
        if (got != 0.0f || poison(got)) wrong_word(index, unchecked_word(index, got));
      } else if (sampled) {
        const BodyExpected& e = expected[next_sampled];
        const double error = std::fabs(static_cast<double>(got) - e.accel[k]);
        if (!(error <= e.bound[k]))  // NaN is never within
          wrong_word(index, {index, fmt::format("{:.9g}", e.accel[k]), show_value(got),
                             fmt::format("±{:.3g}, off by {:.3g}", e.bound[k], error)});
      } else if (!std::isfinite(got)) {
        wrong_word(index, unchecked_word(index, got));
      }
    }
    next_sampled += sampled;
  }
  c.note =
      sample.size() == n
          ? fmt::format("every body's acceleration was compared with the double-precision sum over all {} bodies", n)
          : fmt::format(
                "every word was checked to be written and finite (w = 0), and the accelerations of {} bodies (the "
                "first and the last, bodies at tile boundaries, the rest chosen at random after the launch) against "
                "the double-precision sum over all {} bodies (a kernel that skips or approximates some bodies fails "
                "with overwhelming probability)",
                sample.size(), n);
  return detail::finish(std::move(c), wrong);
}

std::vector<std::size_t> nbody_sample(Rng& rng, std::size_t n, std::size_t count, bool boundaries) {
  std::vector<std::size_t> chosen;
  if (n <= count) {
    chosen.resize(n);
    for (std::size_t i = 0; i < n; ++i) chosen[i] = i;
    return chosen;
  }
  // Tile boundaries: the first and last body of every tile of kBoundaryTile, and where the last
  // tile of a power of two from 32 to 1,024 bodies is partial, its first body.
  std::vector<std::size_t> edges;
  for (std::size_t first = 0; first < n; first += kBoundaryTile) {
    edges.push_back(first);
    edges.push_back(std::min(n, first + kBoundaryTile) - 1);
  }
  for (std::size_t tile = 32; tile <= 1024; tile *= 2) edges.push_back(n / tile * tile);
  std::erase_if(edges, [n](std::size_t i) { return i >= n; });
  if (!boundaries)
    for (std::size_t i = 0; i < kQuickBoundaries; ++i)
      chosen.push_back(edges[static_cast<std::size_t>(rng.integer(0, static_cast<std::int64_t>(edges.size()) - 1))]);
  else
    chosen = edges;
  chosen.push_back(0);
  chosen.push_back(n - 1);
  std::sort(chosen.begin(), chosen.end());
  chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
  // `count` more at random, none of them chosen already.
  const std::size_t wanted = std::min(n, chosen.size() + count);
  std::vector<std::size_t> drawn;
  while (chosen.size() + drawn.size() < wanted) {
    const auto body = static_cast<std::size_t>(rng.integer(0, static_cast<std::int64_t>(n) - 1));
    if (!std::binary_search(chosen.begin(), chosen.end(), body) &&
        std::find(drawn.begin(), drawn.end(), body) == drawn.end())
      drawn.push_back(body);
  }
  chosen.insert(chosen.end(), drawn.begin(), drawn.end());
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

std::vector<float> nbody_inputs(Rng& rng, std::size_t n, std::string_view distribution) {
  std::vector<float> bodies(n * kBodyFloats);
  if (distribution == "cube" || distribution == "signed" || distribution == "wide") {
    draw_each(rng, std::span(bodies), [](Rng& r) { return r.uniform(-1.0f, 1.0f); });
  } else if (distribution == "plummer") {
    for (std::size_t i = 0; i < n; ++i) plummer_point(rng, 0.1f, 2.0f, &bodies[i * kBodyFloats]);
  } else {
    throw std::invalid_argument("unknown nbody distribution '" + std::string(distribution) +
                                "': use \"cube\", \"plummer\", \"wide\" or \"signed\" in the case");
  }
  if (distribution == "wide")  // a quarter of the bodies far out: in a random direction, 4 to 4096 away
    for (std::size_t i = 0; i < n; ++i) {
      if (rng.next() % kWideOneIn != 0) continue;
      const double radius = std::exp2(rng.uniform(kWideLog2Near, kWideLog2Far));
      const double z = rng.uniform(-1.0f, 1.0f), phi = rng.uniform(0.0f, 2.0f * std::numbers::pi_v<float>);
      const double ring = std::sqrt(std::max(0.0, 1.0 - z * z));
      bodies[i * kBodyFloats] = static_cast<float>(radius * ring * std::cos(phi));
      bodies[i * kBodyFloats + 1] = static_cast<float>(radius * ring * std::sin(phi));
      bodies[i * kBodyFloats + 2] = static_cast<float>(radius * z);
    }
  const bool signed_masses = distribution == "signed";
  for (std::size_t i = 0; i < n; ++i) {
    const float mass = rng.uniform(0.5f, 1.0f);
    const std::uint64_t bits = rng.next();
    bodies[i * kBodyFloats + 3] = bits % kMasslessOneIn == 0 ? 0.0f : signed_masses && (bits >> 32 & 1) ? -mass : mass;
  }
  return bodies;
}

void nbody_one_core(std::span<const float> bodies, std::span<float> accel, float softening2) {
  const std::size_t n = bodies_in(bodies);
  for (std::size_t i = 0; i < n; ++i) accelerate(bodies, accel, i, softening2);
}

void nbody_all_cores(std::span<const float> bodies, std::span<float> accel, float softening2) {
  const std::size_t n = bodies_in(bodies);
  parallel_ranges(n, [&](std::size_t i0, std::size_t i1) {
    for (std::size_t i = i0; i < i1; ++i) accelerate(bodies, accel, i, softening2);
  });
}

}  // namespace gpulab::reference
