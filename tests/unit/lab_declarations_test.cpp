// The declarations each lab makes for the generic tests (labs/NN-<name>/grader/tests/lab_tests.toml) name
// tasks, functions and files that exist, so a broken one fails here, on any machine, rather than in the
// GPU test only the GPU machine runs.
#include <doctest/doctest.h>

#include <set>

#include "lab_tests.hpp"

using namespace gpulab::testing;

namespace {

const gpulab::Task& require_task(const LabTests& lab, const std::string& name) {
  const gpulab::Task* task = lab.manifest.find_task(name);
  INFO(lab.declarations.string() << " names task '" << name << "', which " << lab.manifest.path.string()
                                 << " does not have");
  REQUIRE(task != nullptr);
  return *task;
}

// The folders whose student files the tests edit: the reference solutions, and the skeletons, which
// keep the same contract.
std::vector<fs::path> lab_folders(const LabTests& lab) {
  std::vector<fs::path> folders{committed_labs() / lab.manifest.id};
  if (fs::exists(repo_path("solutions"))) folders.push_back(repo_path("solutions") / lab.manifest.id);
  return folders;
}

Signature require_signature(const LabTests& lab, const fs::path& folder, const std::string& backend,
                            const std::string& task) {
  const std::string function = require_task(lab, task).function;
  const auto signature = find_signature(lab.manifest, folder, backend, function);
  INFO("no " << backend << " file of " << folder.string() << " defines `void " << function
             << "(` at the start of a line");
  REQUIRE(signature.has_value());
  return *signature;
}

std::set<std::string> names_of(const std::string& arguments) {
  std::set<std::string> names;
  for (std::size_t begin = 0, end; begin < arguments.size(); begin = end + 2) {
    end = std::min(arguments.find(", ", begin), arguments.size());
    names.insert(arguments.substr(begin, end - begin));
  }
  return names;
}

}  // namespace

TEST_CASE("every lab declares what the generic tests need, in its own folder") {
  const auto labs = all_lab_tests();
  REQUIRE(labs.size() >= 2);
  for (const auto& lab : labs) {
    CAPTURE(lab.name());
    CHECK_MESSAGE(!lab.shapes_task.empty(), lab.declarations.string() << " has no [shapes] task");
    CHECK_MESSAGE(!lab.shapes_dims.empty(), lab.declarations.string() << " has no [shapes] dims");
  }
}

TEST_CASE("every weaker kernel a lab declares replaces a task's launch function by one with the same parameters") {
  for (const auto& lab : all_lab_tests())
    for (const auto& w : lab.weaker_calls) {
      CAPTURE(lab.name());
      CAPTURE(w.task);
      CHECK(w.task != w.calls);
      for (const auto& folder : lab_folders(lab))
        for (const auto& [backend, files] : lab.manifest.files) {
          CAPTURE(folder);
          CAPTURE(backend);
          const Signature task = require_signature(lab, folder, backend, w.task);
          const Signature weaker = require_signature(lab, folder, backend, w.calls);
          CHECK(task.parameters == weaker.parameters);  // so the call the GPU test plants compiles
        }
    }
}

TEST_CASE("every task with a GPU threshold has a weaker kernel declared, which the GPU test shows fails it") {
  for (const auto& lab : all_lab_tests()) {
    CAPTURE(lab.name());
    std::set<std::string> weaker(lab.weaker_file_tasks.begin(), lab.weaker_file_tasks.end());
    for (const auto& w : lab.weaker_calls) weaker.insert(w.task);
    for (const auto& task : weaker) CHECK_MESSAGE(require_task(lab, task).threshold, task << " has no threshold");
    for (const auto& task : lab.manifest.tasks)
      if (task.threshold && task.threshold->bounds.contains("gpu"))
        CHECK_MESSAGE(weaker.contains(task.name), lab.declarations.string() << " declares no weaker " << task.name);
  }
}

TEST_CASE("the whole weaker files a lab declares replace student files of that lab") {
  for (const auto& lab : all_lab_tests()) {
    if (lab.weaker_file_tasks.empty() || !fs::exists(repo_path("solutions"))) continue;
    CAPTURE(lab.name());
    REQUIRE(fs::is_directory(lab.weaker_files()));
    std::set<std::string> student_files;
    for (const auto& [backend, files] : lab.manifest.files) student_files.insert(files.begin(), files.end());
    int replaced = 0;
    for (const auto& file : fs::directory_iterator(lab.weaker_files())) {
      if (file.path().extension() == ".md") continue;
      CAPTURE(file.path());
      CHECK(student_files.contains(file.path().filename().string()));
      ++replaced;
    }
    CHECK(replaced > 0);
  }
}

TEST_CASE("the shape parameters a lab declares are parameters of its task's launch function") {
  for (const auto& lab : all_lab_tests()) {
    CAPTURE(lab.name());
    const Signature signature = require_signature(lab, committed_labs() / lab.manifest.id, "opencl", lab.shapes_task);
    const auto names = names_of(signature.arguments);
    for (const auto& dim : lab.shapes_dims)
      CHECK_MESSAGE(names.contains(dim), dim << " is not a parameter of " << signature.opening);
  }
}

TEST_CASE("a parameter list wrapped over two lines reads the same as the list written on one line") {
  CHECK(collapsed_whitespace("const float* in,\n                 float* out,\tint n ") ==
        "const float* in, float* out, int n");
  CHECK(collapsed_whitespace("int  n") == "int n");
  CHECK(collapsed_whitespace("const float* in, float* out") != collapsed_whitespace("const float* in, int* out"));
  CHECK(parameter_names(collapsed_whitespace("const float4* bodies,\n    float4* accel, int n")) == "bodies, accel, n");
}
