// The thread helpers the references and checks run on (gpulab/parallel.hpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
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

TEST_CASE("a host array made on every core holds zeros, even where its memory held other values before") {
  for (const std::size_t count : {0u, 1u, 1000u, 1u << 18, (1u << 20) + 3}) {
    CAPTURE(count);
    {
      // Freed memory of the same size, full of ones: what the allocator may hand back next.
      HostArray<std::uint32_t> dirty(count);
      std::fill(dirty.begin(), dirty.end(), 0xFFFFFFFFu);
    }
    const HostArray<std::uint32_t> array = zeroed_on_all_cores<std::uint32_t>(count);
    CHECK(array.size() == count);
    CHECK(std::all_of(array.begin(), array.end(), [](std::uint32_t v) { return v == 0; }));
    const HostArray<float> floats = zeroed_on_all_cores<float>(count);
    CHECK(std::all_of(floats.begin(), floats.end(), [](float v) { return v == 0.0f; }));
  }
}

TEST_CASE("a host array keeps the values it is given: copies, fills and growth write what std::vector writes") {
  HostArray<int> array(3, 7);
  CHECK(array == HostArray<int>{7, 7, 7});
  array.resize(5, 2);
  CHECK(array == HostArray<int>{7, 7, 7, 2, 2});
  const HostArray<int> copy = array;
  CHECK(copy == array);
  array.push_back(9);
  CHECK(array.back() == 9);
}
