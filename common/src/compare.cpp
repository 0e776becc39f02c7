#include "gpulab/compare.hpp"

#include <fmt/format.h>

#include <cmath>

namespace gpulab {

std::string show_value(float v) {
  if (std::isnan(v)) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return bits == 0xFFFFFFFFu ? "poison (never written)" : "nan";
  }
  return fmt::format("{:.9g}", v);
}

std::string show_value(char v) {
  const auto byte = static_cast<unsigned char>(v);
  if (byte == kPoisonByte) return "poison (never written)";
  if (byte >= 0x20 && byte < 0x7f) return fmt::format("'{}' ({})", v, static_cast<int>(byte));
  return fmt::format("\\x{:02x}", byte);
}

std::string show_value(std::int32_t v) { return v == -1 ? "-1 (or poison)" : std::to_string(v); }
std::string show_value(std::uint32_t v) { return v == 0xFFFFFFFFu ? "4294967295 (or poison)" : std::to_string(v); }

std::string describe_ranges(const std::vector<std::size_t>& sorted, std::size_t max_ranges) {
  std::string out;
  std::size_t ranges = 0;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (ranges == max_ranges) return out + ", …";
    if (!out.empty()) out += ", ";
    out += i == j ? fmt::format("{}", sorted[i]) : fmt::format("{}-{}", sorted[i], sorted[j]);
    ++ranges;
    i = j + 1;
  }
  return out;
}

namespace detail {
Comparison finish(Comparison c, const std::vector<std::size_t>& wrong_indices) {
  c.wrong = wrong_indices.size();
  if (c.cols == 0 || c.wrong == 0) return c;
  std::vector<bool> row_wrong(c.rows), col_wrong(c.cols);
  for (std::size_t i : wrong_indices) {
    if (i / c.cols < c.rows) row_wrong[i / c.cols] = true;
    col_wrong[i % c.cols] = true;
  }
  for (std::size_t r = 0; r < c.rows; ++r)
    if (row_wrong[r]) c.wrong_rows.push_back(r);
  for (std::size_t k = 0; k < c.cols; ++k)
    if (col_wrong[k]) c.wrong_cols.push_back(k);
  return c;
}
}  // namespace detail

Comparison compare_within(std::span<const double> expected, std::span<const double> bound, std::span<const float> got,
                          std::size_t cols, std::size_t max_listed) {
  Comparison c;
  c.total = expected.size();
  if (cols > 0) {
    c.cols = cols;
    c.rows = expected.size() / cols;
  }
  std::vector<std::size_t> wrong;
  const std::size_t n = std::min(expected.size(), got.size());
  for (std::size_t i = 0; i < n; ++i) {
    const double error = std::fabs(static_cast<double>(got[i]) - expected[i]);
    if (error <= bound[i]) continue;  // false for NaN
    wrong.push_back(i);
    std::uint32_t bits;
    std::memcpy(&bits, &got[i], sizeof bits);
    if (bits == 0xFFFFFFFFu) ++c.untouched;
    if (c.first.size() < max_listed)
      c.first.push_back({i, fmt::format("{:.9g}", expected[i]), show_value(got[i]),
                         fmt::format("±{:.3g}, off by {:.3g}", bound[i], error)});
  }
  for (std::size_t i = n; i < expected.size(); ++i) wrong.push_back(i);
  return detail::finish(std::move(c), wrong);
}

std::string Comparison::summary() const {
  if (ok()) return fmt::format("all {} elements match", total);
  std::string s = fmt::format("{} of {} elements wrong ({:.1f}%)", wrong, total, 100.0 * wrong / total);
  if (untouched == wrong)
    s += "; none of them was written (they still hold the poison pattern): did the kernel run and store its results? "
         "If your code copies the results to the host, did it copy them back?";
  else if (untouched > 0)
    s += fmt::format("; {} of them were never written (still the poison pattern)", untouched);
  if (!note.empty()) s += "; " + note;
  return s;
}

std::string Comparison::report() const {
  std::string r = summary();
  if (ok()) return r;
  r += "\nfirst mismatches:";
  for (const auto& m : first) {
    if (cols > 0)
      r += fmt::format("\n  [row {}, col {}] expected {}, got {}", m.index / cols, m.index % cols, m.expected, m.got);
    else
      r += fmt::format("\n  [{}] expected {}, got {}", m.index, m.expected, m.got);
    if (!m.allowed.empty()) r += fmt::format(" (allowed {})", m.allowed);
  }
  if (cols > 0) {
    r += fmt::format("\nwrong rows: {} ({} of {})", describe_ranges(wrong_rows), wrong_rows.size(), rows);
    r += fmt::format("\nwrong columns: {} ({} of {})", describe_ranges(wrong_cols), wrong_cols.size(), cols);
  }
  return r;
}

}  // namespace gpulab
