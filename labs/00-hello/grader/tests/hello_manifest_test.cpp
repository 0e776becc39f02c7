// The hello lab's manifest: the one lab whose students copy to and from the host themselves.
#include <doctest/doctest.h>

#include <filesystem>

#include "gpulab/manifest.hpp"

TEST_CASE("the hello lab allows its students the host copies of its lesson, and nothing else") {
  const auto m = gpulab::load_manifest(std::filesystem::path(GPULAB_REPO) / "labs" / "00-hello" / "lab.toml");
  CHECK(m.allow == std::vector<std::string>{"cudaMemcpy", "clEnqueueReadBuffer"});
  CHECK(m.forbidden_headers.empty());
}
