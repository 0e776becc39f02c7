// The compilers, flags and harness libraries CMake recorded in toolchain.json: what builds a student's
// lab files against the pristine harness, so a submission compiles only its own files.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpulab/manifest.hpp"

namespace gpulab::cli {

struct Toolchain {
  std::filesystem::path repo;       // the pristine course repository (labs/ manifests, common/)
  std::filesystem::path build_dir;  // where toolchain.json and the harness libraries are
  nlohmann::json config;

  static Toolchain load(const std::filesystem::path& build_dir);
  bool has_backend(const std::string& backend) const;
  // A tool of the CUDA toolkit ("compute-sanitizer", "ncu"): next to this toolchain's nvcc, else on
  // PATH, else in the usual install folders; "" when there is none.
  std::string cuda_tool(const std::string& name) const;
};

// The pristine harness's identity: its version and a hash of the running gpulab command, the harness
// libraries and the graded manifests; a change regrades everyone and empties the calibration cache.
std::string grader_version(const Toolchain& toolchain, const std::vector<Manifest>& labs, const std::string& backend);

}  // namespace gpulab::cli
