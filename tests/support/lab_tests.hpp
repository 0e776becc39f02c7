// What the generic tests know about each lab, read from the lab's own folder rather than a central
// table: labs/NN-<name>/grader/tests/lab_tests.toml (docs/instructors.md, "Adding a lab", says what it
// declares). A lab's launch functions are found in its student files by the function names lab.toml
// gives its tasks.
#pragma once
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "cli_harness.hpp"
#include "gpulab/manifest.hpp"

namespace gpulab::testing {

// A task's launch function replaced by a call to a weaker task's (naive submitted as optimized):
// it must fail the task's threshold with margin on a GPU.
struct WeakerCall {
  std::string task, calls;
};

struct LabTests {
  gpulab::Manifest manifest;  // labs/<id>/lab.toml
  fs::path declarations;      // labs/NN-<name>/grader/tests/lab_tests.toml
  std::vector<WeakerCall> weaker_calls;
  // Tasks whose weaker versions are whole files, solutions/<id>/weaker/*, copied over the solution's
  // (kernels without shared memory): each must fail its threshold with margin on a GPU.
  std::vector<std::string> weaker_file_tasks;
  // The task a shapes whitelist is planted in, and the launch function's parameters that make a shape.
  std::string shapes_task;
  std::vector<std::string> shapes_dims;

  const std::string& name() const { return manifest.name; }
  fs::path weaker_files() const { return repo_path("solutions") / manifest.id / "weaker"; }
};

inline std::vector<std::string> toml_strings(const toml::node_view<const toml::node>& node) {
  std::vector<std::string> out;
  if (const auto* array = node.as_array())
    for (const auto& item : *array) out.push_back(item.value<std::string>().value_or(""));
  return out;
}

inline LabTests load_lab_tests(const gpulab::Manifest& manifest) {
  LabTests lab{manifest, repo_path("labs") / manifest.id / "grader/tests/lab_tests.toml", {}, {}, {}, {}};
  if (!fs::exists(lab.declarations)) throw std::runtime_error(lab.declarations.string() + " is missing");
  const toml::table table = toml::parse_file(lab.declarations.string());
  if (const auto* weaker = table["weaker"].as_array())
    for (const auto& entry : *weaker) {
      const auto& t = *entry.as_table();
      lab.weaker_calls.push_back({t["task"].value_or(std::string{}), t["calls"].value_or(std::string{})});
    }
  lab.weaker_file_tasks = toml_strings(table["weaker_files"]["tasks"]);
  lab.shapes_task = table["shapes"]["task"].value_or(std::string{});
  lab.shapes_dims = toml_strings(table["shapes"]["dims"]);
  return lab;
}

// Every lab of the course (labs/*/lab.toml), with its declarations.
inline std::vector<LabTests> all_lab_tests() {
  std::vector<LabTests> labs;
  for (const auto& manifest : gpulab::load_all_manifests(committed_labs())) labs.push_back(load_lab_tests(manifest));
  return labs;
}

// A launch function as defined in a student file: `void name(parameters)` at the start of a line.
struct Signature {
  std::string file;        // relative to the lab's folder
  std::string opening;     // "void name(", what a test replaces to plant a change
  std::string parameters;  // "const float* in, float* out, int rows, int cols"
  std::string arguments;   // "in, out, rows, cols": the parameters' names, to forward a call
};

inline std::string trimmed(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\n"), last = s.find_last_not_of(" \t\n");
  return first == std::string::npos ? "" : s.substr(first, last - first + 1);
}

// `s` with each run of spaces, tabs and line breaks made one space: a parameter list wrapped over
// two lines declares the same parameters as one written on one line.
inline std::string collapsed_whitespace(const std::string& s) {
  std::string out;
  for (const char c : trimmed(s)) {
    const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r';
    if (!space)
      out += c;
    else if (!out.empty() && out.back() != ' ')
      out += ' ';
  }
  return out;
}

// The names of a parameter list, in order: the last identifier of each parameter.
inline std::string parameter_names(const std::string& parameters) {
  std::string names;
  std::size_t begin = 0;
  while (begin <= parameters.size()) {
    const auto end = std::min(parameters.find(',', begin), parameters.size());
    const std::string parameter = trimmed(parameters.substr(begin, end - begin));
    const auto name = parameter.find_last_of(" *&");
    names += (names.empty() ? "" : ", ") + parameter.substr(name == std::string::npos ? 0 : name + 1);
    begin = end + 1;
  }
  return names;
}

// The host launch function `function` in the lab's files of `backend` (kernel sources, .cl, hold
// none), under `lab_folder` (solutions/<id> or labs/<id>); nothing when no file defines it.
inline std::optional<Signature> find_signature(const gpulab::Manifest& manifest, const fs::path& lab_folder,
                                               const std::string& backend, const std::string& function) {
  const auto files = manifest.files.find(backend);
  if (files == manifest.files.end()) return std::nullopt;
  const std::string opening = "void " + function + "(";
  for (const auto& file : files->second) {
    if (file.ends_with(".cl")) continue;
    const std::string text = "\n" + read_file(lab_folder / file);
    const auto at = text.find("\n" + opening);
    if (at == std::string::npos) continue;
    const auto open = at + 1 + opening.size(), close = text.find(')', open);
    if (close == std::string::npos) continue;
    const std::string parameters = collapsed_whitespace(text.substr(open, close - open));
    return Signature{file, opening, parameters, parameter_names(parameters)};
  }
  return std::nullopt;
}

// Plants a declared weaker kernel in `tree` (a copy of the solutions) for `backend`: the task's launch
// function becomes a call to the weaker task's, defined where the original was, so code after it that
// calls the original still compiles. Returns the weaker function's name; throws if a function is
// missing (the unit test of the declarations says which).
inline std::string plant_weaker_call(SourceTree& tree, const LabTests& lab, const WeakerCall& w,
                                     const std::string& backend) {
  const fs::path folder = tree.root() / lab.manifest.id;
  const std::string function = lab.manifest.find_task(w.task)->function;
  const auto task = find_signature(lab.manifest, folder, backend, function);
  if (!task) throw std::runtime_error("no " + backend + " file of " + lab.manifest.id + " defines " + function);
  const std::string weaker = lab.manifest.find_task(w.calls)->function;
  tree.replace(lab.manifest.id + "/" + task->file, task->opening,
               task->opening + task->parameters + ") {\n  " + weaker + "(" + task->arguments + ");\n}\n\nvoid " +
                   function + "_unused(");
  return weaker;
}

// Copies the lab's whole weaker files (solutions/<id>/weaker/) over the solution's in `tree`.
inline void plant_weaker_files(SourceTree& tree, const LabTests& lab) {
  for (const auto& file : fs::directory_iterator(lab.weaker_files()))
    if (file.path().extension() != ".md")
      fs::copy_file(file.path(), tree.root() / lab.manifest.id / file.path().filename(),
                    fs::copy_options::overwrite_existing);
}

}  // namespace gpulab::testing
