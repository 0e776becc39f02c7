// What every backend's device shares: how a launch's time is counted, and the FP32 peak estimate.
#include "gpulab/device.hpp"

#include <fmt/format.h>
#include <algorithm>

namespace gpulab {

void Buffer::read_guards(std::vector<std::uint8_t>& front, std::vector<std::uint8_t>& back) {
  front.clear();
  back.clear();
}

namespace {
// The first and last damaged byte of a guard zone, if any.
std::optional<std::pair<std::size_t, std::size_t>> damaged_span(const std::vector<std::uint8_t>& zone) {
  std::size_t first = zone.size(), last = 0;
  for (std::size_t i = 0; i < zone.size(); ++i)
    if (zone[i] != kGuardByte) {
      first = std::min(first, i);
      last = i;
    }
  if (first == zone.size()) return std::nullopt;
  return std::pair{first, last};
}
}  // namespace

std::string describe_guard_damage(Buffer& buffer, const std::string& name, std::size_t element_bytes) {
  if (!buffer.guarded()) return {};
  std::vector<std::uint8_t> front, back;
  buffer.read_guards(front, back);
  const std::size_t e = std::max<std::size_t>(element_bytes, 1);
  const std::size_t n = buffer.size() / e;
  std::string out;
  if (const auto span = damaged_span(back)) {
    const std::size_t from = span->first / e, to = span->second / e;
    out = fmt::format(
        "wrote {} element{} past the end of {}, indices {}..{} (it has {}): check the bounds test of "
        "every thread",
        to - from + 1, to == from ? "" : "s", name, n + from, n + to, n);
  }
  if (const auto span = damaged_span(front)) {
    // Front offsets count back from the start: byte front.size()-1 is index -1.
    const std::size_t from = (front.size() - span->first + e - 1) / e, to = (front.size() - span->second + e - 1) / e;
    out += fmt::format(
        "{}wrote {} element{} before the start of {}, indices -{}..-{}: check index arithmetic that "
        "can go negative",
        out.empty() ? "" : "; ", from - to + 1, from == to ? "" : "s", name, from, to);
  }
  if (!out.empty()) buffer.reset_guards();
  return out;
}

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
