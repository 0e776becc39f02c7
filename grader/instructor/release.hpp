// The student release: the repository students clone, written from the instructor's. It holds
// every file of the course except the reference solutions, the test fixtures (weaker kernels and
// hostile submissions are near-solutions), the hidden cases of the lab manifests and the
// instructor's material (the instructor guide, the docs' CUDA measurement tools); the harness's CUDA
// kernels go in compiled. Its docs site builds: the nav and the links forget the pages left out,
// and every listing a page includes must resolve in the release (else the release stops, naming
// the page and line).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace gpulab::cli {

// How the release ships the harness's CUDA kernels (labs/<lab>/grader/*_cuda.cu): the naive
// calibrations and the staff kernels are the designs of graded tasks, so students get them compiled
// (an object per file, SASS for each architecture and PTX for newer ones), never their source.
struct CudaKernels {
  std::string nvcc;           // empty: no CUDA toolkit; the release leaves the kernels out (OpenCL only)
  std::string host_compiler;  // nvcc -ccbin, as the course's build uses
  std::vector<std::string> archs = default_cuda_archs();

  // sm_75 (the oldest CUDA 13 supports) to sm_120: the GPUs courses run on.
  static std::vector<std::string> default_cuda_archs();
};

struct ReleaseSummary {
  std::filesystem::path out;
  // A git checkout is released as its last commit (`git archive HEAD`), never its working tree: an
  // instructor who solved a lab in the checkout must not ship the answers.
  bool from_git = false;
  std::string commit;                    // the released commit, abbreviated (git only)
  std::vector<std::string> uncommitted;  // tracked files whose changes the release leaves out (git only)
  int files_written = 0;
  int files_left_out = 0;  // under solutions/, docs/answers/ and tests/fixtures/, and the instructor's material
  int hidden_cases_removed = 0;
  std::vector<std::string> manifests_changed;  // "labs/01-matmul/lab.toml: 5 hidden cases removed"
  std::vector<std::string> cuda_objects;       // "labs/01-matmul/grader/baselines_cuda.o", compiled for `cuda_archs`
  std::vector<std::string> cuda_archs;
  std::string nvcc_version;       // "13.0"; empty when the CUDA kernels were left out
  int cuda_sources_left_out = 0;  // without nvcc: the CUDA kernels not shipped at all
  int opencl_kernels = 0;         // the harness's OpenCL kernel files (labs/<lab>/grader/*.cl), shipped encoded
  // "labs/01-matmul/grader/opencl_kernels.cpp": a lab's harness OpenCL kernels, encoded
  std::vector<std::string> opencl_files;
};

// Writes the student release of `repo` into `out`, which must be empty or absent (so nothing of an
// earlier release or anything else can end up in it): the files of its last commit when it is a git
// checkout, else those of the folder. Every released lab.toml is parsed again to
// prove it is valid and has exactly the instructor's visible cases. Throws std::runtime_error
// naming the problem and the fix.
ReleaseSummary write_student_release(const std::filesystem::path& repo, const std::filesystem::path& out,
                                     const CudaKernels& cuda = {});

// A few lines for the console: where the release is, what was left out, what to do next.
std::string describe(const ReleaseSummary& summary);

// The text of a lab.toml without the [[cases]] blocks whose case is hidden; everything else is
// kept byte for byte. A block runs from its header to its last key; comment lines right above a
// hidden case's header (no blank line between) go with it. `hidden` holds one flag per [[cases]]
// block, in file order (from the parsed manifest); a count that differs is an error.
std::string remove_hidden_case_blocks(const std::string& toml_text, const std::vector<bool>& hidden);

}  // namespace gpulab::cli
