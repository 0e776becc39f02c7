// Batch grading end to end: `gpulab grade` on a folder of submissions (good ones, broken ones and the
// hostile corpus of tests/fixtures/submissions), then its outputs, resuming and isolation.
// `--backend=cuda` runs the corpus on a CUDA GPU and exits 77 (skipped) without one.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <toml++/toml.h>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using nlohmann::json;
using namespace gpulab::testing;

namespace {

std::string g_backend = "opencl";

struct Batch {
  fs::path submissions, out;
  explicit Batch(const std::string& name)
      : submissions(fs::path(GPULAB_SCRATCH) / name / "submissions"), out(fs::path(GPULAB_SCRATCH) / name / "out") {
    fs::remove_all(submissions.parent_path());
    fs::create_directories(submissions);
  }
  void add_folder(const std::string& student, const std::string& tree, const std::string& lab = "02-transpose") {
    fs::create_directories(submissions / student / "labs");
    fs::copy(repo_path(tree) / lab, submissions / student / "labs" / lab, fs::copy_options::recursive);
  }
  int grade(const std::string& args, std::string& output) const {
    return run_command(fmt::format("'{}' grade --submissions '{}' --out '{}' {}", GPULAB_CLI, submissions.string(),
                                   out.string(), args),
                       output);
  }
  json result(const std::string& student) const {
    return json::parse(read_file(out / "students" / student / "result.json"));
  }
};

std::map<std::string, std::string> statuses(const json& result) {
  std::map<std::string, std::string> out;
  for (const auto& l : result["labs"])
    for (const auto& t : l["tasks"]) out[t["task"]] = t["status"];
  return out;
}

std::string messages(const json& result) {
  std::string out = result.value("error", "");
  for (const auto& n : result["notes"]) out += "\n" + n.get<std::string>();
  for (const auto& l : result["labs"])
    for (const auto& t : l["tasks"]) out += "\n" + t.value("message", "") + "\n" + t.value("details", "");
  return out;
}

// Every case right: the points of a threshold task on a CPU also depend on the machine's load.
bool all_correct(const json& result) {
  if (result["labs"].empty()) return false;
  for (const auto& l : result["labs"])
    for (const auto& t : l["tasks"])
      if (t["cases_passed"] != t["cases_total"] || (t["status"] != "passed" && t["status"] != "too_slow")) return false;
  return true;
}

std::string points(const json& result, const std::string& task) {
  for (const auto& t : result["labs"][0]["tasks"])
    if (t["task"] == task) return fmt::format("{:g}", t["points"].get<double>());
  return "?";
}

std::vector<fs::path> leftovers(const fs::path& out) {
  std::vector<fs::path> found;
  for (const auto& e : fs::recursive_directory_iterator(out))
    if (e.path().extension() == ".tmp") found.push_back(e.path());
  return found;
}

}  // namespace

TEST_CASE("a batch grades folders and archives, writes gradebook, Gradescope results and feedback, and skips unchanged students on a rerun") {
  Batch b("grade-resume");
  b.add_folder("alice", "solutions");
  b.add_folder("bob", "labs");
  b.add_folder("carol-src", "solutions");
  std::string output;
  REQUIRE(run_command(fmt::format("cd '{}' && tar czf carol.tar.gz -C carol-src . && rm -r carol-src", b.submissions.string()),
                      output) == 0);

  output.clear();
  REQUIRE(b.grade("--lab transpose --backend opencl --timeout 30", output) == 0);  // one job: timings undisturbed
  INFO(output);
  CHECK(output.find("graded 3 of 3 submissions") != std::string::npos);
  const json alice = b.result("alice"), bob = b.result("bob"), carol = b.result("carol");
  CHECK(all_correct(alice));
  CHECK(alice["max_score"] == 10.0);
  CHECK(statuses(alice)["naive"] == "passed");
  CHECK(alice["score"].get<double>() >= 3.0);
  CHECK(all_correct(carol));
  CHECK(carol["content_hash"] == alice["content_hash"]);  // the same files, whatever the packaging
  CHECK(bob["score"] == 0.0);
  CHECK(statuses(bob) == std::map<std::string, std::string>{{"naive", "not_implemented"}, {"optimized", "not_implemented"}});
  CHECK(alice["seed"].get<std::uint64_t>() != 0);
  CHECK(alice["isolation"].get<std::string>().find("limits:") != std::string::npos);
  CHECK(alice["labs"][0]["device"].contains("name"));  // every student's report names the device and calibration
  CHECK(alice["labs"][0]["calibration"]["rates"].contains("copy"));

  const std::string csv = read_file(b.out / "grades.csv");
  CHECK(csv.rfind("student,submission,02-transpose/naive,02-transpose/optimized,score,max_score,error\n", 0) == 0);
  for (const auto& [student, file] : {std::pair{alice, "alice"}, {bob, "bob"}, {carol, "carol.tar.gz"}})
    CHECK(csv.find(fmt::format("\n{},{},{},{},{:g},10,\n", student["student"].get<std::string>(), file, points(student, "naive"),
                               points(student, "optimized"), student["score"].get<double>())) != std::string::npos);

  const json gradescope = json::parse(read_file(b.out / "students" / "bob" / "results.json"));
  CHECK(gradescope["score"] == 0.0);
  REQUIRE(gradescope["tests"].size() == 2);
  CHECK(gradescope["tests"][0]["name"] == "02-transpose / naive (transpose_naive)");
  CHECK(gradescope["tests"][0]["max_score"] == 3.0);
  CHECK(gradescope["tests"][0]["output"].get<std::string>().find("not implemented") != std::string::npos);
  const std::string feedback = read_file(b.out / "students" / "bob" / "feedback.html");
  CHECK(feedback.find("Feedback for bob") != std::string::npos);
  CHECK(feedback.find("transpose_naive") != std::string::npos);
  CHECK(fs::exists(b.out / "index.html"));
  const json batch = json::parse(read_file(b.out / "batch.json"));
  CHECK(batch["graded"] == 3);
  CHECK(batch["throughput_per_hour"].get<double>() > 0);

  // Unchanged: skipped. One file changed: only that student. --force: everyone.
  output.clear();
  REQUIRE(b.grade("--lab transpose --backend opencl --jobs 2", output) == 0);
  CHECK(output.find("graded 0 of 3 submissions (0 refused, 3 unchanged and skipped)") != std::string::npos);
  CHECK(b.result("alice")["graded_at"] == alice["graded_at"]);
  write_file(b.submissions / "bob/labs/02-transpose/transpose.cl",
             read_file(b.submissions / "bob/labs/02-transpose/transpose.cl") + "\n// resubmitted\n");
  output.clear();
  REQUIRE(b.grade("--lab transpose --backend opencl --jobs 2", output) == 0);
  CHECK(output.find("graded 1 of 3 submissions (0 refused, 2 unchanged and skipped)") != std::string::npos);
  CHECK(b.result("bob")["content_hash"] != bob["content_hash"]);
  output.clear();
  REQUIRE(b.grade("--lab transpose --backend opencl --jobs 2 --force", output) == 0);
  CHECK(output.find("graded 3 of 3 submissions") != std::string::npos);
  CHECK(leftovers(b.out).empty());
}

TEST_CASE("a batch killed in the middle leaves no half-written result, and the next run grades only what is missing") {
  Batch b("grade-kill");
  for (const char* s : {"s1", "s2", "s3", "s4"}) b.add_folder(s, "solutions");
  const std::string command = fmt::format("exec '{}' grade --submissions '{}' --out '{}' --lab transpose --backend opencl --quiet "
                                          ">/dev/null 2>&1",
                                          GPULAB_CLI, b.submissions.string(), b.out.string());
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", command.c_str(), nullptr);
    ::_exit(127);
  }
  // Kill it (no chance to clean up) as soon as the first student is recorded.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300);
  while (!fs::exists(b.out / "students" / "s1" / "result.json") && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  REQUIRE(fs::exists(b.out / "students" / "s1" / "result.json"));
  int recorded = 0;
  for (const char* s : {"s1", "s2", "s3", "s4"}) {
    const fs::path record = b.out / "students" / s / "result.json";
    if (!fs::exists(record)) continue;
    ++recorded;
    CHECK_FALSE(json::parse(read_file(record), nullptr, false).is_discarded());
  }
  CHECK(recorded < 4);  // it really was stopped in the middle

  std::string output;
  REQUIRE(b.grade("--lab transpose --backend opencl", output) == 0);
  INFO(output);
  CHECK(output.find(fmt::format("graded {} of 4 submissions (0 refused, {} unchanged and skipped)", 4 - recorded, recorded)) !=
        std::string::npos);
  for (const char* s : {"s1", "s2", "s3", "s4"}) CHECK(all_correct(b.result(s)));
  CHECK(leftovers(b.out).empty());
  CHECK_FALSE(fs::exists(b.out / ".scratch"));
}

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]).rfind("--backend=", 0) == 0) g_backend = std::string(argv[i]).substr(10);
  if (g_backend == "cuda") {
    std::string output;
    run_command(fmt::format("'{}' devices", GPULAB_CLI), output);
    if (output.find("cuda: no device") != std::string::npos || output.find("cuda:") == std::string::npos) {
      std::puts("no CUDA device: the CUDA batch-grading tests are skipped");
      return 77;
    }
  }
  doctest::Context context(argc, argv);
  context.setOption("no-run", false);
  return context.run();
}
