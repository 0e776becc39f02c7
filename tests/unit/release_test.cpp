// The student release: its surgery on lab.toml text (hidden [[cases]] blocks go, everything else
// stays) and what a git checkout's release is made of.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "kernel_embedding.hpp"
#include "release.hpp"

using gpulab::cli::remove_hidden_case_blocks;

namespace {
const char* kManifest = R"(# A lab.
name = "x"

[[tasks]]
name = "t"
function = "f"

# Visible shapes.
[[cases]]
name = "a"
n = 1

[[cases]]  # a comment on the header
name = "b"
n = [1,
     2]

# Hidden cases: instructor grading only.
[[cases]]
name = "secret 1"
n = 41
hidden = true

[[cases]]
name = "secret 2"
hidden = true
# This comment is about the timing case below.

[[cases]]
name = "timed"
n = 4096
timing = true
)";
}  // namespace

TEST_CASE("hidden case blocks are removed with the comment above them, and the rest of the text stays as it was") {
  const std::string released = remove_hidden_case_blocks(kManifest, {false, false, true, true, false});
  CHECK(released == R"(# A lab.
name = "x"

[[tasks]]
name = "t"
function = "f"

# Visible shapes.
[[cases]]
name = "a"
n = 1

[[cases]]  # a comment on the header
name = "b"
n = [1,
     2]

# This comment is about the timing case below.

[[cases]]
name = "timed"
n = 4096
timing = true
)");
}

TEST_CASE("hidden cases at the end of the file leave no trailing blank line, and no hidden case changes nothing") {
  const std::string text = "name = \"x\"\n\n[[cases]]\nname = \"a\"\n\n[[cases]]\nname = \"h\"\nhidden = true\n";
  CHECK(remove_hidden_case_blocks(text, {false, true}) == "name = \"x\"\n\n[[cases]]\nname = \"a\"\n");
  CHECK(remove_hidden_case_blocks(kManifest, {false, false, false, false, false}) == kManifest);
}

TEST_CASE(
    "cases written other than as one [[cases]] block each are refused, since their hidden ones cannot be cut out") {
  CHECK_THROWS_WITH(remove_hidden_case_blocks("cases = [{ name = \"a\", hidden = true }]\n", {true}),
                    doctest::Contains("write each case as a [[cases]] block of its own"));
}

// The release of a git checkout is its last commit: what an instructor changed in the working tree
// (a lab solved to try it) is not shipped, and the summary says which files were left as committed.
namespace {

namespace fs = std::filesystem;

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int git(const fs::path& repo, const std::string& arguments) {
  return std::system(
      ("git -C '" + repo.string() + "' -c user.name=t -c user.email=t@t " + arguments + " >/dev/null 2>&1").c_str());
}

struct CourseCheckout {
  fs::path root = fs::temp_directory_path() / ("gpulab-release-test-" + std::to_string(::getpid()));
  CourseCheckout() {
    fs::remove_all(root);
    write_file(root / "labs/00-first/kernel.cu", "// TODO: write the kernel\n");
    write_file(root / "labs/00-first/notes.md", "notes\n");
    write_file(root / "solutions/00-first/kernel.cu", "the answer\n");
    write_file(root / ".ci/run", "make test\n");
    REQUIRE(git(root, "init -q") == 0);
    REQUIRE(git(root, "add -A") == 0);
    REQUIRE(git(root, "commit -q -m course") == 0);
  }
  ~CourseCheckout() { fs::remove_all(root); }
};

}  // namespace

TEST_CASE("a release of a git checkout ships the committed files, not the instructor's uncommitted edits") {
  CourseCheckout course;
  write_file(course.root / "labs/00-first/kernel.cu", "the instructor's own solution\n");  // tried, not committed
  write_file(course.root / "labs/00-first/scratch.cu", "untracked\n");
  fs::remove(course.root / "labs/00-first/notes.md");  // deleted, not committed
  const fs::path out = course.root.string() + "-out";
  fs::remove_all(out);

  const auto summary = gpulab::cli::write_student_release(course.root, out);
  CHECK(summary.from_git);
  CHECK(read_file(out / "labs/00-first/kernel.cu") == "// TODO: write the kernel\n");
  CHECK(read_file(out / "labs/00-first/notes.md") == "notes\n");
  CHECK_FALSE(fs::exists(out / "labs/00-first/scratch.cu"));
  CHECK_FALSE(fs::exists(out / "solutions"));
  CHECK(fs::exists(out / ".ci/run"));  // tracked dot folders are part of the course
  CHECK(summary.files_left_out == 1);
  CHECK(summary.uncommitted == std::vector<std::string>{"labs/00-first/kernel.cu", "labs/00-first/notes.md"});
  const std::string said = gpulab::cli::describe(summary);
  CHECK(said.find("the files of the last commit, " + summary.commit) != std::string::npos);
  CHECK(said.find("not released: the uncommitted changes to 2 files (labs/00-first/kernel.cu, "
                  "labs/00-first/notes.md)") != std::string::npos);
  fs::remove_all(out);
}

TEST_CASE("a release of a clean git checkout says nothing about uncommitted changes") {
  CourseCheckout course;
  const fs::path out = course.root.string() + "-out";
  fs::remove_all(out);
  const auto summary = gpulab::cli::write_student_release(course.root, out);
  CHECK(summary.uncommitted.empty());
  CHECK(gpulab::cli::describe(summary).find("not released") == std::string::npos);
  CHECK(summary.files_written == 3);
  fs::remove_all(out);
}

TEST_CASE("a release of a git checkout without a commit says to commit the course first") {
  CourseCheckout course;
  const fs::path empty = course.root.string() + "-empty";
  fs::remove_all(empty);
  write_file(empty / "labs/00-first/kernel.cu", "x\n");
  REQUIRE(git(empty, "init -q") == 0);
  CHECK_THROWS_WITH_AS(gpulab::cli::write_student_release(empty, empty.string() + "-out"),
                       doctest::Contains("commit the course first"), std::runtime_error);
  CHECK_FALSE(fs::exists(empty.string() + "-out/labs"));
  fs::remove_all(empty);
  fs::remove_all(empty.string() + "-out");
}

// The docs site of the release: the pages and tools the release leaves out (the instructor guide,
// the docs' CUDA measurement tools) must not break its strict build, and a listing of text the
// release removes stops the release, not the students' `make docs`.
namespace {

struct CourseFolder {
  fs::path root = fs::temp_directory_path() / ("gpulab-release-docs-test-" + std::to_string(::getpid()));
  fs::path out = root.string() + "-out";
  CourseFolder() {
    fs::remove_all(root);
    fs::remove_all(out);
    write_file(root / "labs/00-first/kernel.cu", "// TODO: write the kernel\n");
    write_file(root / "solutions/00-first/kernel.cu", "// --8<-- [start:k]\nthe answer\n// --8<-- [end:k]\n");
    write_file(root / "scripts/docs/streams_timeline.cu",
               "// --8<-- [start:pipeline]\nchunks\n// --8<-- [end:pipeline]\n");
    write_file(root / "scripts/docs/host_device.cu", "chunks\n");
    write_file(root / "scripts/docs/figures.py", "# draws\n");
    write_file(root / "docs/instructors.md", "# Instructor guide\n\n## Thresholds\n");
    write_file(root / "mkdocs.yml",
               "site_name: x\nnav:\n  - Home: index.md\n  - Labs:\n      - \"00 · First\": labs/first.md\n"
               "  - Instructor guide: instructors.md\n");
    write_file(root / "docs/index.md",
               "| [Instructor guide](instructors.md) | thresholds |\n| [First](labs/first.md) | a lab |\n");
    write_file(root / "docs/labs/first.md",
               "A bound ([instructor guide](../instructors.md#thresholds)); the [index](../index.md).\n\n"
               "--8<-- \"solutions/00-first/kernel.cu:k\"\n");
  }
  ~CourseFolder() {
    fs::remove_all(root);
    fs::remove_all(out);
  }
};

}  // namespace

TEST_CASE(
    "a release leaves out the instructor guide and the docs' CUDA measurement tools; its docs nav forgets the guide "
    "and links to it keep only their text") {
  CourseFolder course;
  const auto summary = gpulab::cli::write_student_release(course.root, course.out);
  CHECK_FALSE(fs::exists(course.out / "docs/instructors.md"));
  CHECK_FALSE(fs::exists(course.out / "scripts/docs/streams_timeline.cu"));
  CHECK_FALSE(fs::exists(course.out / "scripts/docs/host_device.cu"));
  CHECK(fs::exists(course.out / "scripts/docs/figures.py"));
  CHECK(summary.files_left_out == 4);  // the solution, the guide, the two tools
  CHECK(read_file(course.out / "mkdocs.yml") ==
        "site_name: x\nnav:\n  - Home: index.md\n  - Labs:\n      - \"00 · First\": labs/first.md\n");
  CHECK(read_file(course.out / "docs/index.md") ==
        "| Instructor guide | thresholds |\n| [First](labs/first.md) | a lab |\n");
  CHECK(read_file(course.out / "docs/labs/first.md") ==
        "A bound (instructor guide); the [index](../index.md).\n\n--8<-- \"solutions/00-first/kernel.cu:k\"\n");
  CHECK(gpulab::cli::describe(summary).find("docs/instructors.md") != std::string::npos);
}

TEST_CASE(
    "a release whose docs include text that the release removes stops, naming the page, the line and the fix, and "
    "leaves nothing behind") {
  CourseFolder course;
  SUBCASE("a listing of a file the release leaves out") {
    write_file(course.root / "docs/labs/streams.md",
               "# Streams\n\n    --8<-- \"scripts/docs/streams_timeline.cu:pipeline\"\n");
    CHECK_THROWS_WITH_AS(gpulab::cli::write_student_release(course.root, course.out),
                         doctest::Contains("docs/labs/streams.md:3: the listing \"scripts/docs/streams_timeline.cu:"
                                           "pipeline\" does not resolve in the student release (the release has no "
                                           "such file)"),
                         std::runtime_error);
  }
  SUBCASE("a listing up to a line that the release removes") {
    write_file(course.root / "labs/00-first/notes.txt", "visible\n# Hidden\nsecret\n");
    write_file(course.root / "docs/labs/first.md", "--8<-- \"labs/00-first/notes.txt:before=# Missing\"\n");
    CHECK_THROWS_WITH_AS(gpulab::cli::write_student_release(course.root, course.out),
                         doctest::Contains("no line of the released file starts with '# Missing'"), std::runtime_error);
  }
  SUBCASE("a listing of a section without its end") {
    write_file(course.root / "labs/00-first/notes.txt", "// --8<-- [start:a]\nvisible\n");
    write_file(course.root / "docs/labs/first.md", "--8<-- \"labs/00-first/notes.txt:a\"\n");
    CHECK_THROWS_WITH_AS(gpulab::cli::write_student_release(course.root, course.out),
                         doctest::Contains("no section 'a' with its start and end"), std::runtime_error);
  }
  CHECK(fs::is_empty(course.out));
}

TEST_CASE("a release whose docs include only released text and solutions/ (shown as a note) is written") {
  CourseFolder course;
  write_file(course.root / "labs/00-first/notes.txt", "visible\n# Hidden\n// --8<-- [start:a]\nx\n// --8<-- [end:a]\n");
  write_file(course.root / "docs/labs/more.md",
             "--8<-- \"labs/00-first/notes.txt:before=# Hidden\"\n--8<-- \"labs/00-first/notes.txt:a\"\n"
             "--8<-- \"labs/00-first/notes.txt\"\n");
  CHECK_NOTHROW(gpulab::cli::write_student_release(course.root, course.out));
  CHECK(fs::exists(course.out / "docs/labs/more.md"));
}

// The harness's CUDA kernels (calibrations, staff kernels) are the designs of graded tasks: the
// release ships them compiled, and the planted submissions of a lab's tests not at all.
namespace {

struct CourseWithKernels : CourseFolder {
  CourseWithKernels() {
    write_file(root / "common/include/gpulab/student/cuda.hpp", "#pragma once\n");
    write_file(root / "labs/01-first/grader/baselines_cuda.cu",
               "#include \"gpulab/student/cuda.hpp\"\n#include \"baselines_cuda.hpp\"\n"
               "__global__ void harness_naive(float* x) { x[threadIdx.x] *= 2.0f; }\n"
               "void launch_naive(float* x) { harness_naive<<<1, 32>>>(x); }\n");
    write_file(root / "labs/01-first/grader/baselines_cuda.hpp", "#pragma once\nvoid launch_naive(float* x);\n");
    write_file(root / "labs/01-first/grader/bindings_opencl.cpp", "// bindings\n");
    write_file(root / "labs/01-first/grader/tests/planted/racing/kernel.cu", "// a planted fault\n");
    write_file(root / "labs/01-first/grader/tests/first_test.cpp", "// a test\n");
    write_file(root / "README.md",
               "Grading: the [instructor guide](docs/instructors.md#grading); [docs](docs/index.md).\n");
  }
};

// nvcc where the course's build would find it, or "" (then the compiled half is not tested here).
std::string nvcc_here() {
  for (const char* candidate : {"/usr/local/cuda/bin/nvcc", "/usr/bin/nvcc"})
    if (fs::exists(candidate)) return candidate;
  return "";
}

}  // namespace

TEST_CASE(
    "a release without nvcc leaves the harness's CUDA kernels and the planted submissions out, turns the students' "
    "CUDA backend off, and unlinks the README from the instructor guide") {
  CourseWithKernels course;
  const auto summary = gpulab::cli::write_student_release(course.root, course.out, gpulab::cli::CudaKernels{});
  CHECK_FALSE(fs::exists(course.out / "labs/01-first/grader/baselines_cuda.cu"));
  CHECK_FALSE(fs::exists(course.out / "labs/01-first/grader/baselines_cuda.o"));
  CHECK(fs::exists(course.out / "labs/01-first/grader/baselines_cuda.hpp"));  // declarations only
  CHECK_FALSE(fs::exists(course.out / "labs/01-first/grader/tests/planted"));
  CHECK(fs::exists(course.out / "labs/01-first/grader/tests/first_test.cpp"));
  CHECK(read_file(course.out / "grader/prebuilt_cuda.cmake").find("set(GPULAB_RELEASE_WITHOUT_CUDA_KERNELS ON)") !=
        std::string::npos);
  CHECK(summary.cuda_sources_left_out == 1);
  CHECK(gpulab::cli::describe(summary).find("runs on OpenCL only") != std::string::npos);
  CHECK(read_file(course.out / "README.md") == "Grading: the instructor guide; [docs](docs/index.md).\n");
}

TEST_CASE(
    "a release with nvcc ships each harness CUDA kernel file as an object for the architectures asked, not its "
    "source") {
  const std::string nvcc = nvcc_here();
  if (nvcc.empty()) {
    MESSAGE("no nvcc here: the compiled release is tested where the CUDA toolkit is");
    return;
  }
  CourseWithKernels course;
  gpulab::cli::CudaKernels cuda{nvcc, "", {"sm_75"}};
  const auto summary = gpulab::cli::write_student_release(course.root, course.out, cuda);
  CHECK_FALSE(fs::exists(course.out / "labs/01-first/grader/baselines_cuda.cu"));
  REQUIRE(fs::exists(course.out / "labs/01-first/grader/baselines_cuda.o"));
  // The object holds the kernel's machine code, not its source text.
  const std::string object = read_file(course.out / "labs/01-first/grader/baselines_cuda.o");
  CHECK(object.find("harness_naive") != std::string::npos);
  CHECK(object.find("x[threadIdx.x] *= 2.0f") == std::string::npos);
  CHECK(summary.cuda_objects == std::vector<std::string>{"labs/01-first/grader/baselines_cuda.o"});
  const std::string config = read_file(course.out / "grader/prebuilt_cuda.cmake");
  CHECK(config.find("set(GPULAB_PREBUILT_CUDA_VERSION \"" + summary.nvcc_version + "\")") != std::string::npos);
  CHECK(config.find("set(GPULAB_PREBUILT_CUDA_ARCHS \"sm_75\")") != std::string::npos);
  CHECK(gpulab::cli::describe(summary).find("ship as objects, not source") != std::string::npos);
}

TEST_CASE("a release ships a lab's harness OpenCL kernels encoded in its grader folder, never their source") {
  CourseWithKernels course;
  const std::string tree = "__kernel void staff_tree(__global float* x) { x[0] += x[1]; }\n";
  const std::string naive = "__kernel void harness_naive(__global float* x) { x[0] *= 2.0f; }\n";
  write_file(course.root / "labs/01-first/grader/staff_tree.cl", "// the staff kernel\n" + tree);
  write_file(course.root / "labs/01-first/grader/harness_naive.cl", naive);
  const auto summary = gpulab::cli::write_student_release(course.root, course.out, gpulab::cli::CudaKernels{});
  const fs::path grader = course.out / "labs/01-first/grader";
  CHECK_FALSE(fs::exists(grader / "staff_tree.cl"));
  CHECK_FALSE(fs::exists(grader / "harness_naive.cl"));
  REQUIRE(fs::exists(grader / "opencl_kernels.cpp"));
  const std::string encoded = read_file(grader / "opencl_kernels.cpp");
  CHECK(encoded == gpulab::embed_opencl_kernels(
                       "first", {{"harness_naive", naive}, {"staff_tree", "// the staff kernel\n" + tree}})
                       .source);
  CHECK(read_file(grader / "opencl_kernels.hpp").find("std::string staff_tree();") != std::string::npos);
  for (const auto& entry : fs::recursive_directory_iterator(course.out))
    if (entry.is_regular_file()) {
      CHECK_MESSAGE(read_file(entry.path()).find("x[0] += x[1]") == std::string::npos, entry.path());
      CHECK_MESSAGE(read_file(entry.path()).find("x[0] *= 2.0f") == std::string::npos, entry.path());
    }
  CHECK(summary.opencl_kernels == 2);
  CHECK(summary.opencl_files == std::vector<std::string>{"labs/01-first/grader/opencl_kernels.cpp"});
  CHECK(gpulab::cli::describe(summary).find("ship as encoded C++") != std::string::npos);
}

TEST_CASE(
    "a release refuses a CUDA architecture nvcc would not take, and one whose kernel does not compile, leaving "
    "nothing") {
  const std::string nvcc = nvcc_here();
  if (nvcc.empty()) return;
  CourseWithKernels course;
  SUBCASE("an architecture written as a number") {
    CHECK_THROWS_WITH_AS(gpulab::cli::write_student_release(course.root, course.out, {nvcc, "", {"90"}}),
                         doctest::Contains("'90' is not a CUDA architecture: write it as nvcc does, like sm_90"),
                         std::runtime_error);
  }
  SUBCASE("a kernel with an error") {
    write_file(course.root / "labs/01-first/grader/baselines_cuda.cu", "__global__ void broken( {}\n");
    CHECK_THROWS_WITH_AS(
        gpulab::cli::write_student_release(course.root, course.out, {nvcc, "", {"sm_75"}}),
        doctest::Contains("nvcc could not compile the harness's labs/01-first/grader/baselines_cuda.cu"),
        std::runtime_error);
  }
  CHECK(fs::is_empty(course.out));
}
