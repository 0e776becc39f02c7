// Lab bitonic's CPU reference: the bitonic network and the CPU sorts.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "bitonic_reference.hpp"
#include "gpulab/random.hpp"

using namespace gpulab;

TEST_CASE("the CPU bitonic network and both CPU sorts agree with std::sort for any length") {
  for (std::size_t n : {0u, 1u, 2u, 3u, 7u, 64u, 1000u, 4097u}) {
    CAPTURE(n);
    Rng rng(n + 1);
    std::vector<std::uint32_t> keys(n);
    for (auto& k : keys) k = static_cast<std::uint32_t>(rng.integer(0, 50));  // many ties
    auto expected = keys;
    std::sort(expected.begin(), expected.end());
    auto a = keys, b = keys, c = keys;
    reference::bitonic_sort(a);
    reference::sort_one_core(b);
    reference::sort_all_cores(c);
    CHECK(a == expected);
    CHECK(b == expected);
    CHECK(c == expected);
  }
}
