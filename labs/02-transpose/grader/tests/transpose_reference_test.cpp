// Lab transpose's CPU reference.
#include <doctest/doctest.h>

#include <numeric>
#include <utility>
#include <vector>

#include "transpose_reference.hpp"

using namespace gpulab;

TEST_CASE(
    "the transpose reference moves element (r, c) to (c, r) for shapes that are not multiples of its tile, on one core "
    "or several") {
  for (auto [rows, cols] :
       {std::pair<std::size_t, std::size_t>{1, 1}, {1, 70}, {70, 1}, {37, 53}, {64, 33}, {1100, 1003}}) {
    CAPTURE(rows);
    CAPTURE(cols);
    std::vector<float> in(rows * cols);
    std::iota(in.begin(), in.end(), 0.0f);
    const auto out = reference::transpose(in, rows, cols);
    bool all = true;
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c) all &= out[c * rows + r] == in[r * cols + c];
    CHECK(all);
  }
  CHECK_THROWS(reference::transpose(std::vector<float>(5), 2, 3));
}
