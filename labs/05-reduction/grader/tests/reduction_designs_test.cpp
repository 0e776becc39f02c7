// The reduction's tolerance against the designs it must accept and the shortcuts it must refuse: the
// lab's kernels, simulated on the CPU in float in the order of their additions, on the balanced inputs
// the timing case draws, and the same kernels on inputs or with sums kept in fewer bits.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "gpulab/random.hpp"
#include "reduction_reference.hpp"

using namespace gpulab;

namespace {

// What happens to the result of every addition inside a thread: nothing (a float), or a rounding to
// fewer bits (a half accumulator).
using Keep = std::function<float(float)>;
float as_float(float x) { return x; }

// Round to nearest even with `bits` mantissa bits (half: 10, bfloat16: 7); truncate to `bits`.
float rounded(float x, int bits) {
  std::uint32_t b = std::bit_cast<std::uint32_t>(x);
  const int drop = 23 - bits;
  const std::uint32_t half = 1u << (drop - 1), low = b & ((1u << drop) - 1);
  b &= ~((1u << drop) - 1);
  if (low > half || (low == half && ((b >> drop) & 1u))) b += 1u << drop;
  return std::bit_cast<float>(b);
}
float truncated(float x, int bits) {
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(x) & ~((1u << (23 - bits)) - 1));
}

// Block sums added one after another in an order the hardware picks (atomics).
float atomic_total(std::vector<float> sums, std::uint64_t seed) {
  std::shuffle(sums.begin(), sums.end(), std::mt19937_64(seed));
  float total = 0;
  for (float s : sums) total += s;
  return total;
}

// The tree task: blocks of 256 threads add two elements each while loading, then a shared-memory tree;
// one launch per level.
float tree(std::vector<float> level, const Keep& keep = as_float) {
  for (;;) {
    const std::size_t blocks = (level.size() + 511) / 512;
    std::vector<float> sums(blocks);
    for (std::size_t b = 0; b < blocks; ++b) {
      float partial[256];
      for (std::size_t t = 0; t < 256; ++t) {
        const std::size_t i = b * 512 + t;
        partial[t] = i < level.size() ? level[i] : 0.0f;
        if (i + 256 < level.size()) partial[t] = keep(partial[t] + level[i + 256]);
      }
      for (std::size_t stride = 128; stride > 0; stride /= 2)
        for (std::size_t t = 0; t < stride; ++t) partial[t] = keep(partial[t] + partial[t + stride]);
      sums[b] = partial[0];
    }
    if (blocks == 1) return sums[0];
    level = std::move(sums);
  }
}

// A warp's shuffle tree (offsets 16 to 1), lane 0's result.
float warp_sum(float* lanes) {
  for (int offset = 16; offset > 0; offset /= 2)
    for (int i = 0; i < offset; ++i) lanes[i] += lanes[i + offset];
  return lanes[0];
}

// CUDA's fast kernel: a grid of `blocks` x 256 threads strides over float4 vectors, each adding
// (x + y) + (z + w) to its sum, then the tail, warp shuffles, the block's warps, one atomic per block.
float cuda_fast(const std::vector<float>& in, std::size_t blocks, const Keep& keep = as_float) {
  const std::size_t threads = blocks * 256, vectors = in.size() / 4;
  std::vector<float> thread_sums(threads), block_sums(blocks);
  for (std::size_t t = 0; t < threads; ++t) {
    float sum = 0;
    for (std::size_t v = t; v < vectors; v += threads) {
      const float* x = &in[4 * v];
      sum = keep(sum + keep(keep(x[0] + x[1]) + keep(x[2] + x[3])));
    }
    for (std::size_t i = 4 * vectors + t; i < in.size(); i += threads) sum = keep(sum + in[i]);
    thread_sums[t] = sum;
  }
  for (std::size_t b = 0; b < blocks; ++b) {
    float warps[32] = {};
    for (std::size_t w = 0; w < 8; ++w) warps[w] = warp_sum(&thread_sums[b * 256 + w * 32]);
    block_sums[b] = warp_sum(warps);
  }
  return atomic_total(block_sums, blocks);
}

// OpenCL's fast kernel: `groups` x 256 work-items, float4 sums four vectors at a time, a local tree,
// one compare-and-swap addition per group.
float opencl_fast(const std::vector<float>& in, std::size_t groups, const Keep& keep = as_float) {
  const std::size_t stride = groups * 256, vectors = in.size() / 4;
  std::vector<float> group_sums(groups);
  for (std::size_t g = 0; g < groups; ++g) {
    float partial[256];
    for (std::size_t t = 0; t < 256; ++t) {
      float lane[4] = {};
      std::size_t v = g * 256 + t;
      const auto at = [&](std::size_t vector, int c) { return in[4 * vector + c]; };
      for (; v + 3 * stride < vectors; v += 4 * stride)
        for (int c = 0; c < 4; ++c)
          lane[c] = keep(
              lane[c] + keep(keep(at(v, c) + at(v + stride, c)) + keep(at(v + 2 * stride, c) + at(v + 3 * stride, c))));
      for (; v < vectors; v += stride)
        for (int c = 0; c < 4; ++c) lane[c] = keep(lane[c] + at(v, c));
      float sum = (lane[0] + lane[1]) + (lane[2] + lane[3]);
      for (std::size_t i = 4 * vectors + g * 256 + t; i < in.size(); i += stride) sum = keep(sum + in[i]);
      partial[t] = sum;
    }
    for (std::size_t width = 128; width > 0; width /= 2)
      for (std::size_t t = 0; t < width; ++t) partial[t] += partial[t + width];
    group_sums[g] = partial[0];
  }
  return atomic_total(group_sums, groups + 1);
}

// The contract's limits: every thread a running sum of kMaxSerialElements elements (grid-stride), and
// the thread sums added one after another.
float longest_chains(const std::vector<float>& in) {
  const auto threads = std::max<std::size_t>(1, in.size() / reference::kMaxSerialElements);
  std::vector<float> sums(threads);
  for (std::size_t t = 0; t < threads; ++t)
    for (std::size_t i = t; i < in.size(); i += threads) sums[t] += in[i];
  return atomic_total(sums, threads);
}

// The weaker tree: pairs in global memory, one launch per level.
float pairs_in_global_memory(std::vector<float> a) {
  for (std::size_t count = a.size(); count > 1;) {
    const std::size_t width = (count + 1) / 2;
    for (std::size_t i = 0; i < width; ++i) a[i] = a[i] + (i + width < count ? a[i + width] : 0.0f);
    count = width;
  }
  return a[0];
}

std::vector<float> each(const std::vector<float>& in, float (*f)(float, int), int bits) {
  std::vector<float> out(in.size());
  std::transform(in.begin(), in.end(), out.begin(), [&](float x) { return f(x, bits); });
  return out;
}

}  // namespace

TEST_CASE(
    "on balanced inputs the lab's designs stay well inside the tolerance, and sums of inputs or in accumulators "
    "of fewer bits fall far outside it") {
  // 2^20 + 3: a tail past the last float4, a partial last block.
  for (const std::uint64_t seed : {1u, 2u, 3u}) {
    CAPTURE(seed);
    Rng rng(seed);
    std::vector<float> in((std::size_t{1} << 20) + 3);
    for (auto& x : in) x = reference::balanced_element(rng.next());
    const reference::ExactSum exact = reference::exact_sum(reference::count_mantissa_bits(in));
    const double tolerance = reference::sum_tolerance(exact, reference::Inputs::balanced);
    auto error = [&](float got) { return std::fabs(static_cast<double>(got) - exact.sum); };
    REQUIRE(tolerance > 0);
    REQUIRE(tolerance < 0.1);  // a tenth of the smallest element

    // Correct designs: at most a third of the tolerance.
    CHECK(error(tree(in)) * 3 <= tolerance);
    CHECK(error(cuda_fast(in, 1056)) * 3 <= tolerance);
    CHECK(error(opencl_fast(in, 264)) * 3 <= tolerance);
    CHECK(error(opencl_fast(in, 4)) * 3 <= tolerance);  // PoCL: two groups per core
    CHECK(error(longest_chains(in)) * 3 <= tolerance);
    CHECK(error(pairs_in_global_memory(in)) * 3 <= tolerance);

    // Lower precision: at least three times the tolerance.
    CHECK(error(tree(each(in, rounded, 10))) >= 3 * tolerance);            // inputs in half
    CHECK(error(cuda_fast(each(in, rounded, 7), 1056)) >= 3 * tolerance);  // inputs in bfloat16
    CHECK(error(tree(each(in, truncated, 16))) >= 3 * tolerance);
    CHECK(error(cuda_fast(each(in, truncated, 16), 1056)) >= 3 * tolerance);
    CHECK(error(opencl_fast(each(in, truncated, 10), 264)) >= 3 * tolerance);
    const Keep half = [](float x) { return rounded(x, 10); };
    CHECK(error(opencl_fast(in, 4, half)) >= 3 * tolerance);  // every work-item's sums in half
    CHECK(error(cuda_fast(in, 66, half)) >= 3 * tolerance);
  }
}
