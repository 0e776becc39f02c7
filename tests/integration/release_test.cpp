// The student release (write_student_release, behind `gpulab release` and `make student-release`):
// the repository students clone has no solutions, no fixtures and no hidden cases, keeps every
// student file as it is, and still builds and grades.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "cli_harness.hpp"
#include "gpulab/manifest.hpp"
#include "gpulab/text.hpp"
#include "kernel_embedding.hpp"
#include "release.hpp"
#include "server_process.hpp"

using namespace gpulab::testing;
using gpulab::cli::write_student_release;

namespace {

fs::path fresh_folder(const std::string& name) {
  const fs::path dir = fs::path(GPULAB_SCRATCH) / name;
  fs::remove_all(dir);
  fs::create_directories(dir.parent_path());
  return dir;
}

// Whether `part` is `whole` with some lines taken out: the release only removes text.
bool is_subsequence(const std::vector<std::string>& part, const std::vector<std::string>& whole) {
  auto it = whole.begin();
  for (const auto& line : part) {
    it = std::find(it, whole.end(), line);
    if (it == whole.end()) return false;
    ++it;
  }
  return true;
}

std::vector<std::string> case_names(const gpulab::Manifest& m) {
  std::vector<std::string> names;
  for (const auto& c : m.cases) names.push_back(c.name);
  return names;
}

// The harness's OpenCL kernels (naive calibrations, staff kernels) never as source: each lab's
// grader/opencl_kernels.cpp holds them encoded, as the build embeds them, and no released file holds
// a kernel's body.
void check_opencl_kernels_encoded(const fs::path& out, const gpulab::cli::ReleaseSummary& summary) {
  std::vector<std::string> released_texts;
  for (const auto& entry : fs::recursive_directory_iterator(out))
    if (entry.is_regular_file()) released_texts.push_back(read_file(entry.path()));
  int encoded_labs = 0;
  for (const auto& lab : fs::directory_iterator(repo_path("labs"))) {
    std::vector<gpulab::OpenClKernelFile> kernels;
    for (const auto& entry : fs::directory_iterator(lab.path() / "grader"))
      if (entry.path().extension() == ".cl") kernels.push_back({entry.path().stem().string(), read_file(entry.path())});
    if (kernels.empty()) continue;
    ++encoded_labs;
    std::sort(kernels.begin(), kernels.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    const std::string folder = lab.path().filename().string();
    const fs::path released = out / "labs" / folder / "grader";
    CAPTURE(folder);
    for (const auto& k : kernels) CHECK_FALSE(fs::exists(released / (k.name + ".cl")));
    const auto embedded = gpulab::embed_opencl_kernels(folder.substr(folder.find('-') + 1), kernels);
    CHECK(read_file(released / "opencl_kernels.cpp") == embedded.source);
    CHECK(read_file(released / "opencl_kernels.hpp") == embedded.header);
    for (const auto& k : kernels) {
      const std::string body = k.source.substr(k.source.find("\n__kernel") + 1);  // after the comments
      for (const auto& text : released_texts) CHECK(text.find(body) == std::string::npos);
    }
  }
  CHECK(encoded_labs >= 7);
  CHECK(summary.opencl_files.size() == static_cast<std::size_t>(encoded_labs));
}

}  // namespace

TEST_CASE(
    "a student release leaves out the solutions, the docs' answers, the fixtures and the hidden cases, and keeps every "
    "student file") {
  const fs::path out = fresh_folder("release/contents");
  const auto summary = write_student_release(GPULAB_REPO, out);
  INFO(gpulab::cli::describe(summary));
  CHECK(summary.files_written > 50);
  CHECK(summary.files_left_out > 0);
  CHECK(summary.hidden_cases_removed > 0);

  CHECK_FALSE(fs::exists(out / "solutions"));
  CHECK_FALSE(fs::exists(out / "tests/fixtures"));
  CHECK_FALSE(fs::exists(out / "docs/answers"));
  CHECK(fs::exists(out / "docs/labs/transpose.md"));
  CHECK_FALSE(fs::exists(out / ".git"));
  // The instructor's material: the guide (its threat model) and the docs' CUDA measurement tools,
  // whose chunked multi-stream pipeline answers the streams lab's overlap task. The released docs'
  // nav and links do not name the guide, so the student edition still builds strictly.
  for (const char* instructor_only : {"docs/instructors.md", "scripts/docs/streams_timeline.cu",
                                      "scripts/docs/host_device.cu", "scripts/docs/streams-timeline.sh"})
    CHECK_FALSE_MESSAGE(fs::exists(out / instructor_only), instructor_only);
  CHECK(read_file(out / "mkdocs.yml").find("instructors.md") == std::string::npos);
  CHECK(read_file(out / "README.md").find("instructors.md") == std::string::npos);
  // The harness's CUDA kernels (naive calibrations, staff kernels: designs of graded tasks) never as
  // source; this release, without nvcc, turns the students' CUDA backend off instead.
  for (const auto& entry : fs::recursive_directory_iterator(out / "grader"))
    CHECK_MESSAGE(entry.path().extension() != ".cu", entry.path());
  for (const auto& lab : fs::directory_iterator(out / "labs"))
    if (fs::is_directory(lab.path() / "grader"))
      for (const auto& entry : fs::recursive_directory_iterator(lab.path() / "grader"))
        CHECK_MESSAGE(entry.path().extension() != ".cu", entry.path());
  CHECK(fs::exists(out / "labs/01-matmul/grader/bindings_cuda.cpp"));  // the lab's harness ships with it
  CHECK_FALSE(fs::exists(out / "labs/10-streams/grader/tests/planted"));
  CHECK(read_file(out / "grader/prebuilt_cuda.cmake").find("GPULAB_RELEASE_WITHOUT_CUDA_KERNELS ON") !=
        std::string::npos);
  for (const auto& page : fs::recursive_directory_iterator(out / "docs"))
    if (page.path().extension() == ".md")
      CHECK_MESSAGE(read_file(page.path()).find("instructors.md)") == std::string::npos, page.path());
  for (const char* kept :
       {"README.md", "Makefile", "CMakeLists.txt", "tests/CMakeLists.txt", "common", "grader", "docs"})
    CHECK_MESSAGE(fs::exists(out / kept), kept);

  // Manifests: valid, without hidden cases, the instructor's visible cases in order, nothing else changed.
  int instructor_hidden = 0;
  for (const auto& instructor : gpulab::load_all_manifests(repo_path("labs"))) {
    CAPTURE(instructor.id);
    const fs::path released_path = out / "labs" / instructor.id / "lab.toml";
    const gpulab::Manifest released = gpulab::load_manifest(released_path);
    CHECK_FALSE(released.has_hidden_cases());
    CHECK(case_names(released) == case_names(gpulab::without_hidden_cases(instructor)));
    CHECK(
        is_subsequence(gpulab::split_lines(read_file(released_path)), gpulab::split_lines(read_file(instructor.path))));
    instructor_hidden += static_cast<int>(instructor.cases.size() - released.cases.size());
    // Every student file is there.
    for (const auto& [backend, files] : instructor.files)
      for (const auto& f : files) CHECK_MESSAGE(fs::exists(out / "labs" / instructor.id / f), f);
  }
  CHECK(instructor_hidden == summary.hidden_cases_removed);

  check_opencl_kernels_encoded(out, summary);

  // Every other file of labs/ is byte for byte the instructor's.
  int lab_files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(out / "labs")) {
    if (!entry.is_regular_file() || entry.path().filename() == "lab.toml") continue;
    if (entry.path().stem() == "opencl_kernels") continue;  // above
    const fs::path relative = fs::relative(entry.path(), out);
    CAPTURE(relative);
    CHECK(read_file(entry.path()) == read_file(repo_path(relative.string())));
    ++lab_files;
  }
  CHECK(lab_files > 10);

  // No released file holds the text of a solution (a solution file that is the same as the
  // skeleton's, like a lab's Makefile, gives nothing away).
  std::set<std::string> released_texts;
  for (const auto& entry : fs::recursive_directory_iterator(out))
    if (entry.is_regular_file()) released_texts.insert(read_file(entry.path()));
  for (const auto& entry : fs::recursive_directory_iterator(repo_path("solutions"))) {
    if (!entry.is_regular_file()) continue;
    const fs::path relative = fs::relative(entry.path(), repo_path("solutions"));
    const fs::path skeleton = committed_labs() / relative;
    const std::string text = read_file(entry.path());
    if (fs::exists(skeleton) && read_file(skeleton) == text) continue;
    CAPTURE(relative);
    CHECK(released_texts.count(text) == 0);
  }
}

TEST_CASE("a student release refuses a folder that is not empty, and leaves it as it was") {
  const fs::path out = fresh_folder("release/not-empty");
  write_file(out / "notes.txt", "mine");
  CHECK_THROWS_WITH(write_student_release(GPULAB_REPO, out), doctest::Contains("is not empty"));
  CHECK(read_file(out / "notes.txt") == "mine");
  CHECK(std::distance(fs::directory_iterator(out), fs::directory_iterator()) == 1);
}

TEST_CASE(
    "the student release builds, links a CUDA skeleton with the compiled harness kernels, reports the skeleton as not "
    "implemented, and skips the solutions' tests") {
  const fs::path root = fresh_folder("release/build");
  const fs::path repo = root / "repo";
#ifdef GPULAB_NVCC
  // One architecture: this test proves the objects link; `gpulab release` compiles for sm_75 to sm_120.
  const auto summary = write_student_release(GPULAB_REPO, repo, {GPULAB_NVCC, GPULAB_CXX, {"sm_75"}});
  CHECK(summary.cuda_objects.size() > 3);
  const std::string cuda = "ON";
#else
  write_student_release(GPULAB_REPO, repo);
  const std::string cuda = "OFF";
#endif
  const fs::path build = repo / "build";
  const gpulab::Manifest lab = gpulab::load_all_manifests(repo_path("labs")).front();

  std::string output;
  const std::string configure = std::string("'") + GPULAB_CMAKE + "' -S '" + repo.string() + "' -B '" + build.string() +
                                "' -G '" + GPULAB_CMAKE_GENERATOR +
                                "' -DCMAKE_BUILD_TYPE=Release -DGPULAB_WITH_CUDA=" + cuda;
  REQUIRE_MESSAGE(run_command(configure, output) == 0, output);
  output.clear();
  // matmul's CUDA harness: its naive calibration, as an object, and cuBLAS; filter's OpenCL harness:
  // its two staff kernels, from the encoded copy the release ships (opencl_kernels.cpp).
  const std::string compile = std::string("'") + GPULAB_CMAKE + "' --build '" + build.string() +
                              "' --parallel 2 --target gpulab gpulab_harness_" + lab.name +
                              "_opencl gpulab_harness_filter_opencl" +
                              (cuda == "ON" ? " gpulab_harness_matmul_cuda" : "");
  REQUIRE_MESSAGE(run_command(compile, output) == 0, output);
  // Its house-style test passes there (the encoded kernels are not clang-format's to lay out): the
  // files as a student's clone has them, not git's view of this repository around the scratch folder.
  output.clear();
  const int style = run_command("cd '" + repo.string() + "' && GIT_DIR=/nonexistent scripts/format.sh --check", output);
  CHECK_MESSAGE((style == 0 || style == 77), output);
  if (style == 0) CHECK_MESSAGE(output.find("all ") != std::string::npos, output);
  if (cuda == "ON") {
    output.clear();
    CHECK_MESSAGE(run_command("'" + (build / "gpulab").string() + "' build --lab matmul --backend cuda", output) == 0,
                  output);
  }

  // `gpulab check` grades the student's own labs/ by default, as `make check` does.
  output.clear();
  const fs::path json = root / "report.json";
  const int exit_code = run_command("'" + (build / "gpulab").string() + "' check --lab " + lab.name +
                                        " --backend opencl --json '" + json.string() + "'",
                                    output);
  INFO(output);
  CHECK(exit_code == 1);
  REQUIRE(fs::exists(json));
  CliRun run;
  run.report = nlohmann::json::parse(read_file(json));
  for (const auto& task : lab.tasks) {
    CAPTURE(task.name);
    CHECK(run.status(lab.name, task.name) == "not_implemented");
    CHECK(run.task(lab.name, task.name).at("message").get<std::string>().find("labs/" + lab.id + "/") !=
          std::string::npos);
  }

#if GPULAB_HAVE_SERVER
  // The release's `gpulab submit` sends the student's lab to the course's server (this repository's,
  // SQLite) and prints its official report with the exit status of a check.
  {
    const fs::path course = fresh_folder("release/server");
    write_file(course / "roster.csv", "id,name,email\nstudent,A Student,student@example.org\n");
    output.clear();
    REQUIRE(run_command(std::string("'") + GPULAB_CLI + "' roster --dir '" + (course / "server").string() +
                            "' --import '" + (course / "roster.csv").string() + "'",
                        output) == 0);
    const std::string tokens = read_file(course / "server" / "tokens.csv");
    write_file(repo / ".gpulab-submit", "server = " + std::string("unset") +
                                            "\ntoken = " + tokens.substr(tokens.find("student,") + 8, 64) + "\n");
    ServerProcess server(course / "server");
    output.clear();
    const int submitted = run_command(
        "'" + (build / "gpulab").string() + "' submit --server " + server.url() + " --lab " + lab.name + " --poll 0.2",
        output);
    INFO(output);
    CHECK(submitted == 1);
    CHECK(output.find("sent to " + server.url()) != std::string::npos);
    CHECK(output.find("not implemented") != std::string::npos);
  }
#endif

  // `make test` there: the tests that need the solutions are replaced by one that says so.
  output.clear();
  REQUIRE(run_command("cd '" + build.string() + "' && '" + GPULAB_CTEST + "' -N", output) == 0);
  CHECK(output.find("tests that need the reference solutions are skipped in the student repository") !=
        std::string::npos);
  // The docs site is there too: the student edition builds from the release (no solutions, no answers).
  CHECK(output.find("the docs site builds strictly in both editions") != std::string::npos);
  output.clear();
  CHECK(
      run_command("cd '" + build.string() + "' && '" + GPULAB_CTEST + "' --output-on-failure -R 'reference solutions'",
                  output) == 0);
  CHECK(output.find("Skipped") != std::string::npos);

  // Objects of another CUDA major version do not link: the students' build says so and runs on OpenCL.
  if (cuda == "ON") {
    const fs::path prebuilt = repo / "grader/prebuilt_cuda.cmake";
    write_file(prebuilt, "set(GPULAB_PREBUILT_CUDA_VERSION \"1.0\")\nset(GPULAB_PREBUILT_CUDA_ARCHS \"sm_75\")\n");
    output.clear();
    CHECK(run_command(configure, output) == 0);
    std::string words;  // CMake wraps a warning's lines
    for (const char c : output)
      if (!std::isspace(static_cast<unsigned char>(c)) || (!words.empty() && words.back() != ' '))
        words += std::isspace(static_cast<unsigned char>(c)) ? ' ' : c;
    CHECK_MESSAGE(words.find("were compiled by CUDA 1.0 and this machine has CUDA") != std::string::npos, output);
    CHECK_MESSAGE(output.find("gpulab backends: OpenCL=ON CUDA=OFF") != std::string::npos, output);
  }
}

namespace {

// tests/support/export_skeletons.cmake on `repo`: what the tests of that repository read as labs/.
fs::path export_skeletons(const fs::path& repo, const fs::path& out, std::string& output) {
  const std::string command = fmt::format("'{}' -DREPO='{}' -DOUT='{}' -P '{}'", GPULAB_CMAKE, repo.string(),
                                          out.string(), repo_path("tests/support/export_skeletons.cmake").string());
  REQUIRE_MESSAGE(run_command(command, output) == 0, output);
  return out / "labs";
}

}  // namespace

TEST_CASE("the tests read the skeletons as released or as committed, never a student's or an instructor's edits") {
  const fs::path root = fresh_folder("release/skeletons");
  std::string output;

  // A student repository: the released tests/skeletons.tar, whatever the student did to labs/.
  const fs::path student = root / "student";
  write_student_release(GPULAB_REPO, student);
  const gpulab::Manifest lab = gpulab::load_all_manifests(student / "labs").front();
  const std::string file = lab.id + "/" + lab.files.at("opencl").front();
  write_file(student / "labs" / file, "the student's own work\n");
  write_file(student / "labs" / lab.id / "notes.cu", "a file of the student's\n");
  const fs::path released = export_skeletons(student, root / "student-export", output);
  CHECK(read_file(released / file) == read_file(committed_labs() / file));
  CHECK_FALSE(fs::exists(released / lab.id / "notes.cu"));

  // The instructor repository: labs/ as committed, with a note when labs/ has uncommitted changes.
  const fs::path course = root / "course";
  write_file(course / "labs/00-first/kernel.cu", "// TODO: write the kernel\n");
  output.clear();
  REQUIRE_MESSAGE(
      run_command(fmt::format("cd '{}' && git init -q && git add -A && git -c user.name=t -c user.email=t@t "
                              "commit -qm skeleton",
                              course.string()),
                  output) == 0,
      output);
  write_file(course / "labs/00-first/kernel.cu", "the instructor trying the lab\n");
  write_file(course / "labs/00-first/scratch.cu", "untracked\n");
  output.clear();
  const fs::path committed = export_skeletons(course, root / "course-export", output);
  CHECK(read_file(committed / "00-first/kernel.cu") == "// TODO: write the kernel\n");
  CHECK_FALSE(fs::exists(committed / "00-first/scratch.cu"));
  CHECK(output.find("the uncommitted changes in labs/ are not tested") != std::string::npos);

  // A source tree without git (a tarball): labs/ as it is, the only copy there is.
  fs::remove_all(course / ".git");
  output.clear();
  CHECK(read_file(export_skeletons(course, root / "plain-export", output) / "00-first/kernel.cu") ==
        "the instructor trying the lab\n");
}
