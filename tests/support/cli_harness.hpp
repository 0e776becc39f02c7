// Test support: builds a source tree from the solutions with planted changes, runs the gpulab
// command on it, and reads its JSON report.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace gpulab::testing {

namespace fs = std::filesystem;

inline fs::path repo_path(const std::string& relative) { return fs::path(GPULAB_REPO) / relative; }
// The skeletons as committed (tests/support/export_skeletons.cmake), never the working tree's labs/,
// which a student or an instructor trying a lab edits: a test of the skeletons must not fail (or
// pass) because of those edits.
inline fs::path committed_labs() { return fs::path(GPULAB_SKELETONS) / "labs"; }
// "labs" as committed; any other folder of the repository as it is (solutions/, tests/fixtures/).
inline fs::path tree_path(const std::string& tree) { return tree == "labs" ? committed_labs() : repo_path(tree); }
// The instructor repository has solutions/; a student repository (gpulab release) has not. Tests of
// the reference solutions are skipped (doctest::skip, so not even listed) in a student repository.
inline bool instructor_repository() { return fs::is_directory(repo_path("solutions")); }

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_file(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// `text` with the first `from` replaced by `to`; throws if `from` is absent, so a test cannot silently
// stop planting its fault when the text it edits changes.
inline std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  if (at == std::string::npos) throw std::runtime_error("fixture: '" + from + "' not found");
  return text.replace(at, from.size(), to);
}

// A copy of solutions/ (or labs/) in a scratch folder, edited by the test.
class SourceTree {
 public:
  SourceTree(const std::string& name, const std::string& from = "solutions") : root_(fs::path(GPULAB_SCRATCH) / name) {
    fs::remove_all(root_);
    fs::create_directories(root_);
    fs::copy(tree_path(from), root_, fs::copy_options::recursive);
  }
  const fs::path& root() const { return root_; }
  // Replaces the first occurrence of `from` in `file` (see replaced()).
  SourceTree& replace(const std::string& file, const std::string& from, const std::string& to) {
    try {
      write_file(root_ / file, replaced(read_file(root_ / file), from, to));
    } catch (const std::runtime_error& e) { throw std::runtime_error(std::string(e.what()) + " in " + file); }
    return *this;
  }
  SourceTree& append(const std::string& file, const std::string& text) {
    write_file(root_ / file, read_file(root_ / file) + "\n" + text + "\n");
    return *this;
  }
  SourceTree& remove(const std::string& file) {
    fs::remove(root_ / file);
    return *this;
  }

 private:
  fs::path root_;
};

struct CliRun {
  int exit_code = -1;
  std::string output;
  nlohmann::json report;

  // The result of one task, by lab name and task name; throws if the report has none.
  const nlohmann::json& task(const std::string& lab, const std::string& name) const {
    for (const auto& l : report.at("labs"))
      if (l.at("name") == lab)
        for (const auto& t : l.at("tasks"))
          if (t.at("task") == name) return t;
    throw std::runtime_error("no task " + lab + "/" + name + " in the report:\n" + output);
  }
  std::string status(const std::string& lab, const std::string& name) const {
    return task(lab, name).at("status").get<std::string>();
  }
};

// Whether a task computed every case right. Speed on this CPU is not asserted: CI is a loaded
// 2-core machine, and the GPU test proves the thresholds separate naive from optimized kernels.
inline bool ran_correctly(const nlohmann::json& task) {
  const std::string status = task.at("status");
  return (status == "passed" || status == "too_slow") && task.at("cases_passed") == task.at("cases_total");
}

// Whether every task of every lab in the report but `except` computed every case right: a failure in
// one lab leaves the others alone.
inline bool other_labs_ran_correctly(const CliRun& run, const std::string& except) {
  bool all = true, any = false;
  for (const auto& lab : run.report.at("labs"))
    if (lab.at("name") != except)
      for (const auto& task : lab.at("tasks")) all &= ran_correctly(task), any = true;
  return all && any;
}

// Runs a shell command; returns its exit code and appends its output (stdout and stderr).
inline int run_command(const std::string& command, std::string& output) {
  std::FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  const int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Whether `gpulab devices` lists a GPU as device `index` of `backend` ("opencl:" then lines
// "  0: <name> ... (gpu)").
inline bool gpu_listed(const std::string& backend, const std::string& index) {
  std::string output, line;
  run_command(std::string("'") + GPULAB_CLI + "' devices", output);
  std::istringstream lines(output);
  bool in_section = false;
  while (std::getline(lines, line)) {
    if (!line.starts_with("  "))
      in_section = line.starts_with(backend + ":");
    else if (in_section && line.starts_with("  " + index + ": "))
      return line.ends_with("(gpu)");
  }
  return false;
}

// Runs `gpulab check --source <source> <args>` and parses its JSON report.
inline CliRun run_check(const fs::path& source, const std::string& args) {
  static int counter = 0;
  // Named after the process too: tests of several executables run in parallel over one scratch folder.
  const fs::path json =
      fs::path(GPULAB_SCRATCH) / ("report-" + std::to_string(::getpid()) + "-" + std::to_string(++counter) + ".json");
  fs::create_directories(json.parent_path());
  fs::remove(json);
  CliRun run;
  run.exit_code = run_command(std::string("'") + GPULAB_CLI + "' check --source '" + source.string() + "' --json '" +
                                  json.string() + "' " + args,
                              run.output);
  if (fs::exists(json)) run.report = nlohmann::json::parse(read_file(json));
  return run;
}

// Runs `gpulab build ...` (compile and link only); returns the exit code and fills `output`.
inline int run_build(const std::string& args, std::string& output) {
  return run_command(std::string("'") + GPULAB_CLI + "' build " + args, output);
}

}  // namespace gpulab::testing
