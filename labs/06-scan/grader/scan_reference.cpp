#include "scan_reference.hpp"

#include <fmt/format.h>

#include <thread>
#include <vector>

#include "gpulab/parallel.hpp"

namespace gpulab::reference {

void inclusive_scan_one_core(std::span<const std::uint32_t> in, std::span<std::uint32_t> out) {
  std::uint32_t running = 0;
  for (std::size_t i = 0; i < in.size(); ++i) out[i] = running += in[i];
}

void inclusive_scan_all_cores(std::span<const std::uint32_t> in, std::span<std::uint32_t> out) {
  const std::size_t n = in.size();
  // Below a few parts' worth of work a thread's start costs more than it saves.
  const std::size_t parts =
      std::min<std::size_t>(std::max(1u, std::thread::hardware_concurrency()), std::max<std::size_t>(1, n / 65536));
  if (parts == 1) return inclusive_scan_one_core(in, out);
  std::vector<std::uint32_t> offsets(parts + 1, 0);
  auto bounds = [&](std::size_t p) { return n * p / parts; };
  parallel_for(parts, [&](std::size_t p) {
    std::uint32_t sum = 0;
    for (std::size_t i = bounds(p); i < bounds(p + 1); ++i) sum += in[i];
    offsets[p + 1] = sum;
  });
  for (std::size_t p = 1; p <= parts; ++p) offsets[p] += offsets[p - 1];
  parallel_for(parts, [&](std::size_t p) {
    std::uint32_t running = offsets[p];
    for (std::size_t i = bounds(p); i < bounds(p + 1); ++i) out[i] = running += in[i];
  });
}

std::string scan_hint(std::span<const std::uint32_t> in, std::span<const std::uint32_t> expected,
                      std::span<const std::uint32_t> got, std::size_t first) {
  if (first >= got.size() || first >= expected.size()) return {};
  const std::uint32_t want = expected[first], have = got[first];
  if (have == want - in[first])
    return fmt::format(
        "at index {} the output lacks its own element in[{}]: the scan must be inclusive "
        "(out[i] = in[0] + ... + in[i])",
        first, first);
  // The same error from `first` on, by a constant: an offset of everything before it is missing or wrong.
  const std::uint32_t shift = have - want;
  std::size_t same_shift = 0;
  while (first + same_shift < got.size() && got[first + same_shift] - expected[first + same_shift] == shift &&
         same_shift < 4096)
    ++same_shift;
  if (first > 0 && same_shift > 1)
    return fmt::format(
        "from index {} on ({} elements looked at) the output is off by the same amount: the sum of what "
        "comes before index {} was not added, or added wrong (a block's offset?)",
        first, same_shift, first);
  return {};
}

}  // namespace gpulab::reference
