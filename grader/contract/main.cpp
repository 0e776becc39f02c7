// gpulab-contract MANIFEST BACKEND OUTPUT: writes a lab's contract header for one backend (see
// contract.hpp); run by the build for every lab and backend. A malformed manifest stops the build
// with the manifest's file, line and fix.
#include <fmt/format.h>

#include <cstdio>
#include <exception>

#include "contract.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    fmt::print(stderr, "usage: gpulab-contract LAB_TOML BACKEND OUTPUT_HEADER\n");
    return 2;
  }
  try {
    const gpulab::Manifest manifest = gpulab::load_manifest(argv[1]);
    gpulab::write_if_changed(argv[3], gpulab::contract_header(manifest, argv[2], argv[3]));
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}
