#include "toolchain.hpp"

#include <fmt/format.h>

#include <fstream>
#include <stdexcept>

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

}  // namespace gpulab::cli
