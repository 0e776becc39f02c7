#include "baselines_cuda.hpp"

#include <algorithm>

#include <cub/device/device_histogram.cuh>

#include "gpulab/student/cuda.hpp"

namespace gpulab::labs::histogram_cuda {

namespace {
// 257 levels, lower 0 and upper 256: bin b holds the bytes b <= x < b + 1, that is x == b.
constexpr int kLevels = 257, kLower = 0, kUpper = 256;

constexpr int kBins = 256, kThreads = 256, kLanes = 32;

__device__ void count_word(unsigned* lane_bins, unsigned word) {
  for (int k = 0; k < 4; ++k) atomicAdd(&lane_bins[((word >> (8 * k)) & 0xFFu) * kLanes], 1u);
}

__device__ void count_vector(unsigned* lane_bins, uint4 v) {
  count_word(lane_bins, v.x);
  count_word(lane_bins, v.y);
  count_word(lane_bins, v.z);
  count_word(lane_bins, v.w);
}

// Bin b of lane l at bins[b][l]: all of a lane's counters in bank l. Grid-stride over uint4 vectors,
// two loads issued before either is counted, the tail byte by byte; the 32 copies of each bin are
// summed once, starting at copy b % 32, and added to the global bin.
__global__ void staff_histogram_kernel(const unsigned char* __restrict__ bytes, unsigned* bins, int n) {
  __shared__ unsigned lane_bins[kBins][kLanes];
  for (int i = threadIdx.x; i < kBins * kLanes; i += blockDim.x) lane_bins[i / kLanes][i % kLanes] = 0;
  __syncthreads();
  unsigned* mine = &lane_bins[0][threadIdx.x % kLanes];
  const int stride = gridDim.x * blockDim.x, first = blockIdx.x * blockDim.x + threadIdx.x;
  const int vectors = n / 16;
  const uint4* as_vectors = reinterpret_cast<const uint4*>(bytes);
  int v = first;
  for (; v + stride < vectors; v += 2 * stride) {
    const uint4 a = as_vectors[v], b = as_vectors[v + stride];
    count_vector(mine, a);
    count_vector(mine, b);
  }
  if (v < vectors) count_vector(mine, as_vectors[v]);
  for (int i = vectors * 16 + first; i < n; i += stride) atomicAdd(&mine[bytes[i] * kLanes], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < kBins; b += blockDim.x) {
    unsigned count = 0;
    for (int l = 0; l < kLanes; ++l) count += lane_bins[b][(b + l) % kLanes];
    if (count > 0) atomicAdd(&bins[b], count);
  }
}

}  // namespace

void staff_histogram(const unsigned char* bytes, unsigned* bins, int n) {
  check(cudaMemset(bins, 0, kBins * sizeof(unsigned)), "zeroing the bins of the harness's histogram");
  int device = 0, sms = 0, per_sm = 0;
  check(cudaGetDevice(&device), "asking for the current device");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "asking for the SM count");
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, staff_histogram_kernel, kThreads, 0),
        "asking how many blocks of the harness's histogram fit on an SM");
  const int wanted = blocks_for(blocks_for(n, 16), kThreads);
  const int blocks = std::max(1, std::min(wanted, sms * std::max(1, per_sm)));
  staff_histogram_kernel<<<blocks, kThreads>>>(bytes, bins, n);
  check(cudaGetLastError(), "launching the harness's histogram");
}

struct VendorHistogram::Scratch {
  void* temp = nullptr;
  size_t temp_bytes = 0;
};

VendorHistogram::VendorHistogram(int capacity) : scratch_(std::make_unique<Scratch>()) {
  check(cub::DeviceHistogram::HistogramEven(nullptr, scratch_->temp_bytes, static_cast<const unsigned char*>(nullptr),
                                            static_cast<unsigned*>(nullptr), kLevels, kLower, kUpper, capacity),
        "sizing CUB's histogram scratch memory");
  check(cudaMalloc(&scratch_->temp, scratch_->temp_bytes), "allocating CUB's histogram scratch memory");
}

VendorHistogram::~VendorHistogram() { cudaFree(scratch_->temp); }

void VendorHistogram::count(const unsigned char* bytes, unsigned* bins, int n) {
  size_t temp_bytes = scratch_->temp_bytes;
  check(cub::DeviceHistogram::HistogramEven(scratch_->temp, temp_bytes, bytes, bins, kLevels, kLower, kUpper, n),
        "running CUB's HistogramEven");
}

}  // namespace gpulab::labs::histogram_cuda
