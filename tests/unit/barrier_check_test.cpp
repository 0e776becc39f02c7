#include <doctest/doctest.h>

#include "barrier_check.hpp"
#include "report.hpp"
#include "student_build.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "barrier_findings.hpp"
#include "gpulab/manifest.hpp"

using namespace gpulab;
namespace fs = std::filesystem;

namespace {

const std::string kCondition = "barrier under a thread-dependent condition";
const std::string kLoop = "barrier in a loop with a thread-dependent bound";
const std::string kReturn = "early return before a barrier";

std::string read(const fs::path& path) {
  REQUIRE(fs::exists(path));
  return gpulab::testing::read_file(path);
}

using gpulab::testing::all_findings;
using gpulab::testing::replaced;

}  // namespace

TEST_CASE("a barrier moved into a bounds test of a thread index is found, with its line, kernel and condition") {
  const std::string source = R"(__global__ void smooth_tiled(const float* in, float* out, int rows, int cols) {
  __shared__ float tile[32][33];
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (col < cols && row < rows) {
    tile[threadIdx.y][threadIdx.x] = in[row * cols + col];
    __syncthreads();
    out[col * rows + row] = tile[threadIdx.x][threadIdx.y];
  }
}
)";
  const auto found = cli::find_divergent_barriers(source);
  REQUIRE_MESSAGE(found.size() == 1, all_findings(found));
  CHECK(found[0].line == 7);
  CHECK(found[0].kernel == "smooth_tiled");
  CHECK(found[0].in_kernel);
  CHECK(found[0].barrier == "__syncthreads()");
  CHECK(found[0].kind == kCondition);
  CHECK(found[0].condition == "col < cols && row < rows");
  const std::string text = cli::describe(found[0]);
  CHECK(text.rfind("__syncthreads() under `if (col < cols && row < rows)` in kernel smooth_tiled — ", 0) == 0);
  CHECK(text.find("Move the barrier out of the if") != std::string::npos);
  CHECK(text.find("guard only the loads and stores") != std::string::npos);
}

TEST_CASE("an OpenCL barrier under a condition on get_global_id is found, in work-group words") {
  const std::string source = R"(__kernel void k(__global float* a, int n) {
  __local float tile[64];
  const int i = get_global_id(0);
  if (i < n) {
    tile[get_local_id(0)] = a[i];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}
)";
  const auto found = cli::find_divergent_barriers(source);
  REQUIRE_MESSAGE(found.size() == 1, all_findings(found));
  CHECK(found[0].line == 6);
  CHECK(found[0].barrier == "barrier(CLK_LOCAL_MEM_FENCE)");
  CHECK(found[0].kind == kCondition);
  CHECK(found[0].condition == "i < n");
  CHECK(found[0].message.find("work-group") != std::string::npos);
}

TEST_CASE("an early return on a thread-dependent test before a later barrier is found at the return") {
  const std::string cuda = R"(__global__ void k(float* a, int rows) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= rows) return;
  a[row] = 1;
  __syncthreads();
}
)";
  auto found = cli::find_divergent_barriers(cuda);
  REQUIRE_MESSAGE(found.size() == 1, all_findings(found));
  CHECK(found[0].line == 3);
  CHECK(found[0].kind == kReturn);
  CHECK(found[0].condition == "row >= rows");
  CHECK(found[0].summary.find("at line 5") != std::string::npos);

  const std::string opencl = R"(kernel void k(global float* a, int n) {
  const int lx = get_local_id(0);
  if (lx >= n) {
    return;
  }
  work_group_barrier(CLK_LOCAL_MEM_FENCE);
}
)";
  found = cli::find_divergent_barriers(opencl);
  REQUIRE_MESSAGE(found.size() == 1, all_findings(found));
  CHECK(found[0].line == 4);
  CHECK(found[0].kind == kReturn);
  CHECK(found[0].barrier == "work_group_barrier(CLK_LOCAL_MEM_FENCE)");
}

TEST_CASE("a return after the last barrier, or on a condition uniform in the block, is not a finding") {
  const std::string source = R"(__global__ void k(float* a, int n, int width) {
  if (blockIdx.x * blockDim.x >= n) return;
  __syncthreads();
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= width) return;  // after the barriers: every thread helped
  a[x] = 0;
}
)";
  CHECK(all_findings(cli::find_divergent_barriers(source)).empty());
}

TEST_CASE("a barrier in a loop whose bound or start depends on the thread is found, for, while and do-while") {
  const std::string source = R"(__global__ void k(float* a, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    a[i] = 0;
    __syncthreads();
  }
  int j = threadIdx.x * 2;
  while (j < n) { __syncthreads(); j += 64; }
  int r = 0;
  do {
    __syncthreads();
  } while (++r < threadIdx.y);
}
)";
  const auto found = cli::find_divergent_barriers(source);
  REQUIRE_MESSAGE(found.size() == 3, all_findings(found));
  CHECK(found[0].line == 4);
  CHECK(found[0].kind == kLoop);
  CHECK(found[0].condition == "i < n");
  CHECK(found[0].summary.find("for (int i = threadIdx.x; i < n; i += blockDim.x)") != std::string::npos);
  CHECK(found[1].line == 7);
  CHECK(found[1].kind == kLoop);
  CHECK(found[1].condition == "j < n");
  CHECK(found[2].line == 10);
  CHECK(found[2].kind == kLoop);
  CHECK(found[0].message.find("guard the work inside it with an if") != std::string::npos);
}

TEST_CASE("a barrier in a loop with a uniform bound, from arguments, blockDim and gridDim, is not a finding") {
  const std::string source = R"(__global__ void k(float* a, int n, int k) {
  const int tiles = (k + blockDim.x - 1) / blockDim.x;
  for (int t = 0; t < tiles; ++t) {
    __syncthreads();
  }
  for (int b = blockIdx.x; b < n; b += gridDim.x) __syncthreads();
  int s = blockDim.x / 2;
  while (s > 0) { __syncthreads(); s >>= 1; }
}
)";
  CHECK(all_findings(cli::find_divergent_barriers(source)).empty());
}

TEST_CASE("a barrier in the else branch of a thread-dependent if is found, and in an else-if chain") {
  const std::string source = R"(__global__ void k(float* a, int n) {
  if (threadIdx.x < 32) a[0] = 1;
  else { __syncthreads(); }
  if (blockIdx.x == 0) a[1] = 2;
  else if (threadIdx.x == 1) a[2] = 3;
  else __syncthreads();
}
)";
  const auto found = cli::find_divergent_barriers(source);
  REQUIRE_MESSAGE(found.size() == 2, all_findings(found));
  CHECK(found[0].line == 3);
  CHECK(found[0].summary.find("in the else branch of `if (threadIdx.x < 32)`") != std::string::npos);
  CHECK(found[1].line == 6);
  CHECK(found[1].condition == "threadIdx.x == 1");
}

TEST_CASE("braceless bodies count as one statement: the barrier after them is outside") {
  const std::string source = R"(__global__ void k(float* a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = 0;
  __syncthreads();
  for (int e = threadIdx.x; e < n; e += blockDim.x) a[e] += 1;
  __syncthreads();
  if (i < n)
    __syncthreads_or(a[i] > 0);
}
)";
  const auto found = cli::find_divergent_barriers(source);
  REQUIRE_MESSAGE(found.size() == 1, all_findings(found));
  CHECK(found[0].line == 8);
  CHECK(found[0].barrier == "__syncthreads_or(a[i] > 0)");
}

TEST_CASE("nested loops: a thread-dependent inner loop inside a uniform one is found, uniform nests are not") {
  const std::string source = R"(__global__ void k(float* a, int n, int m) {
  for (int p = 0; p < n; p += 32) {
    for (int q = 0; q < m; ++q) {
      __syncthreads();
    }
    for (int i = threadIdx.x; i < m; i += blockDim.x)
      if (a[i] > 0) {
        __syncthreads();
      }
  }
}
)";
  const auto found = cli::find_divergent_barriers(source);
  REQUIRE_MESSAGE(found.size() == 1, all_findings(found));
  CHECK(found[0].line == 8);
  CHECK(found[0].kind == kLoop);
}

TEST_CASE("barriers named in comments and strings are not calls") {
  const std::string source = R"(__global__ void k(float* a, int n) {
  const int i = threadIdx.x;
  if (i < n) {
    // __syncthreads(); would hang here
    /* barrier(CLK_LOCAL_MEM_FENCE); */
    printf("__syncthreads();\n");
  }
  __syncthreads();
}
)";
  CHECK(all_findings(cli::find_divergent_barriers(source)).empty());
}

TEST_CASE("__syncwarp is not a block barrier, and blockIdx alone is uniform in a block") {
  const std::string source = R"(__global__ void k(float* a, int n) {
  if (threadIdx.x < 32) __syncwarp();
  if (blockIdx.x < n) { __syncthreads(); }
  if (blockIdx.y * blockDim.y > n) __syncthreads();
}
)";
  CHECK(all_findings(cli::find_divergent_barriers(source)).empty());
}

TEST_CASE("a thread-dependent if that does not contain the barrier, or has closed before it, is not a finding") {
  const std::string source = R"(__global__ void reduce(const float* in, float* out, int n) {
  extern __shared__ float sdata[];
  const unsigned tid = threadIdx.x;
  sdata[tid] = tid < n ? in[tid] : 0;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) {
      sdata[tid] += sdata[tid + s];
    }
    __syncthreads();
  }
  if (tid == 0) sdata[0] = 1;  // shared: the same for every thread after the barrier
  __syncthreads();
  if (sdata[0] > 0) __syncthreads();
  if (tid == 0) out[blockIdx.x] = sdata[0];
}
)";
  CHECK(all_findings(cli::find_divergent_barriers(source)).empty());
}

TEST_CASE("thread dependence flows through assignments, compound ones and assignments under a divergent if") {
  const std::string source = R"(__global__ void k(float* a, int n) {
  int base = 0;
  base += threadIdx.x;
  int twice = base * 2;
  if (twice < n) __syncthreads();
  int flag = 0;
  if (threadIdx.x == 0) flag = 1;
  if (flag) __syncthreads();
}
)";
  const auto found = cli::find_divergent_barriers(source);
  REQUIRE_MESSAGE(found.size() == 2, all_findings(found));
  CHECK(found[0].condition == "twice < n");
  CHECK(found[1].condition == "flag");
}

TEST_CASE("a loop variable that is thread-dependent in one loop is a new variable in the next one") {
  const std::string source = R"(__global__ void k(float* a, int n, int tiles) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) a[i] = 0;
  for (int i = 0; i < tiles; ++i) {
    __syncthreads();
  }
  {
    int j = threadIdx.x;
    a[j] = 1;
  }
  int j = 0;
  while (j < tiles) { __syncthreads(); ++j; }
}
)";
  CHECK(all_findings(cli::find_divergent_barriers(source)).empty());
}

TEST_CASE("a break or continue on a thread-dependent test in a loop with a barrier is found") {
  const std::string source = R"(__global__ void k(float* a, int n) {
  for (int t = 0; t < n; ++t) {
    __syncthreads();
    if (threadIdx.x > t) break;
  }
  for (int t = 0; t < n; ++t) {
    if (threadIdx.x > t) continue;
    __syncthreads();
  }
  for (int t = 0; t < n; ++t) {
    __syncthreads();
    if (threadIdx.x > t) continue;  // the barrier is before it: every thread reaches it again
  }
  for (int t = 0; t < n; ++t) {
    switch (threadIdx.x) { case 0: a[t] = 0; break; }  // leaves the switch, not the loop
    __syncthreads();
  }
}
)";
  const auto found = cli::find_divergent_barriers(source);
  REQUIRE_MESSAGE(found.size() == 2, all_findings(found));
  CHECK(found[0].line == 4);
  CHECK(found[0].kind == kLoop);
  CHECK(found[0].summary.rfind("`break` under `if (threadIdx.x > t)`", 0) == 0);
  CHECK(found[1].line == 7);
}

TEST_CASE("a __device__ helper with a barrier under its own divergent if is found, as a function") {
  const std::string source = R"(template <typename T>
__device__ void helper(T* s, int n) {
  if (threadIdx.x < n) __syncthreads();
}
__global__ void k(float* s, int n) { helper(s, n); }
)";
  const auto found = cli::find_divergent_barriers(source);
  REQUIRE_MESSAGE(found.size() == 1, all_findings(found));
  CHECK(found[0].kernel == "helper");
  CHECK_FALSE(found[0].in_kernel);
  CHECK(cli::describe(found[0]).find("in function helper") != std::string::npos);
}

TEST_CASE("preprocessor lines are skipped, even continued ones, and line numbers stay right") {
  const std::string source = R"(#define TILE 16
#define LOAD(i) \
  if (get_local_id(0) < i) { barrier(CLK_LOCAL_MEM_FENCE); }
__kernel void k(__global float* a) {
#pragma unroll
  for (int i = 0; i < TILE; ++i) a[i] = 0;
  if (get_local_id(0) < 4)
    barrier(CLK_LOCAL_MEM_FENCE);
}
)";
  const auto found = cli::find_divergent_barriers(source);
  REQUIRE_MESSAGE(found.size() == 1, all_findings(found));
  CHECK(found[0].line == 8);
}

TEST_CASE("no reference solution and no skeleton has a divergent barrier") {
  int files = 0;
  std::vector<fs::path> trees{gpulab::testing::committed_labs()};
  if (gpulab::testing::instructor_repository()) trees.push_back(gpulab::testing::repo_path("solutions"));
  for (const auto& tree : trees)
    for (const auto& entry : fs::recursive_directory_iterator(tree)) {
      const auto ext = entry.path().extension();
      if (!entry.is_regular_file() || (ext != ".cu" && ext != ".cl")) continue;
      ++files;
      const auto found = cli::find_divergent_barriers(read(entry.path()));
      CHECK_MESSAGE(found.empty(), entry.path().string() << "\n" << all_findings(found));
    }
  CHECK(files >= (gpulab::testing::instructor_repository() ? 20 : 10));
}

TEST_CASE("the build's warnings name the lab's kernel files by lab and file, and the report shows them") {
  const fs::path dir = fs::temp_directory_path() / "gpulab-barrier-check-test" / "08-smooth";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "smooth.cl") << "kernel void k(global float* a, int n) {\n"
                                      "  if (get_global_id(0) >= n) return;\n"
                                      "  barrier(CLK_LOCAL_MEM_FENCE);\n}\n";
  std::ofstream(dir / "smooth_opencl.cpp") << "void f() { if (x) barrier(1); }\n";  // host code: not scanned
  Manifest m;
  m.id = "08-smooth";
  const auto warnings = cli::find_source_warnings(m, {"smooth.cl", "smooth_opencl.cpp"}, dir);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].file == "08-smooth/smooth.cl");
  CHECK(warnings[0].line == 2);
  const auto lines = cli::warning_lines(warnings);
  CHECK(lines[0].rfind("08-smooth/smooth.cl:2: `return` under `if (get_global_id(0) >= n)`", 0) == 0);

  cli::RunSummary run;
  cli::LabRun lab;
  lab.id = "08-smooth";
  lab.warnings = lines;
  run.labs.push_back(lab);
  CHECK(cli::render_report(run, false).find("  warning: " + lines[0]) != std::string::npos);
  CHECK(cli::render_report(run, true).find("\x1b[33m  warning: 08-smooth/smooth.cl:2:") != std::string::npos);
  CHECK(cli::to_json(run)["labs"][0]["warnings"][0] == lines[0]);
  fs::remove_all(dir.parent_path());
}

// ---- proven findings: the ones that fail a task (barrier_verdict.hpp); the rest stay warnings

TEST_CASE(
    "a barrier under `if (t < stride)` in a reduction is proven, as is one under a bounds test of a thread's index") {
  const std::string source = R"(__global__ void reduce(float* data, int n) {
  __shared__ float partial[256];
  const int t = threadIdx.x;
  const int i = blockIdx.x * blockDim.x + t;
  partial[t] = i < n ? data[i] : 0;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (t < stride) {
      partial[t] += partial[t + stride];
      __syncthreads();
    }
  }
  if (i < n) {
    __syncthreads();
  }
}
)";
  const auto found = cli::find_divergent_barriers(source);
  REQUIRE_MESSAGE(found.size() == 2, all_findings(found));
  CHECK(found[0].line == 10);
  CHECK(found[0].condition == "t < stride");
  CHECK(found[0].proven);
  CHECK(found[1].condition == "i < n");
  CHECK(found[1].proven);
}

TEST_CASE("early returns and breaks on a thread's index are proven, in CUDA and OpenCL") {
  const std::string cuda = R"(__global__ void k(float* a, int rows) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= rows) return;
  __syncthreads();
  for (int t = 0; t < rows; ++t) {
    __syncthreads();
    if (threadIdx.x > t) break;
  }
}
)";
  auto found = cli::find_divergent_barriers(cuda);
  REQUIRE_MESSAGE(found.size() == 2, all_findings(found));
  CHECK(found[0].kind == kReturn);
  CHECK(found[0].proven);
  CHECK(found[1].kind == kLoop);
  CHECK(found[1].proven);
  const std::string opencl = R"(kernel void k(global float* a, int n) {
  const int lx = get_local_id(0);
  if (lx >= n) return;
  barrier(CLK_LOCAL_MEM_FENCE);
}
)";
  found = cli::find_divergent_barriers(opencl);
  REQUIRE_MESSAGE(found.size() == 1, all_findings(found));
  CHECK(found[0].proven);
}

TEST_CASE("a loop whose bound depends on the thread is a warning only: its trip count may be the same for all") {
  const std::string source = R"(__global__ void k(float* a, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    a[i] = 0;
    __syncthreads();
  }
  for (int j = threadIdx.x; j < threadIdx.x + 4; ++j) __syncthreads();
}
)";
  const auto found = cli::find_divergent_barriers(source);
  REQUIRE_MESSAGE(found.size() == 2, all_findings(found));
  CHECK_FALSE(found[0].proven);
  CHECK_FALSE(found[1].proven);
}

TEST_CASE("a condition on memory, an atomic, a shuffle or a flag set under a divergent if is not proven") {
  const std::string source = R"(__global__ void k(const int* in, int* counter, int n) {
  const int t = threadIdx.x;
  if (in[t] > 0) __syncthreads();
  const int ticket = atomicAdd(counter, 1);
  if (ticket == 0) __syncthreads();
  const int lead = __shfl_sync(0xffffffffu, t, 0);
  if (lead == 0) __syncthreads();
  int flag = 0;
  if (t == 0) flag = 1;
  if (flag) __syncthreads();
  int again = t;
  again = n;
  if (again > 1) __syncthreads();
}
)";
  const auto found = cli::find_divergent_barriers(source);
  REQUIRE_MESSAGE(found.size() == 5, all_findings(found));
  for (const auto& f : found) CHECK_MESSAGE(!f.proven, f.line << ": " << f.condition);
}

TEST_CASE("a block-wide vote or reduction is the same for every thread: no finding at all") {
  const std::string source = R"(__global__ void k(const int* in, int n) {
  const int any = __syncthreads_or(in[threadIdx.x] > 0);
  if (any) __syncthreads();
}
kernel void c(global const int* in) {
  const int total = work_group_reduce_add(in[get_local_id(0)]);
  if (total > 0) barrier(CLK_LOCAL_MEM_FENCE);
}
)";
  CHECK(all_findings(cli::find_divergent_barriers(source)).empty());
}

TEST_CASE("a thread index kept through compound assignments stays proven; an if inside a divergent loop proves it") {
  const std::string source = R"(__global__ void k(float* a, int n) {
  int idx = threadIdx.x;
  idx += blockDim.x;
  idx *= 2;
  if (idx < n) __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    if (threadIdx.x < 16) __syncthreads();
  }
}
)";
  const auto found = cli::find_divergent_barriers(source);
  REQUIRE_MESSAGE(found.size() == 2, all_findings(found));
  CHECK(found[0].proven);
  CHECK(found[1].proven);
  CHECK(found[1].kind == kCondition);  // the if proves it, not the loop around it
  CHECK(found[1].condition == "threadIdx.x < 16");
}

TEST_CASE("the transpose fixture's barrier under `if (!leader)` is proven, in both languages") {
  const fs::path fixture = gpulab::testing::repo_path("tests/fixtures/submissions/divergent-barrier/labs/02-transpose");
  if (!fs::exists(fixture)) return;  // the student repository has no fixtures
  for (const char* file : {"transpose.cu", "transpose.cl"}) {
    const auto found = cli::find_divergent_barriers(read(fixture / file));
    REQUIRE_MESSAGE(found.size() == 1, file << "\n" << all_findings(found));
    CHECK(found[0].proven);
    CHECK(found[0].condition == "leader");
    CHECK(found[0].summary.find("else branch") != std::string::npos);
  }
}
