// One submission as the batch grader sees it (submission): archives unpacked only within their limits
// and inside their folder, hostile ones refused whole with a message naming the entry and the limit;
// the lab files taken from a folder, and a misnamed or misplaced file reported with where it was found.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "gpulab/manifest.hpp"
#include "made_up_lab.hpp"
#include "submission.hpp"

namespace fs = std::filesystem;
using gpulab::Manifest;
using gpulab::cli::open_submission;
using gpulab::cli::SubmissionError;
using gpulab::cli::UnpackLimits;

namespace {

// A folder per test: the archive is made there by Python's tarfile (any entry type, any path), and
// unpacked into its scratch/.
struct ArchiveBench {
  fs::path root;
  explicit ArchiveBench(const std::string& name)
      : root(fs::temp_directory_path() / ("gpulab-submission-test-" + std::to_string(::getpid()) + "-" + name)) {
    fs::remove_all(root);
    fs::create_directories(root);
  }
  ~ArchiveBench() { fs::remove_all(root); }
  fs::path scratch() const { return root / "scratch"; }

  // `entries` is Python: statements that add to the open tarfile `t` (helpers `add_file(name, bytes)`,
  // `add(info)`).
  fs::path tar_gz(const std::string& entries) const {
    const fs::path archive = root / "student.tar.gz";
    const fs::path script = root / "make.py";
    std::ofstream(script) << "import io, tarfile\n"
                          << "t = tarfile.open('" << archive.string() << "', 'w:gz')\n"
                          << "def add_file(name, data):\n"
                          << "    info = tarfile.TarInfo(name); info.size = len(data)\n"
                          << "    t.addfile(info, io.BytesIO(data))\n"
                          << "def add(info):\n"
                          << "    t.addfile(info)\n"
                          << entries << "\nt.close()\n";
    REQUIRE(std::system(("python3 '" + script.string() + "'").c_str()) == 0);
    return archive;
  }
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string refusal(const fs::path& archive, const fs::path& scratch, const UnpackLimits& limits = {}) {
  try {
    open_submission(archive, scratch, limits);
  } catch (const SubmissionError& e) { return e.what(); }
  return "(not refused)";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A made-up lab, 05-saxpy, whose manifest lists one CUDA file and two OpenCL files, written under `root`.
Manifest saxpy_manifest(const fs::path& root) {
  const fs::path folder = root / "course" / "labs" / "05-saxpy";
  fs::create_directories(folder);
  std::ofstream(folder / "lab.toml") << gpulab::testing::kSaxpyManifest;
  return gpulab::load_manifest(folder / "lab.toml");
}

}  // namespace

TEST_CASE("an archive's files unpack under the scratch folder, and a link inside it becomes a copy") {
  ArchiveBench bench("good");
  const auto archive = bench.tar_gz(R"(
add_file('labs/00-first/kernel.cu', b'__global__ void k() {}\n')
link = tarfile.TarInfo('labs/00-first/copy.cu'); link.type = tarfile.SYMTYPE; link.linkname = 'kernel.cu'; add(link)
add_file('.DS_Store', b'junk'))");
  const auto files = open_submission(archive, bench.scratch());
  CHECK(files.root == bench.scratch());
  CHECK(files.files == std::vector<std::string>{"labs/00-first/kernel.cu", "labs/00-first/copy.cu"});
  CHECK(read_file(bench.scratch() / "labs/00-first/copy.cu") == "__global__ void k() {}\n");
  CHECK_FALSE(fs::is_symlink(bench.scratch() / "labs/00-first/copy.cu"));
}

TEST_CASE("an archive entry that escapes the folder or is absolute refuses the whole archive, naming the entry") {
  ArchiveBench bench("escape");
  CHECK(contains(refusal(bench.tar_gz("add_file('labs/../../evil.cu', b'x')"), bench.scratch()),
                 "entry labs/../../evil.cu escapes the submission folder"));
  CHECK_FALSE(fs::exists(bench.root.parent_path() / "evil.cu"));
  CHECK(contains(refusal(bench.tar_gz("add_file('/tmp/evil.cu', b'x')"), bench.scratch()),
                 "entry /tmp/evil.cu has an absolute path"));
}

TEST_CASE("a link in an archive that points outside the submission refuses it, symbolic or hard") {
  ArchiveBench bench("links");
  CHECK(contains(refusal(bench.tar_gz(R"(
link = tarfile.TarInfo('labs/secret.cu'); link.type = tarfile.SYMTYPE; link.linkname = '/etc/passwd'; add(link))"),
                         bench.scratch()),
                 "entry labs/secret.cu is a symbolic link to /etc/passwd, outside the submission"));
  CHECK(contains(refusal(bench.tar_gz(R"(
link = tarfile.TarInfo('labs/up.cu'); link.type = tarfile.SYMTYPE; link.linkname = '../../up.cu'; add(link))"),
                         bench.scratch()),
                 "is a symbolic link to ../../up.cu, outside the submission"));
  CHECK(contains(refusal(bench.tar_gz(R"(
link = tarfile.TarInfo('labs/hard.cu'); link.type = tarfile.LNKTYPE; link.linkname = '../x'; add(link))"),
                         bench.scratch()),
                 "escapes the submission folder"));
}

TEST_CASE("a special file in an archive refuses it as not a regular file") {
  ArchiveBench bench("fifo");
  CHECK(contains(refusal(bench.tar_gz(R"(
fifo = tarfile.TarInfo('labs/pipe'); fifo.type = tarfile.FIFOTYPE; add(fifo))"),
                         bench.scratch()),
                 "entry labs/pipe is a special file (device, FIFO or socket): refused"));
}

TEST_CASE("an archive over a size limit is refused: its own size, one file, everything, links, entries") {
  ArchiveBench bench("limits");
  UnpackLimits limits;
  limits.archive_bytes = 1 << 20;
  limits.file_bytes = 1 << 20;
  limits.total_bytes = 2 << 20;
  limits.entries = 50;
  const std::string mib = "b'\\0' * (1 << 20)";

  CHECK(contains(refusal(bench.tar_gz("add_file('big.cu', " + mib + " + b'!')"), bench.scratch(), limits),
                 "unpacks to more than 1 MiB in one file (at entry big.cu): refused as a possible zip bomb"));
  CHECK(contains(
      refusal(bench.tar_gz("for i in range(3): add_file(f'part{i}.cu', " + mib + ")"), bench.scratch(), limits),
      "unpacks to more than 2 MiB in all (at entry part2.cu)"));
  CHECK(contains(refusal(bench.tar_gz("add_file('one.cu', " + mib + R"()
for i in range(2):
    link = tarfile.TarInfo(f'copy{i}.cu'); link.type = tarfile.LNKTYPE; link.linkname = 'one.cu'; add(link))"),
                         bench.scratch(), limits),
                 "unpacks to more than 2 MiB in all, counting its links (at entry copy1.cu)"));
  CHECK(contains(refusal(bench.tar_gz("for i in range(51): add_file(f'f{i}.cu', b'x')"), bench.scratch(), limits),
                 "more than 50 entries"));

  // Random bytes do not compress: an archive file of 2 MiB.
  const fs::path noise = bench.root / "noise.tar";
  const std::string make_noise = "python3 -c \"import io, os, tarfile; t = tarfile.open('" + noise.string() +
                                 "', 'w'); d = os.urandom(2 << 20); i = tarfile.TarInfo('n.bin'); i.size = len(d); "
                                 "t.addfile(i, io.BytesIO(d)); t.close()\"";
  REQUIRE(std::system(make_noise.c_str()) == 0);
  CHECK(contains(refusal(noise, bench.scratch(), limits), "noise.tar: the archive is 2 MiB, over the limit of 1 MiB"));
}

TEST_CASE("a file named like an archive that is none, or an empty archive, is refused with what it must hold") {
  ArchiveBench bench("garbage");
  const fs::path fake = bench.root / "student.zip";
  std::ofstream(fake) << "this is not a zip file";
  CHECK(contains(refusal(fake, bench.scratch()), "student.zip: not a readable .zip or .tar.gz archive"));
  CHECK(contains(refusal(bench.tar_gz("pass"), bench.scratch()), "the archive is empty; it must hold the lab folders"));
}

TEST_CASE("student names come from the folder or archive name, made safe for paths") {
  CHECK(gpulab::cli::student_name("subs/alice.tar.gz") == "alice");
  CHECK(gpulab::cli::student_name("subs/Bob Smith.zip") == "Bob Smith");
  CHECK(gpulab::cli::student_name("subs/carol") == "carol");
  CHECK(gpulab::cli::student_name("subs/..zip") == "=2E");
  CHECK(gpulab::cli::student_name(fs::path("subs") / "tab\there%") == "tab=09here=25");
  CHECK(gpulab::cli::student_name(fs::path("subs") / "back\\slash") == "back=5Cslash");
  CHECK(gpulab::cli::student_name(fs::path("subs") / "bad\xff.zip") == "bad=FF");
}

TEST_CASE("accented names are kept in one Unicode form, and two different names never become one student") {
  using gpulab::cli::student_name;
  const std::string zoe_diaeresis = "zo\xc3\xab", zoe_acute = "zo\xc3\xa9", zoe_acute_decomposed = "zoe\xcc\x81";
  CHECK(student_name("subs/" + zoe_diaeresis + ".tar") == zoe_diaeresis);
  CHECK(student_name("subs/" + zoe_acute) == zoe_acute);
  CHECK(student_name("subs/" + zoe_acute_decomposed + ".zip") == zoe_acute);  // macOS's decomposed form: NFC
  CHECK(student_name("subs/\xe5\xbc\xa0\xe4\xbc\x9f") == "\xe5\xbc\xa0\xe4\xbc\x9f");
  CHECK(student_name("subs/a_b") != student_name("subs/a b"));
  CHECK(student_name("subs/a=5Cb") != student_name("subs/a\\b"));
  CHECK(student_name("subs/mallory<b>#1") == "mallory=3Cb=3E=231");
  CHECK(student_name("subs/x\xe2\x80\xae"
                     "evil") == "x=E2=80=AEevil");  // a right-to-left override is escaped
}

TEST_CASE("entries that are the same student are refused together, naming each, and the others are listed") {
  const fs::path root = fs::temp_directory_path() / fmt::format("gpulab-names-{}", ::getpid());
  fs::remove_all(root);
  const std::string zoe = "zo\xc3\xab", zoe_acute = "zo\xc3\xa9";
  for (const auto& folder : {zoe, zoe_acute, std::string("bob")}) fs::create_directories(root / folder);
  std::ofstream(root / (zoe + ".tar")) << "x";
  std::map<std::string, std::string> conflicts;
  const auto entries = gpulab::cli::submission_entries(root, &conflicts);
  std::vector<std::string> names;
  for (const auto& [name, path] : entries) names.push_back(name);
  CHECK(names == std::vector<std::string>{"bob", zoe_acute, zoe});
  REQUIRE(conflicts.size() == 1);
  CHECK(contains(conflicts[zoe], zoe + " and " + zoe + ".tar are both the student " + zoe + ": refused"));
  // Without a place for conflicts (similarity, Slurm's listing), the student is left out.
  CHECK(gpulab::cli::submission_entries(root).size() == 2);
  fs::remove_all(root);
}

TEST_CASE("a misnamed file is reported with the name it was found under") {
  const std::vector<std::string> files{"labs/05-saxpy/Saxpy.cu", "labs/05-saxpy/README.md", "notes.txt"};
  const auto close = gpulab::cli::near_misses(files, "labs/05-saxpy/saxpy.cu");
  REQUIRE(close.size() == 1);
  CHECK(close[0] == "labs/05-saxpy/Saxpy.cu");
  CHECK(gpulab::cli::near_misses({"lab5/saxpy.cu"}, "labs/05-saxpy/saxpy.cu") ==
        std::vector<std::string>{"lab5/saxpy.cu"});
}

TEST_CASE("a folder submission takes lab files under a wrapping folder and refuses a link that leaves it") {
  const fs::path root = fs::temp_directory_path() / fmt::format("gpulab-submission-{}", ::getpid());
  fs::remove_all(root);
  fs::create_directories(root / "alice-repo/labs/05-saxpy");
  std::ofstream(root / "alice-repo/labs/05-saxpy/saxpy.cu") << "// mine\n";
  std::ofstream(root / "alice-repo/labs/05-saxpy/saxpy.cl") << "// mine\n";
  fs::create_symlink("/etc/hostname", root / "alice-repo/labs/05-saxpy/saxpy_opencl.cpp");
  const auto files = gpulab::cli::open_submission(root, root / "unused");
  const Manifest m = saxpy_manifest(root);
  const auto cuda = gpulab::cli::take_lab_files(files, m, "cuda", root / "taken-cuda");
  CHECK(cuda.complete());
  CHECK(fs::exists(root / "taken-cuda/saxpy.cu"));
  const auto opencl = gpulab::cli::take_lab_files(files, m, "opencl", root / "taken-opencl");
  REQUIRE(opencl.missing.size() == 1);
  CHECK(opencl.missing[0].find("outside the submission") != std::string::npos);
  CHECK_FALSE(fs::exists(root / "taken-opencl/saxpy_opencl.cpp"));
  fs::remove_all(root);
}

TEST_CASE(
    "a lab file missing under its name is reported with the near miss, by name in its folder and by path elsewhere") {
  const fs::path root = fs::temp_directory_path() / fmt::format("gpulab-near-miss-{}", ::getpid());
  fs::remove_all(root);
  fs::create_directories(root / "sub/labs/05-saxpy");
  fs::create_directories(root / "sub/lab5");
  std::ofstream(root / "sub/labs/05-saxpy/Saxpy.cu") << "// mine\n";
  std::ofstream(root / "sub/lab5/saxpy.cl") << "// mine\n";
  const auto files = gpulab::cli::open_submission(root / "sub", root / "unused");
  const Manifest m = saxpy_manifest(root);
  const auto cuda = gpulab::cli::take_lab_files(files, m, "cuda", root / "taken-cuda");
  REQUIRE(cuda.missing.size() == 1);
  CHECK(cuda.missing[0] == "missing labs/05-saxpy/saxpy.cu (found Saxpy.cu, expected saxpy.cu)");
  const auto opencl = gpulab::cli::take_lab_files(files, m, "opencl", root / "taken-opencl");
  CHECK(std::find(opencl.missing.begin(), opencl.missing.end(),
                  "missing labs/05-saxpy/saxpy.cl (found it at lab5/saxpy.cl: it must be in labs/05-saxpy/)") !=
        opencl.missing.end());
  fs::remove_all(root);
}

TEST_CASE("something that is neither a folder nor an archive is refused with what a submission must be") {
  const fs::path file = fs::temp_directory_path() / fmt::format("gpulab-submission-{}.txt", ::getpid());
  std::ofstream(file) << "plain text";
  CHECK_THROWS_WITH_AS(gpulab::cli::open_submission(file, fs::temp_directory_path()),
                       doctest::Contains("not a folder, .zip or .tar.gz"), gpulab::cli::SubmissionError);
  fs::remove(file);
}
