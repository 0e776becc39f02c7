// A bijection on 4-byte words: the bytes of each word reordered, then its bits XORed with a mask.
// Timing gives each warm-up and timed launch inputs transformed anew (on the device, at copy speed:
// Device::copy_transformed), and checks apply the same transform to the expected output where the
// lab's work commutes with it (a transpose or a sort moves words; a per-channel filter moves
// bytes), so no result cached from an earlier launch is ever right again.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

namespace gpulab {

struct WordTransform {
  std::uint32_t xor_mask = 0;
  // Byte k of a result word (k = 0 the least significant) is byte byte_order[k] of the source word.
  std::array<std::uint8_t, 4> byte_order{0, 1, 2, 3};

  bool identity() const { return xor_mask == 0 && byte_order == std::array<std::uint8_t, 4>{0, 1, 2, 3}; }
  bool operator==(const WordTransform&) const = default;
  std::uint32_t operator()(std::uint32_t word) const {
    std::uint32_t out = 0;
    for (int k = 0; k < 4; ++k) out |= ((word >> (8 * byte_order[k])) & 0xFFu) << (8 * k);
    return out ^ xor_mask;
  }
  // The transform that undoes this one: inverse()(t(w)) == w.
  WordTransform inverse() const {
    WordTransform back;
    for (std::uint8_t k = 0; k < 4; ++k) back.byte_order[byte_order[k]] = k;
    back.xor_mask = WordTransform{0, back.byte_order}(xor_mask);
    return back;
  }
  // `byte_order` as CUDA's __byte_perm selector: nibble k selects result byte k.
  std::uint32_t selector() const {
    return byte_order[0] | byte_order[1] << 4 | byte_order[2] << 8 | static_cast<std::uint32_t>(byte_order[3]) << 12;
  }
  // Transforms the whole words of `bytes` bytes at `data`, in place (the words in host order).
  void apply(void* data, std::size_t bytes) const;
};

}  // namespace gpulab
