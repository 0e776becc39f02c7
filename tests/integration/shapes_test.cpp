// Shapes a student cannot whitelist: in every lab, a solution that computes only for the shapes the
// student can read in lab.toml (and returns at once for any other) fails on the random cases each run
// draws, while it passes every listed case.
#include <doctest/doctest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

#include "cli_harness.hpp"
#include "gpulab/image.hpp"
#include "gpulab/manifest.hpp"

using namespace gpulab::testing;

namespace {

struct Whitelisted {
  std::string lab_folder, task, file, signature;
  std::vector<std::string> dims;  // the launch function's parameters that make a shape
};

// The shape of a listed case as the launch function sees it.
std::vector<long> shape_of(const gpulab::Case& c, const std::vector<std::string>& dims) {
  std::vector<long> shape;
  const std::string image = c.params.value("image", "");
  for (const auto& dim : dims) {
    if (c.params.contains(dim)) shape.push_back(c.params.at(dim).get<long>());
    else if (dim == "n" && c.params.contains("text")) shape.push_back(static_cast<long>(c.params.at("text").get<std::string>().size()));
    else if (dim == "n") shape.push_back(c.params.at("length").get<long>());
    else if (image.ends_with(".png")) {
      const auto picture = gpulab::read_png(repo_path("common/images/" + image));
      shape.push_back(dim == "width" ? picture.width : picture.height);
    } else FAIL("case " << c.name << " has no " << dim);
  }
  return shape;
}

// C++ that returns from the launch function unless its shape is one the student release lists.
std::string whitelist(const Whitelisted& w) {
  const auto manifest = gpulab::without_hidden_cases(gpulab::load_manifest(repo_path("labs/" + w.lab_folder + "/lab.toml")));
  std::vector<std::string> rows;
  for (const gpulab::Case* c : manifest.cases_for(gpulab::DeviceClass::cpu, w.task))
    rows.push_back(fmt::format("{{{}}}", fmt::join(shape_of(*c, w.dims), ", ")));
  for (const gpulab::Case* c : manifest.cases_for(gpulab::DeviceClass::gpu, w.task))
    if (c->timing) rows.push_back(fmt::format("{{{}}}", fmt::join(shape_of(*c, w.dims), ", ")));
  return fmt::format(
      "\n  static const long listed[][{0}] = {{{1}}};  // planted: only the shapes in lab.toml\n"
      "  const long shape[{0}] = {{{2}}};\n"
      "  bool known = false;\n"
      "  for (const auto& s : listed) known = known || std::equal(s, s + {0}, shape);\n"
      "  if (!known) return;\n",
      w.dims.size(), fmt::join(rows, ", "), fmt::join(w.dims, ", "));
}

}  // namespace

TEST_CASE("in every lab, a solution that computes only the shapes listed in lab.toml fails on the random ones") {
  const std::vector<Whitelisted> labs{
      {"00-hello", "hello", "00-hello/hello_opencl.cpp",
       "void hello(const gpulab::OpenCLLab& lab, const char* text, const int* offsets, char* result, int n) {", {"n"}},
      {"01-matmul", "naive", "01-matmul/matmul_opencl.cpp",
       "void matmul_naive(const gpulab::OpenCLLab& lab, cl_mem a, cl_mem b, cl_mem c, int m, int n, int k) {",
       {"m", "n", "k"}},
      {"02-transpose", "naive", "02-transpose/transpose_opencl.cpp",
       "void transpose_naive(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, int rows, int cols) {", {"rows", "cols"}},
      {"03-bitonic", "any-n", "03-bitonic/bitonic_opencl.cpp",
       "void bitonic_any_n(const gpulab::OpenCLLab& lab, cl_mem keys, int n) {", {"n"}},
      {"04-filter", "box", "04-filter/filter_opencl.cpp",
       "void box_naive(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, int width, int height, int radius) {",
       {"width", "height", "radius"}}};
  SourceTree tree("shapes-whitelist");
  for (const auto& w : labs) {
    tree.replace(w.file, w.signature, w.signature + whitelist(w));
    tree.replace(w.file, "#include", "#include <algorithm>\n#include");
  }
  const auto run = run_check(tree.root(), "--backend opencl --seed 4 --lab hello --lab matmul --lab transpose --lab bitonic "
                                          "--lab filter --task hello --task naive --task any-n --task box");
  INFO(run.output);
  REQUIRE(run.report.is_object());
  const std::vector<std::string> names{"hello", "matmul", "transpose", "bitonic", "filter"};
  for (std::size_t i = 0; i < labs.size(); ++i) {
    CAPTURE(names[i]);
    const auto& task = run.task(names[i], labs[i].task);
    CHECK(task.at("status") == "wrong_result");
    int random_failed = 0;
    for (const auto& c : task.at("cases")) {
      const std::string name = c.at("name");
      CAPTURE(name);
      const bool random = name.rfind("random ", 0) == 0;
      if (!random) CHECK(c.at("passed") == true);  // every listed case, the timing case too
      random_failed += random && !c.at("passed").get<bool>();
    }
    CHECK(random_failed >= 3);
  }
}
