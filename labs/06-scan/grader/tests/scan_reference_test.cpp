// Lab scan's CPU reference: both CPU scans and the hints of the mismatch report.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "gpulab/random.hpp"
#include "scan_reference.hpp"

using namespace gpulab;

namespace {
// The definition, one addition at a time.
std::vector<std::uint32_t> running_sums(const std::vector<std::uint32_t>& in) {
  std::vector<std::uint32_t> out(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) out[i] = (i ? out[i - 1] : 0u) + in[i];
  return out;
}
}  // namespace

TEST_CASE("both CPU scans give every prefix sum, wrapping modulo 2^32, for any length and in place") {
  for (std::size_t n : {0u, 1u, 2u, 3u, 1000u, 65537u, 1000003u}) {
    CAPTURE(n);
    Rng rng(n + 7);
    std::vector<std::uint32_t> in(n);
    for (auto& w : in) w = static_cast<std::uint32_t>(rng.next());  // the sums wrap many times
    const auto expected = running_sums(in);
    std::vector<std::uint32_t> one(n), all(n), in_place = in;
    reference::inclusive_scan_one_core(in, one);
    reference::inclusive_scan_all_cores(in, all);
    reference::inclusive_scan_all_cores(in_place, in_place);
    CHECK(one == expected);
    CHECK(all == expected);
    CHECK(in_place == expected);
  }
}

TEST_CASE("the mismatch hint tells an exclusive scan and a missing block offset apart") {
  const std::vector<std::uint32_t> in(3000, 1u);
  const auto expected = running_sums(in);
  auto exclusive = expected;
  for (std::size_t i = 0; i < exclusive.size(); ++i) exclusive[i] -= in[i];
  CHECK(reference::scan_hint(in, expected, exclusive, 0).find("inclusive") != std::string::npos);
  auto offset_missing = expected;
  for (std::size_t i = 1024; i < offset_missing.size(); ++i) offset_missing[i] -= 1000;
  const std::string hint = reference::scan_hint(in, expected, offset_missing, 1024);
  CHECK(hint.find("from index 1024") != std::string::npos);
  CHECK(hint.find("offset") != std::string::npos);
  auto one_wrong = expected;
  one_wrong[5] += 77;
  CHECK(reference::scan_hint(in, expected, one_wrong, 5).empty());
}
