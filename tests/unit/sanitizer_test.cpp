// The sanitizer gate's reading of compute-sanitizer logs. The logs in data/sanitizer/ are real: the
// tools' output on the H100 (compute-sanitizer 2025.3) for planted mistakes in the reference
// solutions (a one-thread-per-element kernel with `i <= n`, its offsets half copied; a tiled kernel
// without its barrier, and with the barrier inside the bounds test), with the labs' kernel, file and
// driver names replaced by made-up ones (saxpy, smooth), so no test here depends on a lab's names.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gpulab/manifest.hpp"
#include "sanitizer.hpp"

namespace fs = std::filesystem;
using namespace gpulab::cli;

namespace {

std::string log_named(const std::string& name) {
  std::ifstream in(fs::path(GPULAB_REPO) / "tests" / "unit" / "data" / "sanitizer" / name);
  REQUIRE(in);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("a memcheck out-of-bounds read is one finding with its kernel, file, line and thread") {
  const auto found = parse_sanitizer_log(log_named("memcheck-out-of-bounds.log"), "memcheck");
  REQUIRE(found.size() == 1);
  CHECK(found[0].kind == "out-of-bounds global read");
  CHECK(found[0].kernel == "saxpy_kernel");
  CHECK(found[0].file == "saxpy.cu");
  CHECK(found[0].line == 7);
  CHECK(found[0].thread == "thread (6,0,0) in block (0,0,0)");
  CHECK(found[0].advice.find("bounds test") != std::string::npos);
  CHECK(describe(found[0], "/tmp/lab", "07-saxpy") ==
        "out-of-bounds global read in kernel saxpy_kernel at 07-saxpy/saxpy.cu:7 (compute-sanitizer memcheck)");
}

TEST_CASE("an uninitialised read reported for many threads is one finding") {
  const auto found = parse_sanitizer_log(log_named("initcheck-uninitialised.log"), "initcheck");
  REQUIRE(found.size() == 1);
  CHECK(found[0].kind == "read of uninitialised device memory");
  CHECK(found[0].line == 7);
}

TEST_CASE("a barrier inside the bounds test is reported by synccheck at the barrier's line") {
  const auto found = parse_sanitizer_log(log_named("synccheck-divergent-barrier.log"), "synccheck");
  REQUIRE(found.size() == 1);
  CHECK(found[0].kind == "barrier not reached by all threads");
  CHECK(found[0].kernel == "smooth_tiled_kernel");
  CHECK(found[0].line == 36);
  CHECK(found[0].advice.find("Move it out of the if") != std::string::npos);
}

TEST_CASE("a missing barrier is one race between the tile's write and its read, whichever end the tool starts from") {
  const auto found = parse_sanitizer_log(log_named("racecheck-missing-barrier.log"), "racecheck");
  REQUIRE(found.size() == 1);
  CHECK(found[0].kind == "shared-memory data race (a write and a read, no barrier between them)");
  CHECK(found[0].line == 34);
  CHECK(found[0].other_line == 42);
  CHECK(describe(found[0], "/tmp/lab", "08-smooth").find("(the other access: 08-smooth/smooth.cu:42)") !=
        std::string::npos);
}

TEST_CASE("clean logs and summaries give no finding") {
  CHECK(parse_sanitizer_log(log_named("racecheck-clean.log"), "racecheck").empty());
  CHECK(parse_sanitizer_log("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n", "memcheck").empty());
  CHECK(parse_sanitizer_log("", "initcheck").empty());
}

TEST_CASE("the older location format (address, file:line:kernel) is read too") {
  const auto found = parse_sanitizer_log(
      "========= Invalid __shared__ write of size 4\n"
      "=========     at 0x00000070 in /work/lab/k.cu:12:tile_kernel(int*)\n"
      "=========     by thread (31,0,0) in block (0,0,0)\n",
      "memcheck");
  REQUIRE(found.size() == 1);
  CHECK(found[0].kind == "out-of-bounds shared-memory write");
  CHECK(found[0].kernel == "tile_kernel");
  CHECK(found[0].file == "/work/lab/k.cu");
  CHECK(found[0].line == 12);
  CHECK(describe(found[0], "/work/lab", "01-x") ==
        "out-of-bounds shared-memory write in kernel tile_kernel at 01-x/k.cu:12 (compute-sanitizer memcheck)");
}

TEST_CASE("a finding counts against the student only in the student's own files") {
  const auto found = parse_sanitizer_log(log_named("memcheck-out-of-bounds.log"), "memcheck");
  REQUIRE(found.size() == 1);
  CHECK(in_student_code(found[0], "/tmp/lab", {"saxpy.cu"}));
  CHECK_FALSE(in_student_code(found[0], "/tmp/lab", {"gemm.cu"}));
  SanitizerFinding harness = found[0];
  harness.file = "/repo/common/cuda/copy_transformed.cu";
  CHECK_FALSE(in_student_code(harness, "/tmp/lab", {"saxpy.cu"}));
  harness.file = "/tmp/lab/saxpy.cu";
  CHECK(in_student_code(harness, "/tmp/lab", {"saxpy.cu"}));
}

TEST_CASE("the application's own output in the log is not mistaken for a finding") {
  CHECK(
      parse_sanitizer_log("Invalid __global__ write of size 4 bytes\n    at k()+0x10 in k.cu:3\n", "memcheck").empty());
}

// ---- what `gpulab grade` runs under the gate (plan_sanitizer): the decision, without a GPU

namespace {

// Three tasks: `plain` (no shared memory, no barrier), `tiled` (both) and `votes` (a barrier only).
KernelMap three_task_map() {
  gpulab::Manifest m;
  m.id = "09-smooth";
  for (const char* name : {"plain", "tiled", "votes"}) {
    gpulab::Task t;
    t.name = name;
    t.function = std::string("run_") + name;
    m.tasks.push_back(t);
  }
  const std::string cuda = R"(__global__ void plain_kernel(float* a) { a[threadIdx.x] = 0; }
__global__ void tiled_kernel(float* a) {
  __shared__ float tile[32];
  tile[threadIdx.x] = a[threadIdx.x];
  __syncthreads();
  a[threadIdx.x] = tile[31 - threadIdx.x];
}
__global__ void votes_kernel(float* a) { if (__syncthreads_or(a[threadIdx.x] > 0)) a[0] = 1; }
void run_plain(float* a) { plain_kernel<<<1, 32>>>(a); }
void run_tiled(float* a) { tiled_kernel<<<1, 32>>>(a); }
void run_votes(float* a) { votes_kernel<<<1, 32>>>(a); }
)";
  return map_kernels(m, {{"smooth.cu", cuda}});
}

const std::vector<std::string> kAllTasks{"plain", "tiled", "votes"};

}  // namespace

TEST_CASE(
    "by default on CUDA the gate runs racecheck and synccheck for the passed tasks with shared memory or barriers") {
  const auto plan = plan_sanitizer(SanitizeMode::automatic, "cuda", three_task_map(), kAllTasks);
  CHECK(plan.tasks == std::vector<std::string>{"tiled", "votes"});
  CHECK(plan.left_out == std::vector<std::string>{"plain"});
  CHECK(plan.tools == std::vector<std::string>{"racecheck", "synccheck"});
  CHECK(plan.tools == default_sanitizer_tools());
  // Only the tasks that passed: the gate can only take points away.
  CHECK(plan_sanitizer(SanitizeMode::automatic, "cuda", three_task_map(), {"plain", "votes"}).tasks ==
        std::vector<std::string>{"votes"});
}

TEST_CASE("--sanitize runs every tool for every passed task; --no-sanitize and OpenCL run nothing") {
  const auto all = plan_sanitizer(SanitizeMode::all, "cuda", three_task_map(), kAllTasks);
  CHECK(all.tasks == kAllTasks);
  CHECK(all.tools == std::vector<std::string>{"memcheck", "racecheck", "synccheck", "initcheck"});
  const auto off = plan_sanitizer(SanitizeMode::off, "cuda", three_task_map(), kAllTasks);
  CHECK(off.tasks.empty());
  CHECK(off.tools.empty());
  CHECK(plan_sanitizer(SanitizeMode::automatic, "opencl", three_task_map(), kAllTasks).tasks.empty());
  CHECK(plan_sanitizer(SanitizeMode::all, "opencl", three_task_map(), kAllTasks).tasks.empty());
}

TEST_CASE("a task whose kernels the map cannot find runs under the gate: not seen is not free of races") {
  KernelMap map = three_task_map();
  map.tasks["plain"].kernels_known = false;
  map.tasks.erase("votes");
  const auto plan = plan_sanitizer(SanitizeMode::automatic, "cuda", map, kAllTasks);
  CHECK(plan.tasks == kAllTasks);
  CHECK(plan.left_out.empty());
}

TEST_CASE("the reference solutions' CUDA tasks with shared memory or barriers are the ones the gate runs by default") {
  const fs::path repo(GPULAB_REPO);
  if (!fs::is_directory(repo / "solutions")) return;  // the student repository has no solutions
  const auto planned = [&](const std::string& lab) {
    const gpulab::Manifest m = gpulab::load_manifest(repo / "labs" / lab / "lab.toml");
    std::vector<std::string> tasks;
    for (const auto& t : m.tasks) tasks.push_back(t.name);
    const auto map = map_kernels(m, read_lab_sources(m, "cuda", repo / "solutions" / lab));
    return plan_sanitizer(SanitizeMode::automatic, "cuda", map, tasks).tasks;
  };
  CHECK(planned("02-transpose") == std::vector<std::string>{"optimized"});
  CHECK(planned("05-reduction") == std::vector<std::string>{"tree", "fast"});
  CHECK(planned("00-hello").empty());
  CHECK(planned("09-mandelbrot").empty());
}
