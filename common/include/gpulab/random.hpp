// Reproducible random inputs: every case gets its own seed derived from the run's seed, so
// `SEED=n` reproduces a whole run and each case's data does not depend on which cases ran before.
#pragma once
#include <cstdint>
#include <string_view>

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

 private:
  std::uint64_t state_;
};

}  // namespace gpulab
