// The CPU reference of lab 03-bitonic: what the grader checks student results against, and the
// CPU versions a GPU kernel's speed is compared with.
#pragma once
#include <cstdint>
#include <span>

namespace gpulab::reference {

// 03-bitonic: Batcher's bitonic sorting network on one core, in the form the lab's kernels use:
// every compare-exchange puts the smaller key at the lower index, and the first step of each
// stage k pairs i with i ^ (k - 1) (the mirror), the others i with i ^ j. Positions past the end
// count as the largest key, so any length sorts. O(n log^2 n): for teaching and cross-checks.
void bitonic_sort(std::span<std::uint32_t> keys);
// The CPU sorts a GPU sort is compared with: std::sort on one core, and on all cores (chunks
// sorted in parallel, then merged pairwise in parallel).
void sort_one_core(std::span<std::uint32_t> keys);
void sort_all_cores(std::span<std::uint32_t> keys);

}  // namespace gpulab::reference
