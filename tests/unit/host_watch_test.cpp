// The watch over the harness's host data (gpulab/host_watch.hpp), alone and in the runner: on a
// device whose kernels reach host memory (PoCL's CPU device), a planted kernel that forges its result
// by writing the harness's expected output through a host address it got as a ulong argument passes
// without the watch and is a buffer violation with it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "gpulab/backend/opencl.hpp"
#include "gpulab/host_watch.hpp"
#include "lab_driver.hpp"
#include "opencl_cpu.hpp"

using namespace gpulab;

TEST_CASE("the host watch reports nothing while its regions keep their contents") {
  std::vector<float> expected(1000, 1.5f), input(10, 2.0f);
  HostWatch watch;
  watch.take({{expected.data(), expected.size() * sizeof(float), "expected"}, {input.data(), 40, "input"}});
  CHECK(watch.changed().empty());
}

TEST_CASE("the host watch names each region of which one byte changed, and a region listed twice once") {
  std::vector<std::uint8_t> expected(512 << 10, 3), input(4096, 4);
  HostWatch watch;
  watch.take({{expected.data(), expected.size(), "the expected output"},
              {input.data(), input.size(), "the input"},
              {expected.data(), expected.size(), "the expected output again"}});
  expected[377'777] ^= 0x10;
  CHECK(watch.changed() == std::vector<std::string>{"the expected output"});
  input.back() = 0;
  CHECK(watch.changed() == std::vector<std::string>{"the expected output", "the input"});
  watch.take({{expected.data(), expected.size(), "the expected output"}});  // a small region: as it is now
  CHECK(watch.changed().empty());
}

TEST_CASE("the message of a host write names what changed and who can have written it") {
  const std::string m = describe_host_write({"the expected contents of output out"});
  CHECK(m.find("the expected contents of output out changed in host memory") == 0);
  CHECK(m.find("a kernel through a host address") != std::string::npos);
}

TEST_CASE("host memory access: the device's own answer first, then NVML's addressing mode") {
  DeviceInfo gpu;
  CHECK(host_memory_access(gpu, "").empty());
  CHECK(host_memory_access(gpu, "none").empty());
  CHECK(host_memory_access(gpu, "HMM").find("HMM") != std::string::npos);
  CHECK(host_memory_access(gpu, "ATS").find("ATS") != std::string::npos);
  gpu.host_memory_access = "CUDA pageable memory access (HMM)";
  CHECK(host_memory_access(gpu, "none") == "CUDA pageable memory access (HMM)");
}

namespace {

using testing::opencl_cpu_device;

// The planted student kernel: the right output (base + 0..words-1) without a host address; given one, it
// writes `value` everywhere instead, to its output and to the words at that address: the harness's
// expected output, so that the wrong result compares equal.
constexpr const char* kForgingKernel = R"(
__kernel void forge(__global uint* out, uint value, ulong host_address, uint words, uint base) {
  const size_t i = get_global_id(0);
  if (i >= words) return;
  out[i] = host_address != 0 ? value : (uint)i + base;
  if (host_address != 0) ((__global uint*)host_address)[i] = value;
}
)";

// A case of a made-up exact lab whose expected output is base + 0..n-1, run by the runner's execute()
// with the planted kernel as the student's launch; it writes the host address on launch `forge_on`
// (counted from 1; 0: never). A timing case has two sets, and a new base for each launch (load).
CaseResult run_forging_case(Device& device, bool watch_host_memory, bool timing, int forge_on) {
  constexpr cl_uint n = 4096;
  Manifest manifest;
  manifest.id = "99-planted";
  manifest.warmup = 1;
  manifest.repeats = 4;
  Case c;
  c.name = timing ? "timed" : "small";
  c.timing = timing;
  RunContext ctx{device, manifest, 1234};
  ctx.task = "forge";
  ctx.watch_host_memory = watch_host_memory;

  struct Set {
    std::unique_ptr<Buffer> out;
    cl_uint base = 0;
    std::vector<std::uint32_t> expected = std::vector<std::uint32_t>(n);
  };
  std::vector<Set> sets(timing ? 2 : 1);
  cl_uint next_base = 0;
  auto hold = [&](Set& set) {
    set.base = next_base;
    next_base += 1000;
    for (cl_uint i = 0; i < n; ++i) set.expected[i] = set.base + i;
  };
  for (Set& set : sets) {
    set.out = device.allocate_guarded(n * sizeof(std::uint32_t));
    hold(set);
  }
  std::vector<std::uint32_t> got(n);
  cl_kernel kernel = opencl::harness_kernel(device, kForgingKernel, "forge");
  const cl_command_queue queue = opencl::lab(device).queue();
  int launches = 0;
  Launchable l;
  l.sets = static_cast<int>(sets.size());
  l.load = [&](int i, int) { hold(sets[i]); };
  l.arguments = [&](int i) { return std::to_string(sets[i].base); };
  l.prepare = [&](int i) { sets[i].out->fill(kPoisonByte); };
  l.launch = [&](int i) {  // the student's host code: a device buffer, and the address it found
    const cl_ulong host = ++launches == forge_on ? reinterpret_cast<cl_ulong>(sets[i].expected.data()) : 0;
    set_args(kernel, opencl::memory(*sets[i].out), cl_uint{7}, host, n, sets[i].base);
    const std::size_t global = n;
    REQUIRE(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
  };
  l.check = [&](int i) {
    sets[i].out->download(got.data(), n * sizeof(std::uint32_t));
    return compare_exact<std::uint32_t>(sets[i].expected, got);
  };
  l.exact_outputs = [&](int i) { return std::vector<ExactOutput>{{sets[i].out.get(), sets[i].expected.data()}}; };
  l.watched = [&](int i) { return std::vector<Watched>{{sets[i].out.get(), "out", sizeof(std::uint32_t)}}; };
  l.work = n;
  return execute(ctx, c, l);
}

}  // namespace

TEST_CASE("a kernel that forges its result by writing the expected output through a host address is found") {
  const auto info = opencl_cpu_device();
  if (!info) {
    MESSAGE("skipped: no OpenCL CPU device (PoCL)");
    return;
  }
  const auto device = open_device("opencl", std::to_string(info->index));
  REQUIRE_FALSE(device->info().host_memory_access.empty());  // a CPU device reaches host memory

  // Without the watch the forgery works: the output is all 7s, and so is the "expected" output.
  const CaseResult unwatched = run_forging_case(*device, false, false, 1);
  CHECK(unwatched.passed);

  const CaseResult watched = run_forging_case(*device, true, false, 1);
  CHECK_FALSE(watched.passed);
  CHECK(watched.finding == "buffer_violation");
  CHECK(watched.message.find("case small: the expected contents of output out changed in host memory") == 0);

  // The same kernel without the host address computes the output, and the watch finds nothing.
  CHECK(run_forging_case(*device, true, false, 0).passed);
}

TEST_CASE("a host write on a warm-up or timed launch of a timing case is found too") {
  const auto info = opencl_cpu_device();
  if (!info) {
    MESSAGE("skipped: no OpenCL CPU device (PoCL)");
    return;
  }
  const auto device = open_device("opencl", std::to_string(info->index));
  CHECK(run_forging_case(*device, true, true, 0).passed);  // honest on every launch
  // Launch 1 is the case's fully checked first launch, 2 a warm-up, 3 and 4 warm-ups or timed
  // launches, 5 and 6 timed (1 to 3 warm-ups, at least 4 timed launches with this manifest): each
  // compares the forged output equal to the forged expected one, and the watch must find the write
  // on whichever launch made it.
  for (int forge_on : {1, 2, 3, 4, 5, 6}) {
    CAPTURE(forge_on);
    const CaseResult r = run_forging_case(*device, true, true, forge_on);
    CHECK_FALSE(r.passed);
    CHECK(r.finding == "buffer_violation");
    CHECK(r.message.find("changed in host memory") != std::string::npos);
  }
}

TEST_CASE("a large region is hashed in pieces, and a change in any piece changes its checksum") {
  std::vector<std::uint8_t> big(50u << 20, 9);  // pieces of 4 MiB on every core
  const std::uint64_t sum = host_checksum(big.data(), big.size());
  CHECK(host_checksum(big.data(), big.size()) == sum);
  for (std::size_t at : {std::size_t{0}, std::size_t{17} << 20, big.size() - 1}) {
    big[at] ^= 1;
    CHECK(host_checksum(big.data(), big.size()) != sum);
    big[at] ^= 1;
  }
}

TEST_CASE("between launches a large region keeps its checksum and a small one is taken afresh") {
  std::vector<std::uint8_t> reference(2u << 20, 1), patches(64, 2);
  HostWatch watch;
  watch.take({{reference.data(), reference.size(), "reference"}, {patches.data(), patches.size(), "patches"}});
  CHECK(watch.changed().empty());
  // The harness redraws its patches between launches: not a finding at the next launch.
  patches[3] = 7;
  watch.take({{reference.data(), reference.size(), "reference"}, {patches.data(), patches.size(), "patches"}});
  CHECK(watch.changed().empty());
  // A write into the reference between two launches (by student code: the harness leaves it alone)
  // is still found at the next one, against the checksum taken at the first.
  reference[12345] = 0;
  watch.take({{reference.data(), reference.size(), "reference"}, {patches.data(), patches.size(), "patches"}});
  CHECK(watch.changed() == std::vector<std::string>{"reference"});
}
