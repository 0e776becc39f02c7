// The mutation audit's parts that need no device: generic mutants, mutants.toml, replacements.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "audit.hpp"
#include "barrier_verdict.hpp"
#include "files.hpp"
#include "gpulab/manifest.hpp"

using namespace gpulab::cli;
namespace fs = std::filesystem;

namespace {

const std::string kKernel =
    "__kernel void k(__global int* out) {\n"
    "  __local int s[64];\n"
    "  s[get_local_id(0)] = 1;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (get_local_id(0) < 32) s[get_local_id(0)] += s[get_local_id(0) + 32];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  out[get_local_id(0)] = s[0];\n"
    "}\n";

// Loads `text` as a lab's mutants.toml.
LabMutants load(const std::string& text) {
  ScratchFolder folder("audit-test");
  const fs::path toml = folder.path() / "mutants.toml";
  std::ofstream(toml) << text;
  return load_lab_mutants(toml);
}

}  // namespace

TEST_CASE("generic mutants remove each barrier and make each if-condition's < a <=, one at a time") {
  const auto mutants = generic_mutants("k.cl", kKernel);
  REQUIRE(mutants.size() == 3);
  CHECK(mutants[0].key() == "k.cl: no barrier 1");
  CHECK(mutants[0].line == 4);
  CHECK(mutants[1].key() == "k.cl: no barrier 2");
  CHECK(mutants[2].key() == "k.cl: if 1 `<` 1 to `<=`");
  const std::string without_first = apply_mutant(mutants[0], kKernel);
  CHECK(without_first.find("barrier(CLK") == without_first.rfind("barrier(CLK"));  // one barrier left
  CHECK(without_first.find("barrier(CLK") > without_first.find("if ("));
  CHECK(apply_mutant(mutants[2], kKernel).find("get_local_id(0) <= 32") != std::string::npos);
}

TEST_CASE("a mutants.toml states what a run needs to kill a mutant, and a need the audit does not know is an error") {
  const auto lab = load(
      "[[mutant]]\nname = \"off by one\"\nfile = \"k.cl\"\nfrom = \"< 32\"\nto = \"< 31\"\nneeds = \"timing\"\n"
      "why = \"only the timed size reaches it\"\n\n"
      "[[expect]]\nmutant = \"k.cl: no barrier 1\"\nneeds = \"cpu\"\nwhy = \"one warp writes and reads\"\n");
  REQUIRE(lab.mutants.size() == 1);
  CHECK(lab.mutants[0].needs == "timing");
  REQUIRE(lab.expectations.size() == 1);
  CHECK(lab.expectations[0].needs == "cpu");
  try {
    load("[[expect]]\nmutant = \"k.cl: no barrier 1\"\nneeds = \"luck\"\nwhy = \"?\"\n");
    FAIL("an unknown need was accepted");
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    CHECK(message.find("mutants.toml:1") != std::string::npos);
    CHECK(message.find("\"cpu\"") != std::string::npos);
  }
}

TEST_CASE("a replacement whose text is not in the solution, or is there twice without an occurrence, is refused") {
  Mutant m;
  m.file = "k.cl";
  m.from = "no such text";
  m.to = "/* gone */";
  CHECK_THROWS_AS(apply_mutant(m, kKernel), std::invalid_argument);
  m.from = "barrier(CLK_LOCAL_MEM_FENCE);";
  CHECK_THROWS(apply_mutant(m, kKernel));
  m.occurrence = 2;
  const std::string second_gone = apply_mutant(m, kKernel);
  CHECK(second_gone.find("barrier(CLK") < second_gone.find("if ("));
  CHECK(second_gone.rfind("barrier(CLK") < second_gone.find("if ("));
}

// The mutants that move a barrier where not every thread reaches it (their names say so) are killed
// by the static check's proof on every device, before anything runs (barrier_verdict.hpp); every
// other mutant of the audit keeps its barriers where every thread reaches them, so the check proves
// nothing there: what kills those is a case, a threshold, a guard or the sanitizer gate.
TEST_CASE(
    "the audit's mutants that put a barrier where not every thread reaches it, and only they, fail as unsafe code") {
  const fs::path repo(GPULAB_REPO);
  if (!fs::is_directory(repo / "solutions")) return;  // the student repository has no solutions
  int unsafe_mutants = 0;
  for (const auto& entry : fs::directory_iterator(repo / "solutions")) {
    const fs::path lab_toml = repo / "labs" / entry.path().filename() / "lab.toml";
    if (!fs::exists(entry.path() / "mutants.toml") || !fs::exists(lab_toml)) continue;
    const gpulab::Manifest m = gpulab::load_manifest(lab_toml);
    std::vector<std::string> tasks;
    for (const auto& t : m.tasks) tasks.push_back(t.name);
    for (const auto& [backend, files] : m.files) {
      std::vector<Mutant> mutants = load_lab_mutants(entry.path() / "mutants.toml").mutants;
      for (const auto& f : files)
        if (f.ends_with(".cu") || f.ends_with(".cl"))
          for (auto& g : generic_mutants(f, read_text_or_throw(entry.path() / f))) mutants.push_back(std::move(g));
      for (const auto& mutant : mutants) {
        if (std::find(files.begin(), files.end(), mutant.file) == files.end()) continue;
        ScratchFolder folder("audit-unsafe");
        for (const auto& f : files) fs::copy_file(entry.path() / f, folder.path() / f);
        write_text_atomically(apply_mutant(mutant, read_text_or_throw(entry.path() / mutant.file)),
                              folder.path() / mutant.file);
        const auto verdicts =
            barrier_verdicts(m, backend, folder.path(), tasks, find_source_warnings(m, files, folder.path()));
        const bool named = mutant.name.find("a barrier not every thread reaches") != std::string::npos;
        CHECK_MESSAGE(!verdicts.unsafe.empty() == named, m.id << " " << backend << ": " << mutant.name);
        unsafe_mutants += named;
      }
    }
  }
  CHECK(unsafe_mutants >= 10);
}
