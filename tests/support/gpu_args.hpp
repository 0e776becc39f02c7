// The arguments that pick the GPU for `gpulab check` in the GPU-only tests.
#pragma once
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>

namespace gpulab::testing {

inline std::string gpu_args(const std::string& backend) {
  // OpenCL lists GPUs first, so device 0 is the GPU when there is one.
  return "--backend " + backend + " --device 0";
}

// GPULAB_TEST_LABS=nbody,streams limits the GPU tests to those labs (a GPU run with little time left
// re-proves the labs it changed); unset or empty: every lab.
inline std::set<std::string> selected_labs() {
  std::set<std::string> labs;
  const char* env = std::getenv("GPULAB_TEST_LABS");
  std::stringstream list(env ? env : "");
  for (std::string lab; std::getline(list, lab, ',');)
    if (!lab.empty()) labs.insert(lab);
  return labs;
}

inline bool lab_selected(const std::string& lab) {
  const auto labs = selected_labs();
  return labs.empty() || labs.contains(lab);
}

// `--lab x` for each selected lab, or nothing (every lab).
inline std::string selected_lab_args() {
  std::string args;
  for (const auto& lab : selected_labs()) args += " --lab " + lab;
  return args;
}

}  // namespace gpulab::testing
