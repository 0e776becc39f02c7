// Lab hello's CPU reference.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "hello_reference.hpp"

using namespace gpulab;

TEST_CASE("the hello reference turns Hello into World") {
  const std::string text = "Hello ";
  const std::vector<int> offsets{15, 10, 6, 0, -11, 1};
  const auto out = reference::hello(std::vector<char>(text.begin(), text.end()), offsets);
  CHECK(std::string(out.begin(), out.end()) == "World!");
}
