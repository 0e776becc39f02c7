// The framework's rule for timing cases (grader/runner/execute.cpp, FreshLaunches): every warm-up
// and timed launch sees contents its input set did not hold at its previous launch. A driver that
// gives a timing case one set, no load, or a load that changes nothing a launch sees is stopped as
// the grader's failure (CaseResult::driver_fault); new contents or new arguments satisfy it.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpulab/backend/opencl.hpp"
#include "gpulab/results.hpp"
#include "lab_driver.hpp"
#include "opencl_cpu.hpp"

using namespace gpulab;

namespace {

constexpr const char* kAddOne = R"(
__kernel void add_one(__global const uint* in, __global uint* out, uint words, uint plus) {
  const size_t i = get_global_id(0);
  if (i < words) out[i] = in[i] + 1 + plus;
}
)";

// How the made-up driver's load treats a set: new input contents, a new argument only, or nothing.
enum class Load { contents, arguments, nothing, none };

// The made-up labs' manifest (one warm-up, up to ten timed launches) and case.
struct MadeUpLab {
  Manifest manifest;
  Case c;
  explicit MadeUpLab(bool timing) {
    manifest.id = "99-fresh";
    manifest.warmup = 1;
    manifest.repeats = 10;
    c.name = timing ? "timed" : "small";
    c.timing = timing;
  }
};

// A made-up lab (out = in + 1 + plus, exact) run by execute() on `device`, with `sets` input sets.
CaseResult run_case(Device& device, bool timing, int sets_count, Load load) {
  constexpr cl_uint n = 1 << 20;  // 4 MiB per buffer: the fingerprint samples chunks of it
  const MadeUpLab lab(timing);
  RunContext ctx{device, lab.manifest, 99};
  ctx.task = "add";
  ctx.watch_host_memory = true;  // as the runner sets it for PoCL, whose kernels reach host memory
  struct Set {
    std::unique_ptr<Buffer> in, out;
    std::vector<std::uint32_t> input = std::vector<std::uint32_t>(n), expected = std::vector<std::uint32_t>(n);
    cl_uint plus = 0;
  };
  std::vector<Set> sets(sets_count);
  std::uint32_t generation = 0;
  auto fill = [&](Set& set, bool new_contents, bool new_argument) {
    generation += 1;
    if (new_contents)
      for (cl_uint i = 0; i < n; ++i) set.input[i] = i * 2654435761u + generation;
    if (new_argument) set.plus = generation;
    for (cl_uint i = 0; i < n; ++i) set.expected[i] = set.input[i] + 1 + set.plus;
    set.in->upload(set.input.data(), n * sizeof(std::uint32_t));
  };
  for (Set& set : sets) {
    set.in = device.allocate_guarded(n * sizeof(std::uint32_t));
    set.out = device.allocate_guarded(n * sizeof(std::uint32_t));
    fill(set, true, false);
  }
  std::vector<std::uint32_t> got(n);
  cl_kernel kernel = opencl::harness_kernel(device, kAddOne, "add_one");
  const cl_command_queue queue = opencl::lab(device).queue();
  Launchable l;
  l.sets = sets_count;
  if (load != Load::none)
    l.load = [&, load](int i, int) {
      if (load != Load::nothing) fill(sets[i], load == Load::contents, load == Load::arguments);
    };
  if (load == Load::arguments) l.arguments = [&](int i) { return std::to_string(sets[i].plus); };
  l.prepare = [&](int i) { sets[i].out->fill(kPoisonByte); };
  l.launch = [&](int i) {
    set_args(kernel, opencl::memory(*sets[i].in), opencl::memory(*sets[i].out), n, sets[i].plus);
    const std::size_t global = n;
    REQUIRE(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
  };
  l.check = [&](int i) {
    sets[i].out->download(got.data(), n * sizeof(std::uint32_t));
    return compare_exact<std::uint32_t>(sets[i].expected, got);
  };
  l.watched = [&](int i) {
    return std::vector<Watched>{{sets[i].in.get(), "in", 4, sets[i].input.data()}, {sets[i].out.get(), "out", 4}};
  };
  l.work = 8.0 * n;
  return execute(ctx, lab.c, l);
}

}  // namespace

TEST_CASE("a timing case whose every launch gets new contents or new arguments runs and passes") {
  const auto device = testing::open_opencl_cpu_device();
  if (!device) {
    MESSAGE("skipped: no OpenCL CPU device (PoCL)");
    return;
  }
  const CaseResult contents = run_case(*device, true, 3, Load::contents);
  CHECK(contents.driver_fault == "");
  CHECK(contents.passed);
  CHECK(contents.timing.has_value());
  const CaseResult arguments = run_case(*device, true, 3, Load::arguments);
  CHECK(arguments.driver_fault == "");
  CHECK(arguments.passed);
}

TEST_CASE("a driver whose load gives a timing case's set what it held at its previous launch is the grader's fault") {
  const auto device = testing::open_opencl_cpu_device();
  if (!device) {
    MESSAGE("skipped: no OpenCL CPU device (PoCL)");
    return;
  }
  const CaseResult r = run_case(*device, true, 3, Load::nothing);
  CHECK_FALSE(r.passed);
  CHECK(r.driver_fault.find("of timing case 'timed' the contents and arguments it held at its previous launch") !=
        std::string::npos);
  CHECK(r.driver_fault.find("Launchable::load must change what the set's launch sees") != std::string::npos);
  CHECK(r.message == "");  // nothing is said of the student's code
}

TEST_CASE("a timing case with one input set or no load is refused before any launch, and other cases need neither") {
  const auto device = testing::open_opencl_cpu_device();
  if (!device) {
    MESSAGE("skipped: no OpenCL CPU device (PoCL)");
    return;
  }
  const CaseResult one = run_case(*device, true, 1, Load::none);
  CHECK(one.driver_fault.find("gives timing case 'timed' 1 input set and no load: a timing case needs several") !=
        std::string::npos);
  const CaseResult unloaded = run_case(*device, true, 3, Load::none);
  CHECK(unloaded.driver_fault.find("3 input sets and no load") != std::string::npos);
  const CaseResult small = run_case(*device, false, 1, Load::none);
  CHECK(small.driver_fault == "");
  CHECK(small.passed);
}

namespace {

constexpr const char* kAddOneInPlace = R"(
__kernel void add_one_in_place(__global uint* data, uint words) {
  const size_t i = get_global_id(0);
  if (i < words) data[i] += 1;
}
)";

// A made-up in-place lab (data += 1, as a sort rewrites its keys): each set's buffer is rewritten
// before every launch from the input under the set's mask, which its load renews or, with
// `new_masks` false, keeps.
CaseResult run_in_place_case(Device& device, bool new_masks) {
  constexpr cl_uint n = 1 << 20;
  const MadeUpLab lab(true);
  RunContext ctx{device, lab.manifest, 99};
  ctx.task = "add";
  std::vector<std::uint32_t> input(n), got(n);
  for (cl_uint i = 0; i < n; ++i) input[i] = i * 2654435761u;
  struct Set {
    std::unique_ptr<Buffer> data;
    WordTransform mask;
  };
  std::vector<Set> sets(3);
  std::uint32_t next_mask = 1;
  for (Set& set : sets) set = {device.allocate_guarded(n * sizeof(std::uint32_t)), WordTransform{next_mask += 2}};
  cl_kernel kernel = opencl::harness_kernel(device, kAddOneInPlace, "add_one_in_place");
  Launchable l;
  l.sets = 3;
  l.load = [&](int i, int) {
    if (new_masks) sets[i].mask = WordTransform{next_mask += 2};
  };
  l.prepare = [&](int i) {
    std::vector<std::uint32_t> masked = input;
    sets[i].mask.apply(masked.data(), masked.size() * sizeof(std::uint32_t));
    sets[i].data->upload(masked.data(), masked.size() * sizeof(std::uint32_t));
  };
  l.launch = [&](int i) {
    set_args(kernel, opencl::memory(*sets[i].data), n);
    const std::size_t global = n;
    REQUIRE(clEnqueueNDRangeKernel(opencl::lab(device).queue(), kernel, 1, nullptr, &global, nullptr, 0, nullptr,
                                   nullptr) == CL_SUCCESS);
  };
  l.check = [&](int i) {
    sets[i].data->download(got.data(), n * sizeof(std::uint32_t));
    std::vector<std::uint32_t> want(n);
    for (cl_uint k = 0; k < n; ++k) want[k] = sets[i].mask(input[k]) + 1;
    return compare_exact<std::uint32_t>(want, got);
  };
  l.watched = [&](int i) {
    return std::vector<Watched>{{.buffer = sets[i].data.get(),
                                 .name = "data",
                                 .element_bytes = 4,
                                 .original = input.data(),
                                 .transform = sets[i].mask,
                                 .in_place = true}};
  };
  l.work = 8.0 * n;
  return execute(ctx, lab.c, l);
}

}  // namespace

TEST_CASE("an in-place buffer is not an input the launch changed, and its declared contents must be new each launch") {
  const auto device = testing::open_opencl_cpu_device();
  if (!device) {
    MESSAGE("skipped: no OpenCL CPU device (PoCL)");
    return;
  }
  const CaseResult fresh = run_in_place_case(*device, true);
  CHECK(fresh.driver_fault == "");
  CHECK(fresh.message == "");
  CHECK(fresh.passed);
  const CaseResult stale = run_in_place_case(*device, false);
  CHECK_FALSE(stale.passed);
  CHECK(stale.driver_fault.find("the contents and arguments it held at its previous launch") != std::string::npos);
  CHECK(stale.message == "");
}

TEST_CASE("the framework's masks never repeat a set's current one, even in a family of two, and need a bit to vary") {
  const auto device = testing::open_opencl_cpu_device();
  if (!device) {
    MESSAGE("skipped: no OpenCL CPU device (PoCL)");
    return;
  }
  const MadeUpLab lab(true);
  const RunContext ctx{*device, lab.manifest, 99};
  Task task;
  task.name = "add";
  MaskDraws two(ctx, task, lab.c, {.may = 0x2u, .always = 0x1u});  // masks 1 and 3 only
  WordTransform current;                                           // the identity: what set 0 holds at first
  for (int i = 0; i < 200; ++i) {
    const WordTransform next = two.next_other(current);
    CHECK((next.xor_mask == 1u || next.xor_mask == 3u));
    CHECK(next.xor_mask != current.xor_mask);
    current = next;
  }
  // The same stream for the same run, task and case: a run can be reproduced.
  MaskDraws again(ctx, task, lab.c, {.may = 0x807F0000u});
  MaskDraws same(ctx, task, lab.c, {.may = 0x807F0000u});
  for (int i = 0; i < 10; ++i) CHECK(again.next().xor_mask == same.next().xor_mask);
  CHECK_THROWS_AS(MaskDraws(ctx, task, lab.c, {.may = 0x1u, .always = 0x1u}), std::logic_error);
}

// Where a case's host time goes (CaseResult's prepare_s, launches_s, checks_s): for instructors
// who look for the costly part of a lab's run in the JSON report.
TEST_CASE("a case's launches report their host seconds by prepares and loads, launches and checks, in the JSON too") {
  const auto device = testing::open_opencl_cpu_device();
  if (!device) {
    MESSAGE("skipped: no OpenCL CPU device (PoCL)");
    return;
  }
  for (const bool timing : {true, false}) {
    CAPTURE(timing);
    const CaseResult r = run_case(*device, timing, timing ? 3 : 1, timing ? Load::contents : Load::none);
    REQUIRE(r.passed);
    CHECK(r.prepare_s > 0);
    CHECK(r.launches_s > 0);
    CHECK(r.checks_s > 0);
    // Guards and inputs are checked after every launch, and PoCL's kernels reach host memory.
    CHECK(r.buffers_s > 0);
    CHECK(r.buffers_s < r.checks_s);
    CHECK(r.watch_s > 0);
    CHECK(r.watch_s < r.prepare_s + r.checks_s);
    CHECK((r.timed_s > 0) == timing);
    // The timed launches are part of what the buckets count, with the case's first launch.
    if (timing) CHECK(r.prepare_s + r.launches_s + r.checks_s >= 0.5 * r.timed_s);
    const nlohmann::json j = r;
    const auto back = j.get<CaseResult>();
    CHECK(back.prepare_s == r.prepare_s);
    CHECK(back.launches_s == r.launches_s);
    CHECK(back.checks_s == r.checks_s);
    CHECK(back.watch_s == r.watch_s);
    CHECK(back.buffers_s == r.buffers_s);
  }
}
