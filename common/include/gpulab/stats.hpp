// Summary statistics of timing samples.
#pragma once
#include <vector>

namespace gpulab {

struct TimingSummary {
  double median = 0, min = 0, max = 0;
  int samples = 0;
};

// Median, min and max; the median of an even count is the mean of the two middle samples.
// Throws std::invalid_argument for an empty sample.
TimingSummary summarize(std::vector<double> samples);

// How much the samples vary: the interquartile range over the median (0 for fewer than 4 samples
// or a zero median). A few outliers (a preempted launch) do not move it; a bimodal clock does.
double relative_spread(std::vector<double> samples);

}  // namespace gpulab
