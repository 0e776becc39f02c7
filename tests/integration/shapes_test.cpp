// Shapes a student cannot whitelist: in every lab, a solution that computes only for the shapes the
// student can read in lab.toml (and returns at once for any other) fails on the cases each run draws
// (random, large and stress cases, a trimmed timing length), while it passes every listed case.
#include <doctest/doctest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>
#include <string>
#include <vector>

#include "cli_harness.hpp"
#include "gpulab/image.hpp"
#include "gpulab/manifest.hpp"
#include "lab_tests.hpp"

using namespace gpulab::testing;

namespace {

// The shape of a listed case as the launch function sees it.
std::vector<long> shape_of(const gpulab::Case& c, const std::vector<std::string>& dims) {
  std::vector<long> shape;
  const std::string image = c.params.value("image", "");
  for (const auto& dim : dims) {
    if (c.params.contains(dim))
      shape.push_back(c.params.at(dim).get<long>());
    else if (dim == "n" && c.params.contains("text"))
      shape.push_back(static_cast<long>(c.params.at("text").get<std::string>().size()));
    else if (dim == "n")
      shape.push_back(c.params.at("length").get<long>());
    else if (image.ends_with(".png")) {
      const auto picture = gpulab::read_png(repo_path("common/images/" + image));
      shape.push_back(dim == "width" ? picture.width : picture.height);
    } else
      FAIL("case " << c.name << " has no " << dim);
  }
  return shape;
}

// C++ that returns from the launch function unless its shape is one the student release lists.
std::string whitelist(const LabTests& lab) {
  const auto manifest = gpulab::without_hidden_cases(lab.manifest);
  const auto& dims = lab.shapes_dims;
  std::vector<std::string> rows;
  for (const gpulab::Case* c : manifest.cases_for(gpulab::DeviceClass::cpu, lab.shapes_task))
    rows.push_back(fmt::format("{{{}}}", fmt::join(shape_of(*c, dims), ", ")));
  for (const gpulab::Case* c : manifest.cases_for(gpulab::DeviceClass::gpu, lab.shapes_task))
    if (c->timing) rows.push_back(fmt::format("{{{}}}", fmt::join(shape_of(*c, dims), ", ")));
  return fmt::format(
      "\n  static const long listed[][{0}] = {{{1}}};  // planted: only the shapes in lab.toml\n"
      "  const long shape[{0}] = {{{2}}};\n"
      "  bool known = false;\n"
      "  for (const auto& s : listed) known = known || std::equal(s, s + {0}, shape);\n"
      "  if (!known) return;\n",
      dims.size(), fmt::join(rows, ", "), fmt::join(dims, ", "));
}

// Plants the whitelist in the task's OpenCL launch function: the original, renamed, runs only for a
// listed shape. Renaming rather than editing its body works however the signature is laid out.
void plant_whitelist(SourceTree& tree, const LabTests& lab) {
  const fs::path folder = tree.root() / lab.manifest.id;
  const auto task = find_signature(lab.manifest, folder, "opencl", lab.manifest.find_task(lab.shapes_task)->function);
  REQUIRE(task);  // the unit test of the declarations says what is wrong
  const std::string name = task->opening.substr(0, task->opening.size() - 1);
  const std::string all_shapes = name.substr(5) + "_all_shapes";
  tree.replace(lab.manifest.id + "/" + task->file, task->opening,
               "void " + all_shapes + "(" + task->parameters + ");\n\n" + task->opening + task->parameters + ") {" +
                   whitelist(lab) + "  " + all_shapes + "(" + task->arguments + ");\n}\n\nvoid " + all_shapes + "(");
  tree.replace(lab.manifest.id + "/" + task->file, "#include", "#include <algorithm>\n#include");
}

// The cases whose shape lab.toml lists: the fixed ones, a timing case only if its length is not
// trimmed anew every run.
std::set<std::string> listed_case_names(const LabTests& lab) {
  std::set<std::string> names;
  for (const auto& c : lab.manifest.cases)
    if (c.trim.empty()) names.insert(c.name);
  return names;
}

}  // namespace

TEST_CASE(
    "in every lab, a solution that computes only the shapes listed in lab.toml fails on the cases each run draws") {
  const auto labs = all_lab_tests();
  SourceTree tree("shapes-whitelist");
  std::string args = "--backend opencl --seed 4";
  for (const auto& lab : labs) {
    plant_whitelist(tree, lab);
    args += " --lab " + lab.name() + " --task " + lab.shapes_task;
  }
  const auto run = run_check(tree.root(), args);
  INFO(run.output);
  REQUIRE(run.report.is_object());
  for (const auto& lab : labs) {
    CAPTURE(lab.name());
    const auto& task = run.task(lab.name(), lab.shapes_task);
    CHECK(task.at("status") == "wrong_result");
    const auto listed = listed_case_names(lab);
    int listed_passed = 0, drawn_failed = 0;
    for (const auto& c : task.at("cases")) {
      const std::string name = c.at("name");
      CAPTURE(name);
      const bool passed = c.at("passed");
      if (listed.contains(name)) {
        CHECK(passed);
        listed_passed += passed;
      } else {
        drawn_failed += !passed;
      }
    }
    CHECK(listed_passed >= 3);
    CHECK(drawn_failed >= 3);
  }
}
