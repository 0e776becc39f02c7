// The harness's OpenCL kernels as the build embeds them and the student release ships them
// (grader/contract/kernel_embedding.hpp): no kernel text readable, one function per file.
#include <doctest/doctest.h>

#include <stdexcept>

#include "kernel_embedding.hpp"

namespace {

const std::string kNaive = "__kernel void harness_naive(__global float* x) {\n  x[get_global_id(0)] *= 2.0f;\n}\n";

}  // namespace

TEST_CASE("the embedded OpenCL kernels hold no readable text of the kernels, and declare one function per file") {
  const auto embedded = gpulab::embed_opencl_kernels("first", {{"harness_naive", kNaive}, {"staff_tree", "kernel"}});
  for (const char* text : {"__kernel", "harness_naive(__global", "get_global_id", "2.0f"})
    CHECK_MESSAGE(embedded.source.find(text) == std::string::npos, text);
  CHECK(embedded.header.find("namespace gpulab::labs::first_opencl_kernels {") != std::string::npos);
  CHECK(embedded.header.find("std::string harness_naive();") != std::string::npos);
  CHECK(embedded.header.find("std::string staff_tree();") != std::string::npos);
  CHECK(embedded.source.find("gpulab::labs::first_opencl_kernels::harness_naive()") != std::string::npos);
  CHECK(embedded.source.find("decode(k_harness_naive, " + std::to_string(kNaive.size()) + ",") != std::string::npos);
}

TEST_CASE("two kernel files with the same text are encoded differently, and the encoding is the same every time") {
  const auto embedded = gpulab::embed_opencl_kernels("first", {{"one", kNaive}, {"two", kNaive}});
  const auto array_of = [&](const std::string& name) {
    const auto open = embedded.source.find("k_" + name + "[] = {") + name.size() + 8;
    return embedded.source.substr(open, embedded.source.find('}', open) - open);
  };
  CHECK(array_of("one").size() > kNaive.size());  // the numbers, not what follows them
  CHECK(array_of("one") != array_of("two"));
  CHECK(gpulab::embed_opencl_kernels("first", {{"one", kNaive}, {"two", kNaive}}).source == embedded.source);
}

TEST_CASE("a kernel file or lab whose name is not a C++ identifier is refused, naming it") {
  CHECK(gpulab::opencl_kernel_name("harness_naive.cl") == "harness_naive");
  CHECK_THROWS_WITH_AS(gpulab::opencl_kernel_name("naive-kernel.cl"), doctest::Contains("'naive-kernel'"),
                       std::invalid_argument);
  CHECK_THROWS_AS(gpulab::opencl_kernel_name("kernel.cpp"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(gpulab::embed_opencl_kernels("2d-filter", {{"k", kNaive}}), doctest::Contains("'2d-filter'"),
                       std::invalid_argument);
}
