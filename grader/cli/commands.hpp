// What the student's command (main.cpp) and the instructor's (grader/instructor/main.cpp) both do
// before they run anything: find the build, the labs named on the command line and the backend.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "gpulab/manifest.hpp"
#include "toolchain.hpp"

namespace gpulab::cli {

// The folder of the running command: the build folder, with toolchain.json.
std::filesystem::path own_directory();

// The labs named by folder, name or number (all when none is named); throws, listing the labs, for a
// name no lab has.
std::vector<Manifest> select_labs(const Toolchain& tc, const std::vector<std::string>& wanted);

// `requested` when this build has it, else the first backend with a usable device (CUDA first);
// throws with what to install or run instead.
std::string choose_backend(const Toolchain& tc, const std::string& requested);

}  // namespace gpulab::cli
