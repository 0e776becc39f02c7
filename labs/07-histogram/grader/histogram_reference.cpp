#include "histogram_reference.hpp"

#include <mutex>

#include "gpulab/parallel.hpp"

namespace gpulab::reference {

Bins histogram_one_core(std::span<const std::uint8_t> bytes) {
  // Four sets of counters: consecutive equal bytes (text, one repeated byte) then increment
  // different memory, instead of waiting each for the previous increment of the same counter.
  std::array<Bins, 4> partial{};
  std::size_t i = 0;
  for (; i + 4 <= bytes.size(); i += 4) {
    ++partial[0][bytes[i]];
    ++partial[1][bytes[i + 1]];
    ++partial[2][bytes[i + 2]];
    ++partial[3][bytes[i + 3]];
  }
  for (; i < bytes.size(); ++i) ++partial[0][bytes[i]];
  Bins bins{};
  for (const Bins& p : partial)
    for (std::size_t b = 0; b < bins.size(); ++b) bins[b] += p[b];
  return bins;
}

Bins histogram_all_cores(std::span<const std::uint8_t> bytes) {
  Bins bins{};
  std::mutex merge;
  parallel_ranges(bytes.size(), [&](std::size_t begin, std::size_t end) {
    const Bins part = histogram_one_core(bytes.subspan(begin, end - begin));
    const std::lock_guard lock(merge);
    for (std::size_t b = 0; b < bins.size(); ++b) bins[b] += part[b];
  });
  return bins;
}

Bins xored(const Bins& bins, std::uint8_t mask) {
  Bins out{};
  for (std::size_t b = 0; b < bins.size(); ++b) out[b ^ mask] = bins[b];
  return out;
}

}  // namespace gpulab::reference
