#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "gpulab/compare.hpp"

using namespace gpulab;

namespace {
float poison_float() {
  float f;
  std::memset(&f, kPoisonByte, sizeof f);
  return f;
}
}  // namespace

TEST_CASE("identical outputs compare as correct") {
  const std::vector<float> a{1.0f, -2.5f, 0.0f};
  const auto c = compare_exact<float>(a, a);
  CHECK(c.ok());
  CHECK(c.total == 3);
  CHECK(c.summary() == "all 3 elements match");
}

TEST_CASE("comparison is bit-exact, so -0.0 differs from 0.0") {
  const std::vector<float> expected{0.0f};
  const std::vector<float> got{-0.0f};
  CHECK_FALSE(compare_exact<float>(expected, got).ok());
}

TEST_CASE("a mismatch report counts the wrong elements and lists the first ones in index order") {
  std::vector<float> expected(100), got(100);
  for (int i = 0; i < 100; ++i) expected[i] = got[i] = static_cast<float>(i);
  for (int i : {7, 3, 50, 99}) got[i] = -1.0f;
  const auto c = compare_exact<float>(expected, got, 0, 3);
  CHECK(c.wrong == 4);
  REQUIRE(c.first.size() == 3);
  CHECK(c.first[0].index == 3);
  CHECK(c.first[1].index == 7);
  CHECK(c.first[2].index == 50);
  CHECK(c.first[0].expected == "3");
  CHECK(c.first[0].got == "-1");
  CHECK(c.summary().find("4 of 100 elements wrong (4.0%)") == 0);
  CHECK(c.report().find("[3] expected 3, got -1") != std::string::npos);
}

TEST_CASE("elements still holding the poison pattern are reported as never written") {
  std::vector<float> expected{1, 2, 3, 4};
  std::vector<float> got(4, poison_float());
  auto c = compare_exact<float>(expected, got);
  CHECK(c.untouched == 4);
  CHECK(c.summary().find("none of them was written") != std::string::npos);
  got[0] = 1;
  got[1] = 7;
  c = compare_exact<float>(expected, got);
  CHECK(c.wrong == 3);
  CHECK(c.untouched == 2);
  CHECK(c.summary().find("2 of them were never written") != std::string::npos);
  CHECK(c.report().find("got poison (never written)") != std::string::npos);
}

TEST_CASE("a 2-D mismatch report names the wrong rows and columns") {
  const std::size_t rows = 6, cols = 40;
  std::vector<float> expected(rows * cols, 1.0f), got = expected;
  for (std::size_t c = 32; c < 40; ++c) got[2 * cols + c] = 0;  // row 2, columns 32-39
  got[5 * cols + 0] = 0;                                        // row 5, column 0
  const auto cmp = compare_exact<float>(expected, got, cols);
  CHECK(cmp.wrong == 9);
  CHECK(cmp.wrong_rows == std::vector<std::size_t>{2, 5});
  CHECK(cmp.wrong_cols.size() == 9);
  const std::string report = cmp.report();
  CHECK(report.find("wrong rows: 2, 5 (2 of 6)") != std::string::npos);
  CHECK(report.find("wrong columns: 0, 32-39 (9 of 40)") != std::string::npos);
  CHECK(report.find("[row 2, col 32] expected 1, got 0") != std::string::npos);
}

TEST_CASE("a shorter output counts its missing elements as wrong") {
  const std::vector<float> expected{1, 2, 3};
  const std::vector<float> got{1};
  CHECK(compare_exact<float>(expected, got).wrong == 2);
}

TEST_CASE("characters are shown printable when they are, and as hex escapes otherwise") {
  CHECK(show_value('W') == "'W' (87)");
  CHECK(show_value('\n') == "\\x0a");
  CHECK(show_value(static_cast<char>(kPoisonByte)) == "poison (never written)");
}

TEST_CASE("index ranges are compressed and long lists are cut") {
  CHECK(describe_ranges({}) == "");
  CHECK(describe_ranges({4}) == "4");
  CHECK(describe_ranges({0, 1, 2, 5, 7, 8}) == "0-2, 5, 7-8");
  CHECK(describe_ranges({0, 2, 4, 6, 8}, 3) == "0, 2, 4, …");
}

TEST_CASE("a tolerance comparison accepts errors within each element's bound and reports the others with their bound") {
  const std::vector<double> expected{1.0, 2.0, 3.0, 4.0};
  const std::vector<double> bound{0.1, 0.1, 0.0, 0.5};
  const std::vector<float> got{1.05f, 2.2f, 3.0f, std::nanf("")};
  const auto c = compare_within(expected, bound, got, 2);
  CHECK(c.wrong == 2);
  REQUIRE(c.first.size() == 2);
  CHECK(c.first[0].index == 1);
  CHECK(c.first[1].index == 3);  // NaN never passes
  const std::string report = c.report();
  CHECK(report.find("[row 0, col 1] expected 2, got 2.20000005 (allowed ±0.1, off by 0.2)") != std::string::npos);
  CHECK(report.find("wrong rows: 0-1") != std::string::npos);
}
