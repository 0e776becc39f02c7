// The thread helpers the references and checks run on (gpulab/parallel.hpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "gpulab/parallel.hpp"

using namespace gpulab;

TEST_CASE("the references' thread helpers visit every index or range exactly once, for any count") {
  for (const std::size_t count : {0u, 1u, 2u, 3u, 7u, 1000u}) {
    std::vector<std::atomic<int>> by_index(count), by_range(count);
    parallel_for(count, [&](std::size_t i) { ++by_index[i]; });
    parallel_ranges(count, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) ++by_range[i];
    });
    CHECK_MESSAGE(std::all_of(by_index.begin(), by_index.end(), [](const auto& n) { return n == 1; }), count);
    CHECK_MESSAGE(std::all_of(by_range.begin(), by_range.end(), [](const auto& n) { return n == 1; }), count);
  }
}
