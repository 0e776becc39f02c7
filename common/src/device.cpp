// What every backend's device shares: how a launch's time is counted, and the FP32 peak estimate.
#include "gpulab/device.hpp"

namespace gpulab {

double LaunchTiming::counted_ms() const {
  // The host clock also holds the launch and synchronisation overhead (tens of microseconds), so
  // it only replaces the event time when it is clearly longer: then work ran outside the events.
  return wall_ms > device_ms * 1.25 + 0.05 ? wall_ms : device_ms;
}

std::optional<int> nvidia_fp32_lanes(int major, int minor) {
  if (major == 7 || (major == 8 && minor == 0)) return 64;  // Volta, Turing, A100
  if (major >= 8 && major <= 12) return 128;                // GA10x, Ada, Hopper, Blackwell
  return std::nullopt;
}

std::optional<double> nvidia_peak_gflops(int major, int minor, int multiprocessors, double clock_mhz) {
  const auto lanes = nvidia_fp32_lanes(major, minor);
  if (!lanes || multiprocessors <= 0 || clock_mhz <= 0) return std::nullopt;
  return 2.0 * *lanes * multiprocessors * clock_mhz * 1e-3;
}

}  // namespace gpulab
