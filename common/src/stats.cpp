#include "gpulab/stats.hpp"

#include <algorithm>
#include <stdexcept>

namespace gpulab {

TimingSummary summarize(std::vector<double> samples) {
  if (samples.empty()) throw std::invalid_argument("summarize: no timing samples");
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  TimingSummary s;
  s.samples = static_cast<int>(n);
  s.min = samples.front();
  s.max = samples.back();
  s.median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  return s;
}

double relative_spread(std::vector<double> samples) {
  if (samples.size() < 4) return 0;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  const double median = summarize(samples).median;
  if (median <= 0) return 0;
  return (samples[(3 * n) / 4] - samples[n / 4]) / median;
}

}  // namespace gpulab
