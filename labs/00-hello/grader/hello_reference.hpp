// The CPU reference of lab 00-hello: what the grader checks student results against.
#pragma once
#include <span>
#include <vector>

namespace gpulab::reference {

// 00-hello: result[i] = text[i] + offsets[i].
std::vector<char> hello(std::span<const char> text, std::span<const int> offsets);

}  // namespace gpulab::reference
