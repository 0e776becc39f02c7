// Runs CPU work on every core: the references must check a GPU's largest cases in well under a
// second, and the CPU calibrations compare the GPU with the whole CPU, not one core.
#pragma once
#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

namespace gpulab {

// Calls body(begin, end) on disjoint ranges that cover [0, count), one range per core.
template <typename Body>
void parallel_ranges(std::size_t count, Body body) {
  const std::size_t parts = std::min<std::size_t>(std::max(1u, std::thread::hardware_concurrency()), count);
  if (parts <= 1) {
    if (count > 0) body(std::size_t{0}, count);
    return;
  }
  std::vector<std::thread> pool;
  for (std::size_t p = 0; p < parts; ++p)
    pool.emplace_back([&body, p, parts, count] { body(count * p / parts, count * (p + 1) / parts); });
  for (auto& t : pool) t.join();
}

}  // namespace gpulab
