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
