// The mutation audit (`gpulab audit`, `make audit`): how strong is each lab's grading? Mutants of the
// lab's reference solution, each one plausible student mistake, are graded like a submission; a
// mutant is killed when some case, threshold, guard zone, the sanitizer gate or the static barrier
// check (a barrier it proves divergent) rejects it. A survivor needs a new case, or a line in the lab's mutants.toml saying why it
// is equivalent (it cannot change any result).
//
// Mutants come from two places: generic rules applied to every kernel file (remove each barrier;
// `<` to `<=` in each if-condition), and the lab's own rules in solutions/<lab>/mutants.toml
// (instructor-only: the rules quote the solution), each a text replacement:
//
//   [[mutant]]
//   name = "row and column swapped in the output index"
//   file = "transpose.cu"
//   from = "out[static_cast<size_t>(col) * rows + row]"
//   to = "out[static_cast<size_t>(row) * cols + col]"
//   occurrence = 1          # which one, when `from` occurs several times (default: it must occur once)
//   equivalent = "..."      # optional: why no grader can tell it from the solution
//   needs = "timing"        # optional: only a run with this can kill it ("timing", "gpu", "cpu", "sanitizer")
//
//   [[expect]]               # about a generic mutant (named by its key): equivalent, or what it needs
//   mutant = "transpose.cu: no barrier 1"
//   needs = "gpu"            # or: equivalent = "why no grader can tell"
//   why = "PoCL runs a work-group's items in order between barriers, so ..."
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "gpulab/manifest.hpp"
#include "student_build.hpp"

namespace gpulab::cli {

struct Mutant {
  std::string name;        // "transpose.cu: no barrier 1 (line 36)"; the part before " (line" is its key
  std::string file;        // the student file it changes
  std::string from, to;    // the replacement
  int occurrence = 0;      // 1-based; 0: `from` must occur exactly once
  int line = 0;            // where `from` starts in the solution, for the report
  std::string equivalent;  // why it survives by right; empty: it must be killed
  std::string needs;       // "timing", "gpu", "cpu" or "sanitizer": a run without it cannot kill the mutant
  std::string why;         // why it needs that
  std::string key() const { return name.substr(0, name.find(" (line")); }
};

// The generic mutants of one kernel file (.cu or .cl): each barrier removed, each `<` of an
// if-condition made `<=`.
std::vector<Mutant> generic_mutants(const std::string& file, const std::string& text);

// The lab's own mutants and the documented equivalents from its mutants.toml (none when it has no
// such file); throws with the file:line of a malformed entry.
struct Expectation {
  std::string mutant;  // a generic mutant's key
  std::string equivalent, needs, why;
};
struct LabMutants {
  std::vector<Mutant> mutants;
  std::vector<Expectation> expectations;
};
LabMutants load_lab_mutants(const std::filesystem::path& toml);

// `text` with the mutant's replacement made; throws when `from` is not there (or not once).
std::string apply_mutant(const Mutant& mutant, const std::string& text);

struct MutantVerdict {
  Mutant mutant;
  // undetectable: survived a run that lacks what the mutant needs (timing, a GPU, a CPU device, the sanitizer)
  enum class Outcome { killed, survived, equivalent, undetectable, invalid } outcome = Outcome::survived;
  std::string by;    // what killed it: "wrong result (tiled: case 37x53x29 ...)", "static barrier check: ..."
  std::string diff;  // "- old line\n+ new line"
};

struct AuditOptions {
  std::string backend, device;
  std::uint64_t seed = 0;
  bool timing = true;     // run the timing cases and thresholds (off: correctness cases only)
  bool sanitize = false;  // CUDA: the sanitizer gate too
  int jobs = 1;           // mutants graded at once (correctness only: timing needs the device alone)
};

// Grades every mutant of one lab's solution (`solution_dir`); work goes under `work_dir`.
std::vector<MutantVerdict> audit_lab(const Toolchain& toolchain, const Manifest& manifest,
                                     const std::filesystem::path& solution_dir, const std::filesystem::path& work_dir,
                                     const AuditOptions& options);

// The table `make audit` prints for a lab: counts, then each mutant, survivors with their diff.
std::string render_audit(const Manifest& manifest, const std::string& backend,
                         const std::vector<MutantVerdict>& verdicts, bool color);

}  // namespace gpulab::cli
