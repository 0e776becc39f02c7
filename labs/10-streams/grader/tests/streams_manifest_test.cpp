// The streams lab's manifest: the one lab whose lesson is the host-device copies.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "gpulab/manifest.hpp"

using namespace gpulab;

namespace {
Manifest streams_manifest() { return load_manifest(std::filesystem::path(GPULAB_REPO) / "labs/10-streams/lab.toml"); }
bool has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}
}  // namespace

TEST_CASE("the streams lab allows the copies, streams and queues of its lesson and refuses libraries that compute") {
  const Manifest m = streams_manifest();
  for (const char* call : {"cudaMemcpy", "cudaMemcpyAsync", "cudaStreamCreate", "cudaStreamSynchronize",
                           "clEnqueueReadBuffer", "clCreateCommandQueue", "clReleaseCommandQueue"})
    CHECK_MESSAGE(has(m.allow, call), call);
  for (const char* call : {"cudaMallocHost", "cudaHostAlloc", "cudaHostRegister", "clEnqueueMapBuffer"})
    CHECK_MESSAGE(!has(m.allow, call), call << ": page-locked memory is the grader's to hand out");
  for (const char* library : {"thrust", "cub::", "cublas"}) CHECK(has(m.forbidden, library));
}

TEST_CASE("only the overlap task of the streams lab has a speed bound, on GPUs alone") {
  const Manifest m = streams_manifest();
  REQUIRE(m.find_task("overlap"));
  REQUIRE(m.find_task("overlap")->threshold);
  CHECK(m.find_task("overlap")->threshold->metric == "library_fraction");
  CHECK(m.find_task("overlap")->threshold->bound("cuda", DeviceClass::gpu).value_or(0) >= 0.5);
  CHECK(!m.find_task("overlap")->threshold->bound("opencl", DeviceClass::cpu));
  CHECK(!m.find_task("serial")->threshold);
  CHECK(!m.find_task("pinned")->threshold);
}

TEST_CASE(
    "the streams lab's cases cover one element, less than a chunk, a chunk and one more, and 512 MiB timed on a GPU") {
  const Manifest m = streams_manifest();
  constexpr std::int64_t chunk = std::int64_t{1} << 22;
  bool one = false, below_chunk = false, chunk_and_one = false, gpu_timing_512mib = false;
  for (const auto& c : m.cases) {
    const auto n = c.params.at("n").get<std::int64_t>();
    one |= n == 1;
    below_chunk |= n == chunk - 1;
    chunk_and_one |= n == chunk + 1;
    gpu_timing_512mib |= c.timing && c.runs_on(DeviceClass::gpu) && n * 4 == (std::int64_t{512} << 20);
  }
  CHECK(one);
  CHECK(below_chunk);
  CHECK(chunk_and_one);
  CHECK(gpu_timing_512mib);
}
