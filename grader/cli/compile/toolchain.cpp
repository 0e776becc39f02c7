#include "toolchain.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "files.hpp"
#include "sha256.hpp"

#ifndef GPULAB_VERSION
#define GPULAB_VERSION "0"
#endif

namespace gpulab::cli {

namespace fs = std::filesystem;

Toolchain Toolchain::load(const fs::path& build_dir) {
  const fs::path file = build_dir / "toolchain.json";
  std::ifstream in(file);
  if (!in)
    throw std::runtime_error(fmt::format("{} is missing: build the harness first (make check does)", file.string()));
  Toolchain t;
  t.build_dir = build_dir;
  in >> t.config;
  t.repo = t.config.at("repo").get<std::string>();
  return t;
}

bool Toolchain::has_backend(const std::string& backend) const {
  return config.contains("backends") && config["backends"].contains(backend);
}

std::string Toolchain::cuda_tool(const std::string& name) const {
  const std::string nvcc = config.contains("cuda") ? config["cuda"].value("nvcc", "") : "";
  if (!nvcc.empty())
    if (const fs::path next_to = fs::path(nvcc).parent_path() / name; fs::exists(next_to)) return next_to.string();
  if (std::string in_path = find_program(name); !in_path.empty()) return in_path;
  for (const fs::path folder : {"/usr/local/cuda/bin", "/opt/cuda/bin"})
    if (fs::exists(folder / name)) return (folder / name).string();
  return {};
}

std::string grader_version(const Toolchain& tc, const std::vector<Manifest>& labs, const std::string& backend) {
  Sha256 h;
  h.update(GPULAB_VERSION);
  h.update_file(fs::canonical("/proc/self/exe"));
  h.update_file(tc.build_dir / "toolchain.json");
  // What student code may use: a changed list regrades everyone.
  std::vector<fs::path> lists;
  for (const auto& e : fs::directory_iterator(tc.repo / "grader" / "allowlist")) lists.push_back(e.path());
  std::sort(lists.begin(), lists.end());
  for (const auto& list : lists) h.update_file(list);
  for (const auto& m : labs) {
    h.update_file(m.path);
    const std::string key = m.name + "/" + backend;
    if (tc.config["labs"].contains(key))
      for (const auto& lib : tc.config["labs"][key]) h.update_file(lib.get<std::string>());
  }
  return fmt::format("{}+{}", GPULAB_VERSION, h.hex().substr(0, 12));
}

}  // namespace gpulab::cli
