// Exact comparison of a result with its reference, and a report a student can act on.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace gpulab {

// The byte every output buffer is filled with before a launch: 0xFF makes a float NaN and a char
// unprintable, so an element the kernel never wrote can never match a reference value.
inline constexpr std::uint8_t kPoisonByte = 0xFF;

struct Mismatch {
  std::size_t index;
  std::string expected;
  std::string got;
  std::string allowed;  // the tolerance, for comparisons that have one
};

struct Comparison {
  std::size_t total = 0;
  std::size_t wrong = 0;
  std::size_t untouched = 0;                        // wrong elements that still hold the poison pattern
  std::vector<Mismatch> first;                      // the first few mismatches, in index order
  std::size_t rows = 0, cols = 0;                   // set for 2-D data (row-major), else 0
  std::vector<std::size_t> wrong_rows, wrong_cols;  // sorted, for 2-D data
  std::string note;                                 // what the lab adds: "not sorted at index 17: ..."

  bool ok() const { return wrong == 0; }
  // One line: "12 of 1,024 elements wrong (1.2%); ..."
  std::string summary() const;
  // Several lines: the summary, the first mismatches and, for 2-D data, the wrong rows and columns.
  std::string report() const;
};

// How an element is printed in a report.
std::string show_value(float v);
std::string show_value(char v);
std::string show_value(std::int32_t v);
std::string show_value(std::uint32_t v);

// "0-31, 64-95, 100" for a sorted list of indices; long lists end with "…".
std::string describe_ranges(const std::vector<std::size_t>& sorted, std::size_t max_ranges = 6);

namespace detail {
Comparison finish(Comparison c, const std::vector<std::size_t>& wrong_indices);
}

// Compares bit for bit (so NaN and -0.0 count as values); `cols` > 0 marks row-major 2-D data.
template <typename T>
Comparison compare_exact(std::span<const T> expected, std::span<const T> got, std::size_t cols = 0,
                         std::size_t max_listed = 8) {
  Comparison c;
  c.total = expected.size();
  if (cols > 0) {
    c.cols = cols;
    c.rows = expected.size() / cols;
  }
  unsigned char poison[sizeof(T)];
  std::memset(poison, kPoisonByte, sizeof poison);
  std::vector<std::size_t> wrong;
  const std::size_t n = std::min(expected.size(), got.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (std::memcmp(&expected[i], &got[i], sizeof(T)) == 0) continue;
    wrong.push_back(i);
    if (std::memcmp(&got[i], poison, sizeof(T)) == 0) ++c.untouched;
    if (c.first.size() < max_listed) c.first.push_back({i, show_value(expected[i]), show_value(got[i]), {}});
  }
  for (std::size_t i = n; i < expected.size(); ++i) wrong.push_back(i);
  return detail::finish(std::move(c), wrong);
}

// Compares float results with exact values within a per-element error bound: an element is wrong
// when |got - expected| > bound (NaN and infinity are always wrong). `cols` > 0 marks 2-D data.
Comparison compare_within(std::span<const double> expected, std::span<const double> bound, std::span<const float> got,
                          std::size_t cols = 0, std::size_t max_listed = 8);

}  // namespace gpulab
