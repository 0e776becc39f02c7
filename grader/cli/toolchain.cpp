#include "toolchain.hpp"

#include <fmt/format.h>

#include <fstream>
#include <stdexcept>

#include "files.hpp"

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

}  // namespace gpulab::cli
