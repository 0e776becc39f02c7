#include <algorithm>
#include <stdexcept>

#include "gpulab/parallel.hpp"
#include "transpose_reference.hpp"

namespace gpulab::reference {

std::vector<float> transpose(std::span<const float> in, std::size_t rows, std::size_t cols) {
  if (in.size() != rows * cols) throw std::invalid_argument("transpose: input size is not rows * cols");
  std::vector<float> out(in.size());
  constexpr std::size_t tile = 32;  // a tile of each matrix stays in L1 while it is read and written
  auto transpose_bands = [&](std::size_t first_band, std::size_t last_band) {  // bands of `tile` input rows
    for (std::size_t r0 = first_band * tile; r0 < std::min(rows, last_band * tile); r0 += tile)
      for (std::size_t c0 = 0; c0 < cols; c0 += tile)
        for (std::size_t r = r0; r < std::min(rows, r0 + tile); ++r)
          for (std::size_t c = c0; c < std::min(cols, c0 + tile); ++c) out[c * rows + r] = in[r * cols + c];
  };
  const std::size_t bands = (rows + tile - 1) / tile;
  if (in.size() < (std::size_t{1} << 20))
    transpose_bands(0, bands);  // a thread's start would cost more
  else
    parallel_ranges(bands, transpose_bands);
  return out;
}

}  // namespace gpulab::reference
