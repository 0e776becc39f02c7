// The CPU reference of lab 07-histogram: what the grader checks student results against, and the
// CPU versions a GPU kernel's speed is compared with.
#pragma once
#include <array>
#include <cstdint>
#include <span>

namespace gpulab::reference {

// 07-histogram: 256 bins, bins[b] = how many of the bytes equal b.
using Bins = std::array<std::uint32_t, 256>;

// One pass over the bytes on one core.
Bins histogram_one_core(std::span<const std::uint8_t> bytes);
// The same on every core: each core counts a range of the bytes, then the partial bins are added.
Bins histogram_all_cores(std::span<const std::uint8_t> bytes);

// The histogram of the bytes with every byte XORed with `mask`: bins[b] moves to bins[b ^ mask].
// The grader's timed launches get their inputs XORed so; this is their expected output.
Bins xored(const Bins& bins, std::uint8_t mask);

}  // namespace gpulab::reference
