#include <doctest/doctest.h>

#include <stdexcept>

#include "gpulab/device.hpp"
#include "gpulab/stats.hpp"

using namespace gpulab;

TEST_CASE("the median of an odd sample is its middle value, whatever the order") {
  const auto s = summarize({5, 1, 9, 3, 7});
  CHECK(s.median == 5);
  CHECK(s.min == 1);
  CHECK(s.max == 9);
  CHECK(s.samples == 5);
}

TEST_CASE("the median of an even sample is the mean of the two middle values") {
  CHECK(summarize({4, 1, 3, 2}).median == doctest::Approx(2.5));
}

TEST_CASE("one slow outlier does not move the median") {
  CHECK(summarize({1, 1, 1, 1, 1, 1, 1, 1, 1, 100}).median == 1);
}

TEST_CASE("an empty sample is an error, not a zero time") { CHECK_THROWS_AS(summarize({}), std::invalid_argument); }

TEST_CASE("the spread of timing samples ignores a few outliers and sees a bimodal clock") {
  CHECK(relative_spread({1, 1, 1, 1, 1, 1, 1, 1, 50, 60}) == doctest::Approx(0));
  CHECK(relative_spread({1, 1, 1, 1, 2, 2, 2, 2}) > 0.5);
  CHECK(relative_spread({1, 2, 3}) == 0);  // too few to say
}

TEST_CASE("the device time counts unless the host clock shows work the events missed") {
  CHECK(LaunchTiming{1.0, 1.02}.counted_ms() == 1.0);    // launch overhead only
  CHECK(LaunchTiming{0.01, 0.04}.counted_ms() == 0.01);  // tiny kernels: overhead is not work
  CHECK(LaunchTiming{0.01, 2.0}.counted_ms() == 2.0);    // a kernel hidden on another stream
  CHECK(LaunchTiming{1.0, 1.5}.counted_ms() == 1.5);
}
