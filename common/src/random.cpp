#include "gpulab/random.hpp"

#include <chrono>
#include <random>

namespace gpulab {

namespace {
std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
std::uint64_t fnv1a(std::uint64_t h, std::string_view s) {
  for (unsigned char ch : s) h = (h ^ ch) * 0x100000001b3ULL;
  return (h ^ 0xff) * 0x100000001b3ULL;  // separator, so ("ab","c") != ("a","bc")
}
}  // namespace

std::uint64_t fresh_seed() {
  std::random_device device;
  const auto now = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  // Keep seeds short enough to type: 9 decimal digits.
  return mix((static_cast<std::uint64_t>(device()) << 32) ^ device() ^ now) % 1000000000ULL;
}

std::uint64_t derive_seed(std::uint64_t run_seed, std::string_view lab, std::string_view task,
                          std::string_view case_name) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  h = fnv1a(h, lab);
  h = fnv1a(h, task);
  h = fnv1a(h, case_name);
  return mix(h ^ mix(run_seed));
}

std::uint64_t Rng::next() {
  state_ += kGamma;
  return mix(state_);
}

float Rng::uniform(float lo, float hi) {
  const double unit = static_cast<double>(next() >> 11) * 0x1.0p-53;  // [0, 1)
  const float value = static_cast<float>(lo + unit * (static_cast<double>(hi) - lo));
  return value < hi ? value : lo;  // rounding to float may reach hi
}

std::int64_t Rng::integer(std::int64_t lo, std::int64_t hi) {
  const auto span = static_cast<std::uint64_t>(hi - lo) + 1;
  if (span == 0) return static_cast<std::int64_t>(next());  // the full 64-bit range
  return lo + static_cast<std::int64_t>(next() % span);     // bias below 2^-40 for our spans
}

}  // namespace gpulab
