#include <algorithm>
#include <stdexcept>

#include "gpulab/reference.hpp"

namespace gpulab::reference {

std::vector<float> transpose(std::span<const float> in, std::size_t rows, std::size_t cols) {
  if (in.size() != rows * cols) throw std::invalid_argument("transpose: input size is not rows * cols");
  std::vector<float> out(in.size());
  constexpr std::size_t tile = 32;  // a tile of each matrix stays in L1 while it is read and written
  for (std::size_t r0 = 0; r0 < rows; r0 += tile)
    for (std::size_t c0 = 0; c0 < cols; c0 += tile)
      for (std::size_t r = r0; r < std::min(rows, r0 + tile); ++r)
        for (std::size_t c = c0; c < std::min(cols, c0 + tile); ++c) out[c * rows + r] = in[r * cols + c];
  return out;
}

}  // namespace gpulab::reference
