// Lab histogram's CPU reference: the counts on one core and on all cores, and the bins of XORed bytes.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "gpulab/random.hpp"
#include "histogram_reference.hpp"

using namespace gpulab;

namespace {

reference::Bins counted_one_by_one(const std::vector<std::uint8_t>& bytes) {
  reference::Bins bins{};
  for (std::uint8_t b : bytes) ++bins[b];
  return bins;
}

}  // namespace

TEST_CASE("both CPU histograms count every byte once, whatever the length and however equal the bytes") {
  for (std::size_t n : {0u, 1u, 3u, 4u, 5u, 255u, 4097u, 1000003u}) {
    for (std::int64_t largest : {0, 3, 255}) {  // one repeated byte, few values, every value
      CAPTURE(n);
      CAPTURE(largest);
      Rng rng(n * 7 + static_cast<std::size_t>(largest));
      std::vector<std::uint8_t> bytes(n);
      for (auto& b : bytes) b = static_cast<std::uint8_t>(rng.integer(0, largest));
      const reference::Bins expected = counted_one_by_one(bytes);
      CHECK(reference::histogram_one_core(bytes) == expected);
      CHECK(reference::histogram_all_cores(bytes) == expected);
    }
  }
}

TEST_CASE("the histogram of bytes XORed with a mask is the histogram with bin b moved to b ^ mask") {
  Rng rng(11);
  std::vector<std::uint8_t> bytes(10000), masked(bytes.size());
  for (auto& b : bytes) b = static_cast<std::uint8_t>(rng.integer(0, 40));  // most bins empty
  for (int mask : {0, 1, 0x5a, 255}) {
    CAPTURE(mask);
    for (std::size_t i = 0; i < bytes.size(); ++i) masked[i] = static_cast<std::uint8_t>(bytes[i] ^ mask);
    CHECK(reference::xored(counted_one_by_one(bytes), static_cast<std::uint8_t>(mask)) == counted_one_by_one(masked));
  }
}
