// The CPU reference of lab 06-scan: what the grader checks student results against, and the CPU
// versions a GPU scan's speed is compared with. Sums wrap modulo 2^32: unsigned arithmetic is exact
// there (and has the bits two's complement int would have), so any 32-bit input has one right answer.
#pragma once
#include <cstdint>
#include <span>
#include <string>

namespace gpulab::reference {

// out[i] = in[0] + ... + in[i] (mod 2^32), on one core. `out` may be `in`.
void inclusive_scan_one_core(std::span<const std::uint32_t> in, std::span<std::uint32_t> out);
// The same on every core: each core sums its part, the part sums are scanned, then each core scans
// its part from its offset. `out` may be `in`.
void inclusive_scan_all_cores(std::span<const std::uint32_t> in, std::span<std::uint32_t> out);

// Where a wrong scan first goes wrong and what the mistake looks like (an element not added, a block
// offset missing, the scan exclusive instead of inclusive), from the first wrong index `first` of
// `got`; for the mismatch report.
std::string scan_hint(std::span<const std::uint32_t> in, std::span<const std::uint32_t> expected,
                      std::span<const std::uint32_t> got, std::size_t first);

}  // namespace gpulab::reference
