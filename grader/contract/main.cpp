// gpulab-contract MANIFEST BACKEND OUTPUT: writes a lab's contract header for one backend (see
// contract.hpp); run by the build for every lab and backend. A malformed manifest stops the build
// with the manifest's file, line and fix.
// gpulab-contract --opencl-kernels LAB OUTPUT_FOLDER KERNEL.cl...: writes opencl_kernels.hpp and
// opencl_kernels.cpp, the lab's harness OpenCL kernels encoded (kernel_embedding.hpp).
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "contract.hpp"
#include "kernel_embedding.hpp"

namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("cannot read {}", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_opencl_kernels(int argc, char** argv) {
  std::vector<gpulab::OpenClKernelFile> kernels;
  for (int i = 4; i < argc; ++i) {
    const std::filesystem::path file = argv[i];
    kernels.push_back({gpulab::opencl_kernel_name(file.filename().string()), read_file(file)});
  }
  const auto embedded = gpulab::embed_opencl_kernels(argv[2], kernels);
  gpulab::write_if_changed(std::filesystem::path(argv[3]) / "opencl_kernels.hpp", embedded.header);
  gpulab::write_if_changed(std::filesystem::path(argv[3]) / "opencl_kernels.cpp", embedded.source);
}

}  // namespace

int main(int argc, char** argv) {
  const bool kernels = argc >= 2 && std::string_view(argv[1]) == "--opencl-kernels";
  if (kernels ? argc < 5 : argc != 4) {
    fmt::print(stderr,
               "usage: gpulab-contract LAB_TOML BACKEND OUTPUT_HEADER\n"
               "       gpulab-contract --opencl-kernels LAB OUTPUT_FOLDER KERNEL.cl...\n");
    return 2;
  }
  try {
    if (kernels) {
      write_opencl_kernels(argc, argv);
      return 0;
    }
    const gpulab::Manifest manifest = gpulab::load_manifest(argv[1]);
    gpulab::write_if_changed(argv[3], gpulab::contract_header(manifest, argv[2], argv[3]));
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}
