#include "gpulab/word_transform.hpp"

#include <cstring>

namespace gpulab {

void WordTransform::apply(void* data, std::size_t bytes) const {
  if (identity()) return;
  auto* p = static_cast<unsigned char*>(data);
  for (std::size_t at = 0; at + 4 <= bytes; at += 4) {
    std::uint32_t word;
    std::memcpy(&word, p + at, 4);
    word = (*this)(word);
    std::memcpy(p + at, &word, 4);
  }
}

}  // namespace gpulab
