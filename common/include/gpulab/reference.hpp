// CPU reference implementations of every lab: what the grader checks student results against.
#pragma once
#include <cstddef>
#include <span>
#include <vector>

namespace gpulab::reference {

// 00-hello: result[i] = text[i] + offsets[i].
std::vector<char> hello(std::span<const char> text, std::span<const int> offsets);

// 02-transpose: `in` is rows x cols, row-major; returns the cols x rows transpose.
// Cache-blocked, so the 8192 x 8192 timing case is checked in a fraction of a second.
std::vector<float> transpose(std::span<const float> in, std::size_t rows, std::size_t cols);

}  // namespace gpulab::reference
