// The corpus of cheats (tests/fixtures/cheats): submissions that game the grader rather than do the
// work, each graded in one batch by `gpulab grade` and checked against the verdict a defended grader
// gives it (expected.toml). `--backend=cuda` grades them on a CUDA GPU, `--backend=opencl --device=0`
// on the first OpenCL device when it is a GPU; each exits 77 (skipped) without one. Otherwise
// OpenCL on its first device (PoCL in CI). `--jobs=N` grades N submissions at once (default 2).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "cheats.hpp"
#include "cli_harness.hpp"

using nlohmann::json;
using namespace gpulab::testing;

namespace {

std::string g_backend = "opencl";
std::string g_device;  // --device=: a device of the backend (OpenCL lists GPUs first: 0 is a GPU when there is one)
int g_jobs = 2;        // --jobs=: submissions graded at once (a GPU host spreads them over its GPUs)

// The labs the corpus uses, as `--lab` options: one batch grades them all.
std::string lab_options(const toml::table& expected) {
  std::set<std::string> labs;
  for (const auto& [name, node] : expected)
    if (const auto* t = node.as_table())
      if (auto lab = (*t)["lab"].value<std::string>()) labs.insert(*lab);
  std::string out;
  for (const auto& lab : labs) out += " --lab " + lab;
  return out;
}

}  // namespace

TEST_CASE(
    "every cheat of the corpus gets the verdict a defended grader gives it, and the other tasks are graded as "
    "correct") {
  const fs::path corpus = repo_path("tests/fixtures/cheats");
  const auto expected = toml::parse_file((corpus / "expected.toml").string());
  const fs::path root = fs::path(GPULAB_SCRATCH) / "grade-cheats", submissions = root / "submissions",
                 out = root / "out";
  fs::remove_all(root);
  fs::create_directories(submissions);
  int students = 0;
  // A cheat keeps only the files it changes: each of its labs starts as the reference solution.
  for (const auto& e : fs::directory_iterator(corpus))
    if (e.is_directory()) {
      const fs::path student = submissions / e.path().filename();
      fs::create_directories(student / "labs");
      for (const auto& lab : fs::directory_iterator(e.path() / "labs"))
        fs::copy(repo_path("solutions") / lab.path().filename(), student / "labs" / lab.path().filename(),
                 fs::copy_options::recursive);
      fs::copy(e.path(), student, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
      ++students;
    }
  REQUIRE(students == static_cast<int>(expected.size()));  // a folder for every expectation and back

  // Two jobs on a CPU: a correct task may then be too slow, which counts as correct here (cheats.hpp).
  std::string output;
  const int status =
      run_command(fmt::format("'{}' grade --submissions '{}' --out '{}'{} --backend {}{} --jobs {} --timeout 60 "
                              "--time-limit 600 --memory 4",
                              GPULAB_CLI, submissions.string(), out.string(), lab_options(expected), g_backend,
                              g_device.empty() ? "" : " --device " + g_device, g_jobs),
                  output);
  {
    INFO(output);
    REQUIRE(status == 0);
  }

  std::string failures;
  for (const auto& [name, node] : expected) {
    const std::string student(name.str());
    const fs::path record = out / "students" / student / "result.json";
    const auto* want = node.as_table();
    if (!want || !fs::exists(record)) {
      failures += student + ": no result\n";
      continue;
    }
    const json result = json::parse(read_file(record));
    if (const auto why = cheats::mismatch(result, *want, g_backend); !why.empty())
      failures += fmt::format("{} ({}): {}\n", student, (*want)["what"].value<std::string>().value_or(""), why);
    // A corpus meant for a GPU must have run on one: a runner that fell back to another device
    // (a CPU OpenCL platform) would pass the verdicts without proving anything about the GPU.
    if (g_backend == "cuda" || !g_device.empty())
      for (const auto& lab : result.value("labs", json::array())) {
        // A lab refused before it ran has no device (null).
        const json device = lab.value("device", json());
        if (device.is_object() && device.value("class", "") != "gpu")
          failures +=
              fmt::format("{}: ran on {} ({}), not on the GPU that `gpulab devices` lists as device {}\n", student,
                          device.value("name", "?"), device.value("class", "?"), g_device.empty() ? "0" : g_device);
      }
  }
  // The failures first: a CI log keeps the head of a long message and may cut the batch's output.
  const std::string report =
      failures + "\nthe end of the batch's output:\n" + output.substr(output.size() > 4000 ? output.size() - 4000 : 0);
  CHECK_MESSAGE(failures.empty(), report);
}

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--backend=", 0) == 0) g_backend = arg.substr(10);
    if (arg.rfind("--device=", 0) == 0) g_device = arg.substr(9);
    if (arg.rfind("--jobs=", 0) == 0) g_jobs = std::max(1, std::atoi(arg.substr(7).c_str()));
  }
  // On a GPU the corpus runs only where there is one: exit 77, which CTest counts as skipped.
  if ((g_backend == "cuda" || !g_device.empty()) && !gpu_listed(g_backend, g_device.empty() ? "0" : g_device)) {
    std::printf("no %s GPU device %s: the grading of the cheat corpus there is skipped\n", g_backend.c_str(),
                g_device.c_str());
    return 77;
  }
  doctest::Context context(argc, argv);
  context.setOption("no-run", false);
  return context.run();
}
