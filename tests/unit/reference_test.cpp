#include <doctest/doctest.h>

#include <numeric>
#include <string>

#include "gpulab/reference.hpp"

using namespace gpulab;

TEST_CASE("the hello reference turns Hello into World") {
  const std::string text = "Hello ";
  const std::vector<int> offsets{15, 10, 6, 0, -11, 1};
  const auto out = reference::hello(std::vector<char>(text.begin(), text.end()), offsets);
  CHECK(std::string(out.begin(), out.end()) == "World!");
}

TEST_CASE("the transpose reference moves element (r, c) to (c, r) for shapes that are not multiples of its tile") {
  for (auto [rows, cols] : {std::pair<std::size_t, std::size_t>{1, 1}, {1, 70}, {70, 1}, {37, 53}, {64, 33}}) {
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
