// Reproducible random inputs: every case gets its own seed derived from the run's seed, so
// `SEED=n` reproduces a whole run and each case's data does not depend on which cases ran before.
#pragma once
#include <cstdint>
#include <span>
#include <string_view>

#include "gpulab/parallel.hpp"

namespace gpulab {

// A fresh, unpredictable run seed (printed by the grader so the run can be reproduced).
std::uint64_t fresh_seed();

// The seed of one case: a hash of the run seed, the lab, the task and the case name.
std::uint64_t derive_seed(std::uint64_t run_seed, std::string_view lab, std::string_view task,
                          std::string_view case_name);

// SplitMix64: tiny, fast and statistically good enough for test data; its output is the same on
// every platform, unlike the standard library's distributions.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  // Uniform in [lo, hi).
  float uniform(float lo, float hi);
  // Uniform in [lo, hi], both ends included.
  std::int64_t integer(std::int64_t lo, std::int64_t hi);
  // This generator `draws` draws later: SplitMix64's state moves by a constant per draw, so one
  // stream can be cut into pieces drawn on several cores and still give the numbers of one pass.
  Rng skipped(std::uint64_t draws) const { return Rng(state_ + draws * kGamma); }
  static constexpr std::uint64_t kGamma = 0x9e3779b97f4a7c15ULL;

 private:
  std::uint64_t state_;
};

// Fills values[i] = draw(generator) for every i, on every core, with exactly the numbers a loop
// over i would give: `draw` must take one draw of its generator per value (uniform, next). Then
// `rng` stands where that loop would have left it.
template <typename T, typename Draw>
void draw_each(Rng& rng, std::span<T> values, Draw draw) {
  const Rng start = rng;
  auto fill = [&](std::size_t begin, std::size_t end) {
    Rng local = start.skipped(begin);
    for (std::size_t i = begin; i < end; ++i) values[i] = draw(local);
  };
  if (values.size() < (std::size_t{1} << 16))
    fill(0, values.size());  // less than a thread's start costs
  else
    parallel_ranges(values.size(), fill);
  rng = start.skipped(values.size());
}

}  // namespace gpulab
