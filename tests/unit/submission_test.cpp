// A submission archive is unpacked only within its limits and only inside its folder: each hostile
// archive is refused as a whole with a message that names the entry and the limit.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "submission.hpp"

namespace fs = std::filesystem;
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
