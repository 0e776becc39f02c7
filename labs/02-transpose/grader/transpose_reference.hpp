// The CPU reference of lab 02-transpose: what the grader checks student results against.
#pragma once
#include <cstddef>
#include <span>
#include <vector>

namespace gpulab::reference {

// 02-transpose: `in` is rows x cols, row-major; returns the cols x rows transpose.
// Cache-blocked, so the 8192 x 8192 timing case is checked in a fraction of a second.
std::vector<float> transpose(std::span<const float> in, std::size_t rows, std::size_t cols);

}  // namespace gpulab::reference
