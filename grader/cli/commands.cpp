#include "commands.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>

#include "gpulab/device.hpp"
#include "lab_run.hpp"  // lab_named

namespace gpulab::cli {

namespace fs = std::filesystem;

fs::path own_directory() { return fs::canonical("/proc/self/exe").parent_path(); }

std::vector<Manifest> select_labs(const Toolchain& tc, const std::vector<std::string>& wanted) {
  auto all = load_all_manifests(tc.repo / "labs");
  if (wanted.empty()) return all;
  std::vector<Manifest> out;
  for (const auto& w : wanted) {
    auto it = std::find_if(all.begin(), all.end(), [&](const Manifest& m) { return lab_named(m.id, m.name, w); });
    if (it == all.end()) {
      std::string names;
      for (const auto& m : all) names += " " + m.name;
      throw std::invalid_argument(fmt::format("LAB={} matches no lab; the labs are:{}", w, names));
    }
    out.push_back(*it);
  }
  return out;
}

std::string choose_backend(const Toolchain& tc, const std::string& requested) {
  const auto compiled = available_backends();
  if (!requested.empty()) {
    if (std::find(compiled.begin(), compiled.end(), requested) == compiled.end() || !tc.has_backend(requested))
      throw std::invalid_argument(fmt::format(
          "BACKEND={} is not available in this build (available: {}){}", requested, fmt::join(compiled, ", "),
          requested == "cuda"
              ? ": CUDA (nvcc) was not found when the grader was built; install the CUDA Toolkit, "
                "then run `make clean` and `make check` again; meanwhile `make check BACKEND=opencl` runs the OpenCL "
                "labs"
              : ""));
    return requested;
  }
  for (const auto& b : compiled)
    if (tc.has_backend(b) && !list_devices(b).empty()) return b;  // CUDA first, when a GPU is usable
  throw std::runtime_error(
      "no CUDA or OpenCL device found. Without an NVIDIA GPU, install PoCL (sudo apt-get install pocl-opencl-icd) "
      "to run the OpenCL labs on the CPU");
}

}  // namespace gpulab::cli
