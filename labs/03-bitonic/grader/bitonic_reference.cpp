#include <algorithm>
#include <thread>
#include <vector>

#include "bitonic_reference.hpp"
#include "gpulab/parallel.hpp"

namespace gpulab::reference {

void bitonic_sort(std::span<std::uint32_t> keys) {
  const std::size_t n = keys.size();
  std::size_t padded = 1;
  while (padded < n) padded <<= 1;
  for (std::size_t k = 2; k <= padded; k <<= 1)
    for (std::size_t j = k / 2; j > 0; j /= 2)
      for (std::size_t i = 0; i < padded; ++i) {
        const std::size_t partner = j == k / 2 ? i ^ (k - 1) : i ^ j;
        if (partner <= i || partner >= n) continue;  // each pair once; the padding never moves down
        if (keys[i] > keys[partner]) std::swap(keys[i], keys[partner]);
      }
}

void sort_one_core(std::span<std::uint32_t> keys) { std::sort(keys.begin(), keys.end()); }

void sort_all_cores(std::span<std::uint32_t> keys) {
  std::size_t parts = std::max(1u, std::thread::hardware_concurrency());
  parts = std::min(parts, std::max<std::size_t>(1, keys.size() / 4096));
  std::vector<std::size_t> bounds(parts + 1);
  for (std::size_t p = 0; p <= parts; ++p) bounds[p] = keys.size() * p / parts;
  parallel_for(parts, [&](std::size_t p) { std::sort(keys.begin() + bounds[p], keys.begin() + bounds[p + 1]); });
  for (std::size_t width = 1; width < parts; width *= 2) {
    const std::size_t merges = (parts + 2 * width - 1) / (2 * width);
    parallel_for(merges, [&](std::size_t m) {
      const std::size_t first = m * 2 * width, middle = std::min(parts, first + width),
                        last = std::min(parts, first + 2 * width);
      if (middle < last)
        std::inplace_merge(keys.begin() + bounds[first], keys.begin() + bounds[middle], keys.begin() + bounds[last]);
    });
  }
}

}  // namespace gpulab::reference
