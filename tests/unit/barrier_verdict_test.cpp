// Unsafe code never passes: a barrier the static check proves divergent fails the tasks that launch its
// kernel (barrier_verdict.hpp), which the kernel map finds from each task's launch function
// (kernel_map.hpp); and the report, JSON and history say "unsafe code", not a pass with a warning.
#include <doctest/doctest.h>

#include <filesystem>

#include "barrier_verdict.hpp"
#include "cli_harness.hpp"
#include "history.hpp"
#include "kernel_map.hpp"
#include "report.hpp"
#include "source_scan.hpp"

using namespace gpulab;
using namespace gpulab::testing;
namespace fs = std::filesystem;

namespace {

// A lab of two tasks, as a manifest says them: `plain` (launch `run_plain`) and `tiled` (`run_tiled`).
Manifest two_task_lab() {
  Manifest m;
  m.id = "09-smooth";
  m.name = "smooth";
  m.files["cuda"] = {"smooth.cu"};
  m.files["opencl"] = {"smooth.cl", "smooth_opencl.cpp"};
  for (const char* name : {"plain", "tiled"}) {
    Task t;
    t.name = name;
    t.function = std::string("run_") + name;
    t.points = 5;
    m.tasks.push_back(t);
  }
  return m;
}

const char* const kCuda = R"(#include "gpulab/student/cuda.hpp"
__device__ float load(const float* in, int i) { return in[i]; }
__device__ void wait_all() { __syncthreads(); }
__global__ void plain_kernel(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = load(in, i);
}
__global__ void tiled_kernel(const float* in, float* out, int n) {
  __shared__ float tile[256];
  const int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  if (i < n) {
    tile[t] = in[i];
    __syncthreads();
    out[i] = tile[255 - t];
  }
  wait_all();
}
template <int kVector>
void launch_tiled(const float* in, float* out, int n) { tiled_kernel<<<(n + 255) / 256, 256>>>(in, out, n); }
void run_plain(const float* in, float* out, int n) { plain_kernel<<<(n + 255) / 256, 256>>>(in, out, n); }
void run_tiled(const float* in, float* out, int n) { launch_tiled<4>(in, out, n); }
)";

const char* const kOpenCL = R"(kernel void plain_kernel(global const float* in, global float* out, int n) {
  const int i = get_global_id(0);
  if (i < n) out[i] = in[i];
}
kernel void tiled_r1(global const float* in, global float* out, int n) {
  local float tile[256];
  const int i = get_global_id(0);
  if (i >= n) return;
  tile[get_local_id(0)] = in[i];
  barrier(CLK_LOCAL_MEM_FENCE);
  out[i] = tile[0];
}
)";

const char* const kHost = R"(#include "gpulab/student/opencl.hpp"
namespace {
void launch(const gpulab::OpenCLLab& lab, const char* name, cl_mem in, cl_mem out, int n) {
  cl_kernel kernel = lab.kernel(name);
  gpulab::set_args(kernel, in, out, n);
}
}
void run_plain(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, int n) { launch(lab, "plain_kernel", in, out, n); }
void run_tiled(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, int n, int r) {
  const std::string name = "tiled_r" + std::to_string(r);
  launch(lab, name.c_str(), in, out, n);
}
)";

// The lab's files written to a fresh folder, as a student's lab folder holds them.
fs::path lab_folder(const std::string& name, const std::map<std::string, std::string>& files) {
  const fs::path dir = fs::path(GPULAB_SCRATCH) / "barrier-verdict" / name / "09-smooth";
  fs::remove_all(dir);
  for (const auto& [file, text] : files) write_file(dir / file, text);
  return dir;
}

std::vector<std::string> tasks_of(const Manifest& m) {
  std::vector<std::string> out;
  for (const auto& t : m.tasks) out.push_back(t.name);
  return out;
}

}  // namespace

TEST_CASE("a task reaches the kernels its launch function launches, through templates, helpers and device functions") {
  const auto map = cli::map_kernels(two_task_lab(), {{"smooth.cu", kCuda}});
  const auto& plain = map.tasks.at("plain");
  const auto& tiled = map.tasks.at("tiled");
  CHECK(plain.found);
  CHECK(plain.kernels_known);
  CHECK(plain.functions == std::set<std::string>{"run_plain", "plain_kernel", "load"});
  CHECK_FALSE(plain.shared_or_barrier);
  CHECK(tiled.functions == std::set<std::string>{"run_tiled", "launch_tiled", "tiled_kernel", "wait_all"});
  CHECK(tiled.shared_or_barrier);
  CHECK_FALSE(map.shared_or_barrier_elsewhere);
}

TEST_CASE("an OpenCL kernel is reached by its name in the host code, or by the start of a name built at run time") {
  const auto map = cli::map_kernels(two_task_lab(), {{"smooth.cl", kOpenCL}, {"smooth_opencl.cpp", kHost}});
  CHECK(map.tasks.at("plain").functions.count("plain_kernel"));
  CHECK_FALSE(map.tasks.at("plain").functions.count("tiled_r1"));
  CHECK(map.tasks.at("tiled").functions.count("tiled_r1"));
  CHECK_FALSE(map.tasks.at("tiled").functions.count("plain_kernel"));
  CHECK(map.tasks.at("tiled").shared_or_barrier);
  CHECK_FALSE(map.tasks.at("plain").shared_or_barrier);
}

TEST_CASE("a launch the lexer cannot follow, or shared memory spelt by a macro, is not taken for code without them") {
  Manifest m = two_task_lab();
  const std::string hidden = std::string(kCuda) + R"(
using Launch = void (*)(const float*, float*, int);
void run_hidden(const float* in, float* out, int n) { Launch table[] = {nullptr}; table[0](in, out, n); }
)";
  m.tasks[0].function = "run_hidden";
  auto map = cli::map_kernels(m, {{"smooth.cu", hidden}});
  CHECK(map.tasks.at("plain").found);
  CHECK_FALSE(map.tasks.at("plain").kernels_known);
  const std::string pasted = std::string("#define CAT(a, b) a##b\n") + kCuda;
  map = cli::map_kernels(two_task_lab(), {{"smooth.cu", pasted}});
  CHECK(map.shared_or_barrier_elsewhere);
  CHECK(map.tasks.at("plain").shared_or_barrier);
  // Cooperative groups' block barrier, or a PTX one, is a barrier too.
  for (const char* sync : {"cg::sync(cg::this_thread_block())", "block.sync()", "asm volatile(\"bar.sync 0;\")"}) {
    map = cli::map_kernels(
        two_task_lab(),
        {{"smooth.cu", replaced(kCuda, "out[i] = load(in, i);", std::string("{ ") + sync + "; out[i] = 0; }")}});
    CHECK_MESSAGE(map.tasks.at("plain").shared_or_barrier, sync);
  }
}

TEST_CASE("every task of every reference solution reaches a kernel on both backends, so each verdict has a task") {
  if (!instructor_repository()) return;
  int labs = 0;
  for (const auto& entry : fs::directory_iterator(repo_path("labs"))) {
    if (!fs::exists(entry.path() / "lab.toml")) continue;
    const Manifest m = load_manifest(entry.path() / "lab.toml");
    ++labs;
    for (const auto& [backend, files] : m.files) {
      const auto map = cli::map_kernels(m, cli::read_lab_sources(m, backend, repo_path("solutions") / m.id));
      for (const auto& t : m.tasks)
        CHECK_MESSAGE(map.tasks.at(t.name).kernels_known, m.id << " " << backend << ": " << t.name);
    }
  }
  CHECK(labs >= 10);
}

TEST_CASE("a proven divergent barrier fails the tasks that launch its kernel as unsafe code with the check's message") {
  const Manifest m = two_task_lab();
  const fs::path dir = lab_folder("cuda", {{"smooth.cu", kCuda}});
  const auto findings = cli::find_source_warnings(m, m.files.at("cuda"), dir);
  REQUIRE(findings.size() == 1);
  CHECK(findings[0].proven);
  CHECK(findings[0].function == "tiled_kernel");
  const auto verdicts = cli::barrier_verdicts(m, "cuda", dir, tasks_of(m), findings);
  CHECK(verdicts.warnings.empty());
  REQUIRE(verdicts.unsafe.size() == 1);
  const TaskResult& tiled = verdicts.unsafe.at("tiled");
  CHECK(tiled.status == Status::unsafe_code);
  CHECK(tiled.points == 0);
  CHECK(tiled.max_points == 5);
  CHECK(tiled.function == "run_tiled");
  CHECK(tiled.finding == "divergent_barrier");
  CHECK(tiled.message == cli::warning_lines(findings).front());
  CHECK(tiled.message.rfind("09-smooth/smooth.cu:13: __syncthreads() under `if (i < n)` in kernel tiled_kernel — ",
                            0) == 0);
  CHECK(tiled.message.find("Move the barrier out of the if") != std::string::npos);
  CHECK(cli::tasks_to_run(tasks_of(m), verdicts) == std::vector<std::string>{"plain"});
}

TEST_CASE("on OpenCL an early return before a barrier fails the task whose host code names the kernel") {
  const Manifest m = two_task_lab();
  const fs::path dir = lab_folder("opencl", {{"smooth.cl", kOpenCL}, {"smooth_opencl.cpp", kHost}});
  const auto findings = cli::find_source_warnings(m, m.files.at("opencl"), dir);
  const auto verdicts = cli::barrier_verdicts(m, "opencl", dir, tasks_of(m), findings);
  REQUIRE(verdicts.unsafe.size() == 1);
  CHECK(verdicts.unsafe.at("tiled").message.rfind("09-smooth/smooth.cl:8: `return` under `if (i >= n)`", 0) == 0);
  CHECK(verdicts.unsafe.at("tiled").message.find("work-item") != std::string::npos);
}

TEST_CASE("a finding the check cannot prove, or in a kernel no task of the run launches, stays a warning") {
  const Manifest m = two_task_lab();
  const std::string loop = replaced(kCuda, "if (i < n) {", "for (int j = threadIdx.x; j < n; j += 256) {");
  fs::path dir = lab_folder("loop", {{"smooth.cu", loop}});
  auto findings = cli::find_source_warnings(m, m.files.at("cuda"), dir);
  REQUIRE(findings.size() == 1);
  CHECK_FALSE(findings[0].proven);
  CHECK(findings[0].message.find("cannot prove") != std::string::npos);
  auto verdicts = cli::barrier_verdicts(m, "cuda", dir, tasks_of(m), findings);
  CHECK(verdicts.unsafe.empty());
  CHECK(verdicts.warnings.size() == 1);

  dir = lab_folder("unselected", {{"smooth.cu", kCuda}});
  findings = cli::find_source_warnings(m, m.files.at("cuda"), dir);
  verdicts = cli::barrier_verdicts(m, "cuda", dir, {"plain"}, findings);  // TASK=plain
  CHECK(verdicts.unsafe.empty());
  REQUIRE(verdicts.warnings.size() == 1);
  CHECK(verdicts.warnings[0].message.find("no task of this run launches it") != std::string::npos);
}

TEST_CASE("the unsafe tasks join the ones that ran in the lab's order, and the report, JSON and history fail them") {
  const Manifest m = two_task_lab();
  const fs::path dir = lab_folder("report", {{"smooth.cu", kCuda}});
  const auto findings = cli::find_source_warnings(m, m.files.at("cuda"), dir);
  const auto verdicts = cli::barrier_verdicts(m, "cuda", dir, tasks_of(m), findings);
  cli::LabRun lab = cli::lab_of(m, "cuda");
  TaskResult plain;
  plain.task = "plain";
  plain.status = Status::passed;
  plain.points = plain.max_points = 5;
  lab.tasks = {plain};
  cli::add_unsafe_tasks(lab, tasks_of(m), verdicts);
  REQUIRE(lab.tasks.size() == 2);
  CHECK(lab.tasks[0].task == "plain");
  CHECK(lab.tasks[1].task == "tiled");
  lab.warnings = cli::warning_lines(verdicts.warnings);

  cli::RunSummary run;
  run.backend = "cuda";
  run.labs.push_back(lab);
  const std::string report = cli::render_report(run, false);
  CHECK(report.find("unsafe code") != std::string::npos);
  CHECK(report.find("✘ tiled (run_tiled): 09-smooth/smooth.cu:13: __syncthreads() under") != std::string::npos);
  CHECK(report.find("warning:") == std::string::npos);  // a verdict, not a warning beside a pass
  CHECK(report.find("FAILED: 1 of 2 tasks passed, 5 of 10 points") != std::string::npos);
  CHECK(cli::to_json(run)["labs"][0]["tasks"][1]["status"] == "unsafe_code");
  const auto entry = cli::history_entry(run, {}, "2026-01-01T00:00:00Z");
  CHECK(entry["labs"][0]["tasks"][1]["status"] == "unsafe_code");
  CHECK(entry["labs"][0]["tasks"][1]["points"] == 0.0);
  CHECK(cli::render_history({entry}, "").find("✘ unsafe code") != std::string::npos);
}

TEST_CASE(
    "the divergent-barrier fixture fails its naive task as unsafe code on both backends, the skeleton task untouched") {
  const fs::path fixture = repo_path("tests/fixtures/submissions/divergent-barrier/labs/02-transpose");
  if (!fs::exists(fixture)) return;  // the student repository has no fixtures
  const Manifest m = load_manifest(repo_path("labs/02-transpose/lab.toml"));
  for (const auto& [backend, line] :
       {std::pair<std::string, std::string>{"cuda", "transpose.cu:22"}, {"opencl", "transpose.cl:21"}}) {
    const auto findings = cli::find_source_warnings(m, m.files.at(backend), fixture);
    const auto verdicts = cli::barrier_verdicts(m, backend, fixture, tasks_of(m), findings);
    REQUIRE_MESSAGE(verdicts.unsafe.size() == 1, backend);
    CHECK(verdicts.unsafe.at("naive").message.rfind("02-transpose/" + line + ": ", 0) == 0);
    CHECK(verdicts.unsafe.at("naive").message.find("in the else branch of `if (leader)`") != std::string::npos);
    CHECK(cli::tasks_to_run(tasks_of(m), verdicts) == std::vector<std::string>{"optimized"});
    CHECK(verdicts.warnings.empty());
  }
}
