// Planted faults of the classes a grade must follow from the lab's contract rather than from the
// cases someone thought of (solutions/<lab id>/verdicts.toml; the format: solutions/VERDICTS.md): kernels wrong only above some
// size X, wrong only for inputs of some statistic, computing in lower precision. Each is the reference
// solution with a few lines edited; `gpulab check` must give its task the expected verdict for every
// X the entry lists (as fractions of the task's timing size on the device class).
//
//   gpulab_verdict_tests --lab=ID [--backend=opencl|cuda] [--device=N] [--all-x]
//
// OpenCL on its first device by default (PoCL in CI), one X per fault, drawn from the run's seed;
// --all-x tries every X (the GPU test). Exits 77 (skipped) when the backend has no device.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "cli_harness.hpp"
#include "gpulab/manifest.hpp"

using namespace gpulab::testing;

namespace {

struct Options {
  std::string lab, backend = "opencl", device;
  bool all_x = false;
};

Options& options() {
  static Options o;
  return o;
}

// One edit of a solution file: `from` must be there (a fixture cannot silently stop planting).
struct Edit {
  std::string file, from, to;
};

struct Planted {
  std::string name, task, what, expect;
  std::vector<double> x;                     // fractions of the timing size; empty: no X
  std::vector<gpulab::DeviceClass> devices;  // empty: every class
  std::vector<Edit> edits;
};

std::vector<Planted> read_planted(const fs::path& file) {
  const toml::table table = toml::parse_file(file.string());
  std::vector<Planted> out;
  const toml::array* entries = table["planted"].as_array();
  REQUIRE_MESSAGE(entries, std::string(file.string() + " has no [[planted]] entries"));
  for (const auto& node : *entries) {
    const toml::table& t = *node.as_table();
    Planted p{t["name"].value_or(std::string{}),
              t["task"].value_or(std::string{}),
              t["what"].value_or(std::string{}),
              t["expect"].value_or(std::string("wrong_result")),
              {},
              {},
              {}};
    if (const auto* x = t["x"].as_array())
      for (const auto& v : *x) p.x.push_back(v.value<double>().value_or(-1));
    if (const auto* devices = t["devices"].as_array())
      for (const auto& d : *devices)
        p.devices.push_back(d.value_or(std::string{}) == "gpu" ? gpulab::DeviceClass::gpu : gpulab::DeviceClass::cpu);
    if (const auto* edits = t["edit"].as_array())
      for (const auto& e : *edits) {
        const toml::table& et = *e.as_table();
        p.edits.push_back(
            {et["file"].value_or(std::string{}), et["from"].value_or(std::string{}), et["to"].value_or(std::string{})});
      }
    out.push_back(std::move(p));
  }
  return out;
}

gpulab::DeviceClass device_class() {
  const Options& o = options();
  if (o.backend == "cuda") return gpulab::DeviceClass::gpu;
  return gpu_listed(o.backend, o.device.empty() ? "0" : o.device) ? gpulab::DeviceClass::gpu : gpulab::DeviceClass::cpu;
}

// The task's timing size on the device class (the product of the case's size parameters).
double timing_size(const gpulab::Manifest& m, const std::string& task, gpulab::DeviceClass device) {
  for (const gpulab::Case* c : m.cases_for(device, task))
    if (c->timing)
      if (auto size = m.case_size(*c)) return *size;
  return 0;
}

// The edits of the backend's files, with PLANTED_X replaced by `x`.
std::vector<Edit> edits_for(const Planted& p, const gpulab::Manifest& m, long long x) {
  std::vector<Edit> out;
  const auto& files = m.files.at(options().backend);
  for (Edit e : p.edits) {
    if (std::find(files.begin(), files.end(), e.file) == files.end()) continue;
    for (std::size_t at; (at = e.to.find("PLANTED_X")) != std::string::npos;) e.to.replace(at, 9, std::to_string(x));
    out.push_back(std::move(e));
  }
  return out;
}

// Grades the solution with `edits` planted, and checks the task's verdict.
void check_planted(const Planted& p, const gpulab::Manifest& m, const std::vector<Edit>& edits, long long x,
                   std::uint64_t seed) {
  SourceTree tree(fmt::format("verdicts-{}-{}-{}", options().backend, p.name, x));
  for (const Edit& e : edits) tree.replace(m.id + "/" + e.file, e.from, e.to);
  const auto run = run_check(
      tree.root(), fmt::format("--backend {} --lab {} --task {} --seed {}{}", options().backend, m.name, p.task, seed,
                               options().device.empty() ? "" : " --device " + options().device));
  INFO(run.output);
  REQUIRE(run.report.is_object());
  const auto& task = run.task(m.name, p.task);
  INFO(task.dump(2));
  CHECK(task.at("status") == p.expect);
  CHECK(task.at("points") == 0);
}

}  // namespace

TEST_CASE("every planted fault of the lab gets its verdict for every X its contract allows") {
  const Options& o = options();
  const gpulab::Manifest m = [&] {
    for (auto& lab : gpulab::load_all_manifests(repo_path("labs")))
      if (lab.id == o.lab || lab.name == o.lab) return lab;
    FAIL("no lab " << o.lab);
    return gpulab::Manifest{};
  }();
  const auto device = device_class();
  const std::uint64_t seed = std::random_device{}();
  MESSAGE(fmt::format("lab {} on {} ({}), seed {}", m.id, o.backend, gpulab::to_string(device), seed));
  int graded = 0;
  for (const Planted& p : read_planted(repo_path("solutions") / m.id / "verdicts.toml")) {
    CAPTURE(p.name);
    CAPTURE(p.what);
    REQUIRE(m.find_task(p.task));
    if (!p.devices.empty() && std::find(p.devices.begin(), p.devices.end(), device) == p.devices.end()) continue;
    const double top = timing_size(m, p.task, device);
    std::vector<long long> xs;
    for (const double f : p.x) xs.push_back(static_cast<long long>(std::floor(f * top)));
    if (xs.empty()) xs.push_back(0);
    if (!o.all_x) xs = {xs[seed % xs.size()]};
    for (const long long x : xs) {
      CAPTURE(x);
      const auto edits = edits_for(p, m, x);
      if (edits.empty()) break;  // nothing of this fault in the backend's files
      check_planted(p, m, edits, x, seed);
      ++graded;
    }
  }
  CHECK(graded > 0);
}

int main(int argc, char** argv) {
  Options& o = options();
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--lab=", 0) == 0) o.lab = arg.substr(6);
    if (arg.rfind("--backend=", 0) == 0) o.backend = arg.substr(10);
    if (arg.rfind("--device=", 0) == 0) o.device = arg.substr(9);
    if (arg == "--all-x") o.all_x = true;
  }
  std::string devices;
  run_command(std::string("'") + GPULAB_CLI + "' devices", devices);
  if (devices.find(o.backend + ":") == std::string::npos ||
      devices.find(o.backend + ": no device") != std::string::npos ||
      (!o.device.empty() && !gpu_listed(o.backend, o.device))) {
    std::puts("no such device: the planted-verdict tests of this backend are skipped");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
