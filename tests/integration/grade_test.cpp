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

#include <toml++/toml.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "batch.hpp"
#include "cli_harness.hpp"
#include "gpulab/manifest.hpp"
#include "gradescope_schema.hpp"
#include "sandbox.hpp"

namespace cli = gpulab::cli;

using nlohmann::json;
using namespace gpulab::testing;

namespace {

std::string g_backend = "opencl";

// The lab every batch here grades: the one the hostile corpus (tests/fixtures/submissions) was written
// for, read from its layout, <student>/labs/<id>/, so one build of the lab serves every test.
const gpulab::Manifest& graded_lab() {
  static const gpulab::Manifest lab = [] {
    const fs::path labs = repo_path("tests/fixtures/submissions/compile-error/labs");
    const std::string id = fs::directory_iterator(labs)->path().filename().string();
    return gpulab::load_manifest(repo_path("labs") / id / "lab.toml");
  }();
  return lab;
}

// "--lab <name> --backend <backend>", the start of every batch's arguments.
std::string lab_args(const std::string& backend = "opencl") {
  return "--lab " + graded_lab().name + " --backend " + backend;
}

// Every task of the graded lab with one status, as statuses() gives them.
std::map<std::string, std::string> every_task(const std::string& status) {
  std::map<std::string, std::string> out;
  for (const auto& t : graded_lab().tasks) out[t.name] = status;
  return out;
}

// The points the graded lab's tasks are worth without the bonus ones (a result's max_score).
double max_points() {
  double sum = 0;
  for (const auto& t : graded_lab().tasks) sum += t.bonus ? 0 : t.points;
  return sum;
}

std::vector<std::string> processes_mentioning(const std::string& text);  // below

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

// grades.csv: the header names every task of the graded lab, and each student's row holds their
// points, score and status.
void check_gradebook(const Batch& b, const std::vector<std::pair<json, std::string>>& students) {
  const auto& lab = graded_lab();
  const std::string csv = read_file(b.out / "grades.csv");
  std::vector<std::string> task_columns;
  for (const auto& t : lab.tasks) task_columns.push_back(lab.id + "/" + t.name);
  CHECK(csv.rfind(fmt::format("student,submission,{},score,max_score,status,error,findings,attempts,counted\n",
                              fmt::join(task_columns, ",")),
                  0) == 0);
  for (const auto& [student, file] : students) {
    std::vector<std::string> task_points;
    for (const auto& t : lab.tasks) task_points.push_back(points(student, t.name));
    CHECK(csv.find(fmt::format("\n{},{},{},{:g},{:g},graded,,,1,latest ({})\n", student["student"].get<std::string>(),
                               file, fmt::join(task_points, ","), student["score"].get<double>(), max_points(),
                               student["graded_at"].get<std::string>())) != std::string::npos);
  }
}

// The Gradescope results and the feedback page of a student who submitted the untouched skeleton.
void check_unimplemented_outputs(const Batch& b, const std::string& student) {
  const auto& lab = graded_lab();
  const gpulab::Task& first_task = lab.tasks.front();
  const json gradescope = json::parse(read_file(b.out / "students" / student / "results.json"));
  CHECK(gradescope["score"] == 0.0);
  REQUIRE(gradescope["tests"].size() == lab.tasks.size());
  CHECK(gradescope["tests"][0]["name"] == fmt::format("{} / {} ({})", lab.id, first_task.name, first_task.function));
  CHECK(gradescope["tests"][0]["max_score"] == first_task.points);
  CHECK(gradescope["tests"][0]["output"].get<std::string>().find("not implemented") != std::string::npos);
  const std::string feedback = read_file(b.out / "students" / student / "feedback.html");
  CHECK(feedback.find("Feedback for " + student) != std::string::npos);
  CHECK(feedback.find(first_task.function) != std::string::npos);
}

// After a run with --leaderboard and due dates (everyone's long past, bob's far ahead): alice's honest
// rates in her Gradescope leaderboard, the gradebook's lateness columns, pseudonyms on the summary page.
void check_late_outputs(const Batch& b) {
  const json gradescope = json::parse(read_file(b.out / "students" / "alice" / "results.json"));
  check_gradescope_schema(gradescope);
  REQUIRE(gradescope.contains("leaderboard"));
  CHECK(!gradescope["leaderboard"].empty());
  CHECK_FALSE(json::parse(read_file(b.out / "students" / "bob" / "results.json"))["leaderboard"].size());
  const std::string csv = read_file(b.out / "grades.csv");
  CHECK(csv.find(",findings,submitted,due,late_days,late_penalty,final_score,attempts,counted\n") != std::string::npos);
  CHECK(csv.find(",2020-01-01T00:00:00Z,") != std::string::npos);
  CHECK(csv.find(",100,0,1,latest (") != std::string::npos);  // alice: years late, past the 3 days: everything
  CHECK(csv.find(",2998-12-31T23:00:00Z,0,0,0,1,latest (") != std::string::npos);  // bob's extension; his score is 0
  if (!fs::exists(b.out / "index.html")) return;  // without matplotlib the batch said so
  const std::string page = read_file(b.out / "index.html");
  CHECK(page.find("<h2>Leaderboard</h2>") != std::string::npos);
  CHECK(page.find("anon-") != std::string::npos);
  const auto board = page.substr(page.find("<h2>Leaderboard</h2>"));
  CHECK(board.find("alice") == std::string::npos);
}

}  // namespace

TEST_CASE(
    "a batch grades folders and archives, writes gradebook, Gradescope results and feedback, and skips unchanged "
    "students on a rerun") {
  Batch b("grade-resume");
  b.add_folder("alice", "solutions", graded_lab().id);
  b.add_folder("bob", "labs", graded_lab().id);
  b.add_folder("carol-src", "solutions", graded_lab().id);
  std::string output;
  REQUIRE(run_command(
              fmt::format("cd '{}' && tar czf carol.tar.gz -C carol-src . && rm -r carol-src", b.submissions.string()),
              output) == 0);

  output.clear();
  REQUIRE(b.grade(lab_args(), output) == 0);  // one job: timings undisturbed
  INFO(output);
  CHECK(output.find("graded 3 of 3 submissions") != std::string::npos);
  const json alice = b.result("alice"), bob = b.result("bob"), carol = b.result("carol");
  CHECK(all_correct(alice));
  const auto& lab = graded_lab();
  const gpulab::Task& first_task = lab.tasks.front();  // the naive one, which passes on any device
  CHECK(alice["max_score"] == max_points());
  CHECK(statuses(alice)[first_task.name] == "passed");
  CHECK(alice["score"].get<double>() >= first_task.points);
  CHECK(all_correct(carol));
  CHECK(carol["content_hash"] == alice["content_hash"]);  // the same files, whatever the packaging
  CHECK(bob["score"] == 0.0);
  CHECK(statuses(bob) == every_task("not_implemented"));
  CHECK(alice["seed"].get<std::uint64_t>() != 0);
  CHECK(alice["isolation"].get<std::string>().find("limits:") != std::string::npos);
  CHECK(alice["labs"][0]["device"].contains("name"));  // every student's report names the device and calibration
  CHECK(alice["labs"][0]["calibration"]["rates"].contains("copy"));

  check_gradebook(b, {{alice, "alice"}, {bob, "bob"}, {carol, "carol.tar.gz"}});
  check_unimplemented_outputs(b, "bob");
  // The summary page needs matplotlib (install-deps installs it); without it the batch says so.
  CHECK((fs::exists(b.out / "index.html") || output.find("summary page was not written") != std::string::npos));
  const json batch = json::parse(read_file(b.out / "batch.json"));
  CHECK(batch["graded"] == 3);
  CHECK(batch["throughput_per_hour"].get<double>() > 0);

  // Unchanged: skipped. One file changed: only that student. --force: everyone.
  // The skipped students' outputs are rendered again with the new run's leaderboard and due dates.
  const fs::path due = b.submissions.parent_path() / "due.csv";
  write_file(due,
             "student,due,penalty_per_day,max_late_days\n*,2020-01-01T00:00:00Z,10,3\n"
             "bob,2999-01-01T00:00:00+01:00,,\n");
  output.clear();
  REQUIRE(b.grade(lab_args() + " --jobs 2 --leaderboard --deadlines '" + due.string() + "'", output) == 0);
  CHECK(output.find("graded 0 of 3 submissions (0 refused, 3 unchanged and skipped)") != std::string::npos);
  CHECK(b.result("alice")["graded_at"] == alice["graded_at"]);
  check_late_outputs(b);
  const fs::path kernel = b.submissions / "bob/labs" / lab.id / lab.files_with_extension("opencl", ".cl").front();
  write_file(kernel, read_file(kernel) + "\n// resubmitted\n");
  output.clear();
  REQUIRE(b.grade(lab_args() + " --jobs 2", output) == 0);
  CHECK(output.find("graded 1 of 3 submissions (0 refused, 2 unchanged and skipped)") != std::string::npos);
  CHECK(b.result("bob")["content_hash"] != bob["content_hash"]);
  output.clear();
  REQUIRE(b.grade(lab_args() + " --jobs 2 --force", output) == 0);
  CHECK(output.find("graded 3 of 3 submissions") != std::string::npos);
  output.clear();  // other limits can change a result: everyone again
  REQUIRE(b.grade(lab_args() + " --jobs 2 --time-limit 600", output) == 0);
  CHECK(output.find("graded 3 of 3 submissions") != std::string::npos);
  CHECK(leftovers(b.out).empty());
  // Every grading is kept: alice was graded three times (first run, --force, new limits), and the
  // gradebook says so and that the latest counts.
  std::set<std::string> kept;
  for (const auto& e : fs::directory_iterator(b.out / "students/alice/attempts"))
    kept.insert(json::parse(read_file(e.path()))["graded_at"].get<std::string>() + "|" + e.path().filename().string());
  CHECK(kept.size() == 3);
  CHECK(read_file(b.out / "grades.csv")
            .find(fmt::format(",3,latest ({})\n", b.result("alice")["graded_at"].get<std::string>())) !=
        std::string::npos);
}

TEST_CASE("a class with accented names grades, and two entries of one student are refused while the batch goes on") {
  Batch b("grade-names");
  const std::string zoe_acute = "zo\xc3\xa9", zoe_diaeresis = "zo\xc3\xab";
  b.add_folder(zoe_acute, "labs", graded_lab().id);
  b.add_folder(zoe_diaeresis, "labs", graded_lab().id);
  std::string output;
  REQUIRE(
      run_command(fmt::format("cd '{}' && tar cf '{}.tar' '{}'", b.submissions.string(), zoe_diaeresis, zoe_diaeresis),
                  output) == 0);
  output.clear();
  REQUIRE(b.grade(lab_args(), output) == 0);
  INFO(output);
  CHECK(statuses(b.result(zoe_acute)) == every_task("not_implemented"));  // graded under her own name
  const json both = b.result(zoe_diaeresis);
  CHECK(both["error"].get<std::string>().find(fmt::format("{} and {}.tar are both the student {}: refused",
                                                          zoe_diaeresis, zoe_diaeresis, zoe_diaeresis)) !=
        std::string::npos);
  const std::string csv = read_file(b.out / "grades.csv");
  CHECK(csv.find("\n" + zoe_acute + ",") != std::string::npos);
  CHECK(csv.find("\n" + zoe_diaeresis + ",") != std::string::npos);
}

TEST_CASE("gpulab check takes a clone's root as SOURCE, as gpulab grade takes a submission") {
  Batch b("check-clone-root");
  b.add_folder("clone", "solutions", graded_lab().id);  // clone/labs/<id>/
  const fs::path report = b.out.parent_path() / "check.json";
  std::string output;
  const int status = run_command(fmt::format("'{}' check --source '{}' {} --json '{}'", GPULAB_CLI,
                                             (b.submissions / "clone").string(), lab_args(), report.string()),
                                 output);
  INFO(output);
  CHECK(output.find("missing") == std::string::npos);
  CHECK(status == 0);
}

TEST_CASE("a batch killed in the middle leaves no half-written result, and the next run grades only what is missing") {
  Batch b("grade-kill");
  for (const char* s : {"s1", "s2", "s3", "s4"}) b.add_folder(s, "solutions", graded_lab().id);
  const std::string command = fmt::format("exec '{}' grade --submissions '{}' --out '{}' {} --quiet >/dev/null 2>&1",
                                          GPULAB_CLI, b.submissions.string(), b.out.string(), lab_args());
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
  // What it had started dies with it.
  for (int i = 0; i < 250 && !processes_mentioning(b.out.string()).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK_MESSAGE(processes_mentioning(b.out.string()).empty(),
                fmt::format("{}", fmt::join(processes_mentioning(b.out.string()), "\n")));
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
  REQUIRE(b.grade(lab_args(), output) == 0);
  INFO(output);
  CHECK(output.find(fmt::format("graded {} of 4 submissions (0 refused, {} unchanged and skipped)", 4 - recorded,
                                recorded)) != std::string::npos);
  for (const char* s : {"s1", "s2", "s3", "s4"}) CHECK(all_correct(b.result(s)));
  CHECK(leftovers(b.out).empty());
  CHECK_FALSE(fs::exists(b.out / ".scratch"));
}

TEST_CASE("two batches and a check at once on one machine grade every student as if each ran alone") {
  // Each batch runs two jobs, so both want the first two sandbox users at the same time.
  Batch first("grade-concurrent-1"), second("grade-concurrent-2");
  for (Batch* b : {&first, &second}) {
    for (const char* s : {"s1", "s2", "s3"}) b->add_folder(s, "solutions", graded_lab().id);
    b->add_folder("skeleton", "labs", graded_lab().id);
  }
  std::string output_first, output_second, output_check;
  int status_first = -1, status_second = -1, status_check = -1;
  std::thread batch_one([&] { status_first = first.grade(lab_args() + " --jobs 2", output_first); });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  std::thread batch_two([&] { status_second = second.grade(lab_args() + " --jobs 2", output_second); });
  std::thread check([&] {
    status_check =
        run_command(fmt::format("'{}' check --source '{}' {} --json '{}'", GPULAB_CLI, repo_path("solutions").string(),
                                lab_args(), (first.out.parent_path() / "check.json").string()),
                    output_check);
  });
  batch_one.join();
  batch_two.join();
  check.join();
  INFO(output_first, "\n----\n", output_second, "\n----\n", output_check);
  CHECK(status_first == 0);
  CHECK(status_second == 0);
  for (const Batch* b : {&first, &second}) {
    for (const char* s : {"s1", "s2", "s3"}) {
      const json r = b->result(s);
      INFO(s, ": ", messages(r));
      CHECK(all_correct(r));
      CHECK_FALSE(r.value("grader_error", false));
    }
    const json skeleton = b->result("skeleton");
    CHECK(statuses(skeleton) == every_task("not_implemented"));
    CHECK(read_file(b->out / "grades.csv").find("not graded") == std::string::npos);
  }
  const json checked = json::parse(read_file(first.out.parent_path() / "check.json"));
  for (const auto& t : checked["labs"][0]["tasks"]) CHECK(t["cases_passed"] == t["cases_total"]);
}

TEST_CASE(
    "a compiler killed from outside is the grader's failure: retried, recorded as not graded, and regraded later") {
  // A copy of the grader whose C++ compiler kills itself: what another process (or a batch that took
  // the same sandbox user) does to a compile. It must never become the student's compile error.
  const fs::path fake = fs::path(GPULAB_SCRATCH) / "grade-grader-failure" / "grader";
  fs::remove_all(fake);
  fs::create_directories(fake);
  const fs::path real = fs::path(GPULAB_CLI).parent_path();
  fs::copy_file(GPULAB_CLI, fake / "gpulab");
  fs::copy_file(real / "gpulab-instructor", fake / "gpulab-instructor");  // gpulab hands `grade` on to it
  write_file(fake / "killed-cxx", "#!/bin/sh\nkill -KILL $$\n");
  fs::permissions(fake / "killed-cxx", fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                           fs::perms::others_read | fs::perms::others_exec);
  json toolchain = json::parse(read_file(real / "toolchain.json"));
  toolchain["cxx"] = (fake / "killed-cxx").string();
  write_file(fake / "toolchain.json", toolchain.dump(2));

  Batch b("grade-grader-failure/batch");
  b.add_folder("alice", "solutions", graded_lab().id);
  std::string output;
  const int status = run_command(fmt::format("'{}' grade --submissions '{}' --out '{}' {}", (fake / "gpulab").string(),
                                             b.submissions.string(), b.out.string(), lab_args()),
                                 output);
  INFO(output);
  CHECK(status != 0);  // the batch says the grader failed for someone
  CHECK(output.find("trying again") != std::string::npos);
  const json failed = b.result("alice");
  CHECK(failed.value("grader_error", false));
  CHECK(failed["score"].is_null());
  CHECK(failed.value("error", "").find("killed by signal 9") != std::string::npos);
  CHECK(failed.value("error", "").find("tried 3 times") != std::string::npos);
  CHECK(failed["labs"].empty());  // no compile_error, no zero
  const std::string csv = read_file(b.out / "grades.csv");
  // alice, her submission, an empty column per task and for the score, then the maximum
  CHECK(csv.find(fmt::format("alice,alice{}{:g},not graded,", std::string(graded_lab().tasks.size() + 2, ','),
                             max_points())) != std::string::npos);
  CHECK_FALSE(fs::exists(b.out / "students" / "alice" / "results.json"));  // nothing to upload as a grade

  // The real grader grades the student on the next run, although the files did not change.
  output.clear();
  REQUIRE(b.grade(lab_args(), output) == 0);
  INFO(output);
  CHECK(output.find("graded 1 of 1 submissions") != std::string::npos);
  CHECK(all_correct(b.result("alice")));
  CHECK(read_file(b.out / "grades.csv").find(",graded,") != std::string::npos);
}

TEST_CASE(
    "submissions in a private (0700) folder are graded; results there too refuse the batch, naming the folder and "
    "the fix") {
  Batch b("grade-private");
  const fs::path private_dir = b.submissions.parent_path() / "private", submissions = private_dir / "submissions";
  fs::create_directories(submissions / "alice" / "labs");
  fs::copy(repo_path("solutions") / graded_lab().id, submissions / "alice" / "labs" / graded_lab().id,
           fs::copy_options::recursive);
  fs::permissions(private_dir, fs::perms::owner_all);  // as a private home folder on a shared machine
  const auto grade = [&](const fs::path& out, std::string& output) {
    return run_command(fmt::format("'{}' grade --submissions '{}' --out '{}' {}", GPULAB_CLI, submissions.string(),
                                   out.string(), lab_args()),
                       output);
  };
  std::string output;
  REQUIRE(grade(b.out, output) == 0);
  INFO(output);
  CHECK(output.find("graded 1 of 1 submissions") != std::string::npos);
  CHECK(all_correct(b.result("alice")));  // the grader copies the lab files; the sandbox never reads the folder

  // The scratch folder (OUT/.scratch) would be out of the sandbox users' reach: nobody gets a zero or a
  // "not graded", the batch does not start.
  output.clear();
  const int status = grade(private_dir / "out", output);
  INFO(output);
  if (::geteuid() != 0) {
    MESSAGE("the grader is not root: its sandbox runs as its own user, who can enter the folder");
    CHECK(status == 0);
    return;
  }
  CHECK(status != 0);
  CHECK(output.find(fmt::format("cannot reach the scratch folder, where each submission is built and run, {}",
                                (private_dir / "out" / ".scratch").string())) != std::string::npos);
  CHECK(output.find(fmt::format("{} is mode 0700, owner root", private_dir.string())) != std::string::npos);
  CHECK(output.find(fmt::format("chmod o+x '{}'", private_dir.string())) != std::string::npos);
  CHECK_FALSE(fs::exists(private_dir / "out" / "students" / "alice" / "result.json"));
  fs::permissions(private_dir, fs::perms::owner_all | fs::perms::others_exec);  // the fix it names
  output.clear();
  REQUIRE(grade(private_dir / "out", output) == 0);
  CHECK(all_correct(json::parse(read_file(private_dir / "out" / "students" / "alice" / "result.json"))));
}

namespace {

std::string lowered(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::vector<std::string> strings_of(const toml::node* node) {
  std::vector<std::string> out;
  if (!node) return out;
  if (auto s = node->value<std::string>()) out.push_back(*s);
  if (auto a = node->as_array())
    for (const auto& e : *a)
      if (auto s = e.value<std::string>()) out.push_back(*s);
  return out;
}

bool contains_all(const std::string& text, const std::vector<std::string>& parts) {
  for (const auto& p : parts)
    if (lowered(text).find(lowered(p)) == std::string::npos) return false;
  return true;
}

bool contains_any(const std::string& text, const std::vector<std::string>& parts) {
  if (parts.empty()) return true;
  for (const auto& p : parts)
    if (lowered(text).find(lowered(p)) != std::string::npos) return true;
  return false;
}

const json* task_of(const json& result, const std::string& task) {
  for (const auto& l : result["labs"])
    for (const auto& t : l["tasks"])
      if (t["task"] == task) return &t;
  return nullptr;
}

// Why `result` does not meet the student's expectation (expected.toml), or "" when it does.
std::string mismatch(const json& result, const toml::table& expected, const std::string& backend) {
  const std::string error = result.value("error", "");
  auto errors = strings_of(expected.get("error"));
  const auto errors_any = strings_of(expected.get("error_any"));
  // error_cuda / error_opencl: refused on that backend only (e.g. no file of that backend's is there).
  const auto errors_here = strings_of(expected.get("error_" + backend));
  errors.insert(errors.end(), errors_here.begin(), errors_here.end());
  if (!errors.empty() || !errors_any.empty()) {
    if (error.empty()) return "expected the submission to be refused, but it was graded";
    if (!contains_all(error, errors) || !contains_any(error, errors_any)) return "refused, but with: " + error;
    return "";
  }
  if (!error.empty()) return "refused: " + error;
  std::string why;
  for (const char* task : {"naive", "optimized"}) {
    const json* t = task_of(result, task);
    if (!t) {
      why += fmt::format("{}: no result; ", task);
      continue;
    }
    const std::string status = (*t)["status"],
                      text = (*t)["message"].get<std::string>() + "\n" + (*t)["details"].get<std::string>();
    bool matched = false;
    if (const auto* outcomes = expected.get_as<toml::array>(task))
      for (const auto& o : *outcomes) {
        const auto* oc = o.as_table();
        if (!oc) continue;
        const auto only = oc->get("backend") ? oc->get("backend")->value<std::string>() : std::nullopt;
        if (only && *only != backend) continue;
        const std::string want = oc->get("status")->value<std::string>().value_or("");
        // On a CPU, two jobs at once disturb each other's timings: correct but too slow is a pass there.
        const bool cpu_timing = backend == "opencl" && want == "passed" && status == "too_slow" &&
                                (*t)["cases_passed"] == (*t)["cases_total"];
        if (want != status && !cpu_timing) continue;
        const auto none = strings_of(oc->get("message_none"));
        if (contains_all(text, strings_of(oc->get("message"))) &&
            contains_any(text, strings_of(oc->get("message_any"))) && (none.empty() || !contains_any(text, none)))
          matched = true;
      }
    if (!matched) why += fmt::format("{}: got {} \"{}\"; ", task, status, text.substr(0, 300));
  }
  return why;
}

// The first control character (but newline and tab) in `text`, raw, as UTF-8 (C1) or escaped in
// JSON, described; "" when there is none.
std::string control_character_in(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const bool c1 = c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(text[i + 1]) <= 0x9F;
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F || c1)
      return fmt::format("byte {:#04x} at {}: ...{}...", c, i, text.substr(i < 40 ? 0 : i - 40, 80));
  }
  for (const char* escaped : {"\\u001b", "\\u009b", "\\u0007", "\\r"})
    if (const auto at = text.find(escaped); at != std::string::npos) return fmt::format("{} at {}", escaped, at);
  return "";
}

// What a student and the instructor read of `student` holds no control character.
std::string control_characters_in_outputs(const Batch& b, const std::string& student) {
  std::string found;
  for (const char* file : {"feedback.txt", "feedback.html", "results.json", "result.json"})
    if (const auto why = control_character_in(read_file(b.out / "students" / student / file)); !why.empty())
      found += fmt::format("{}: {}; ", file, why);
  if (const auto why = control_character_in(read_file(b.out / "grades.csv")); !why.empty())
    found += "grades.csv: " + why;
  return found;
}

// Listens on 127.0.0.1:port for the whole batch and keeps whatever arrives.
class Listener {
 public:
  explicit Listener(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    const int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    listening_ = ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && ::listen(fd_, 16) == 0;
    ::fcntl(fd_, F_SETFL, O_NONBLOCK);
    thread_ = std::thread([this] {
      while (!stop_) {
        const int c = ::accept(fd_, nullptr, nullptr);
        if (c < 0) {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
          continue;
        }
        char buffer[256];
        const auto n = ::recv(c, buffer, sizeof buffer, 0);
        std::lock_guard lock(mutex_);
        received_ += "[connection]" + std::string(buffer, n > 0 ? static_cast<std::size_t>(n) : 0);
        ::close(c);
      }
    });
  }
  ~Listener() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  bool listening() const { return listening_; }
  std::string received() {
    std::lock_guard lock(mutex_);
    return received_;
  }

 private:
  int fd_ = -1;
  bool listening_ = false;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::string received_;
  std::thread thread_;
};

// Processes whose command line mentions `text` (the batch's folder): none may outlive the batch.
std::vector<std::string> processes_mentioning(const std::string& text) {
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos || std::stoi(pid) == ::getpid()) continue;
    std::string cmdline = read_file(e.path() / "cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(text) != std::string::npos) found.push_back(pid + ": " + cmdline.substr(0, 200));
  }
  return found;
}

std::vector<fs::path> files_named(const fs::path& root, const std::string& name) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (it->path().filename() == ".git")
      it.disable_recursion_pending();
    else if (it->path().filename() == name)
      found.push_back(it->path());
  }
  return found;
}

}  // namespace

TEST_CASE(
    "a batch with hostile and broken submissions gives each a clear error or zero and grades the good ones correctly") {
  const fs::path corpus = repo_path("tests/fixtures/submissions");
  const auto expected = toml::parse_file((corpus / "expected.toml").string());
  Batch b("grade-hostile");
  for (const auto& e : fs::directory_iterator(corpus))
    if (e.is_directory()) fs::copy(e.path(), b.submissions / e.path().filename(), fs::copy_options::recursive);
  std::string output;
  REQUIRE(run_command(fmt::format("/usr/bin/python3 '{}' '{}' '{}'", (corpus / "make_archives.py").string(),
                                  GPULAB_REPO, b.submissions.string()),
                      output) == 0);
  for (const char* good : {"good-1", "good-2"}) b.add_folder(good, "solutions", graded_lab().id);

  std::map<std::string, std::string> before;  // files a submission must not change
  for (const auto& [name, node] : expected)
    if (const auto* t = node.as_table())
      for (const auto& f : strings_of(t->at_path("checks.unchanged").node())) before[f] = read_file(repo_path(f));
  Listener listener(47123);
  REQUIRE(listener.listening());

  // CPU timings of two jobs at once are not what this test is about: on PoCL a correct task may be
  // too slow; on a GPU each timing run has the GPU to itself, and good students must pass.
  output.clear();
  const int status = b.grade(lab_args(g_backend) +
                                 " --jobs 2 --timeout 10 --time-limit 120 --memory 4 --processes 128 "
                                 "--output-limit 16",
                             output);
  INFO(output);
  REQUIRE(status == 0);

  std::string failures;
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(b.submissions)) {
    std::string student = entry.path().filename().string();
    for (const char* ext : {".tar.gz", ".zip"})
      if (student.size() > std::strlen(ext) && student.ends_with(ext))
        student.resize(student.size() - std::strlen(ext));
    const fs::path record = b.out / "students" / student / "result.json";
    if (!fs::exists(record)) {
      failures += student + ": no result\n";
      continue;
    }
    const json result = json::parse(read_file(record));
    ++checked;
    if (const auto* t = expected.get_as<toml::table>(student)) {
      if (const auto why = mismatch(result, *t, g_backend); !why.empty()) failures += student + ": " + why + "\n";
      if (t->at_path("checks.no_control_characters").value<bool>().value_or(false))
        if (const auto found = control_characters_in_outputs(b, student); !found.empty())
          failures += student + ": a control character reached its outputs: " + found + "\n";
      if (auto limit = t->at_path("checks.max_output_kept").value<int64_t>())
        for (const auto& l : result["labs"])
          if (static_cast<int64_t>(l.value("output", "").size()) > *limit)
            failures += student + ": kept too much output\n";
    } else if (g_backend == "cuda" ? result["score"] != result["max_score"] : !all_correct(result)) {
      failures += student + ": a good student was not graded correctly: " + messages(result) + "\n";
    }
  }
  CHECK_MESSAGE(failures.empty(), failures);
  CHECK(checked == static_cast<int>(std::distance(fs::directory_iterator(b.submissions), fs::directory_iterator())));

  // Nothing escaped the sandbox: no network, no writes outside the scratch folder, no processes left.
  CHECK_MESSAGE(listener.received().empty(), listener.received());
  for (const auto& [path, text] : before) CHECK_MESSAGE(read_file(repo_path(path)) == text, (path + " was changed"));
  for (const char* name : {"PWNED", "escaped.txt"}) {
    for (const auto& root : {fs::path(GPULAB_REPO), b.submissions.parent_path(), fs::temp_directory_path()})
      CHECK_MESSAGE(files_named(root, name).empty(), fmt::format("{} found under {}", name, root.string()));
  }
  CHECK_MESSAGE(processes_mentioning(b.out.string()).empty(),
                fmt::format("{}", fmt::join(processes_mentioning(b.out.string()), "\n")));
  const json batch = json::parse(read_file(b.out / "batch.json"));
  MESSAGE(fmt::format("{} submissions graded in {:.0f} s ({:.0f} per hour), isolation: {}",
                      batch["submissions"].get<int>(), batch["wall_s"].get<double>(),
                      batch["throughput_per_hour"].get<double>(), batch["isolation"].get<std::string>()));
}

// The sandbox itself, without a submission: what the scans of a submission let through must still
// find no network, no writable file outside its folder, and a limit on processes, memory and output.
namespace {

// A sandbox as a batch sets one up, with a folder of its own, the repository needed, OUT hidden.
struct SandboxBench {
  const cli::Isolation isolation = cli::detect_isolation();
  const fs::path root = fs::path(GPULAB_SCRATCH) / "sandbox", out = root / "out", box = out / "box";
  const fs::path log = root / "log.txt";
  cli::SandboxSpec spec;
  cli::Limits limits;

  SandboxBench() {
    fs::remove_all(root);
    fs::create_directories(box);
    spec.isolation = &isolation;
    spec.scratch = box;
    spec.needed = {GPULAB_REPO};
    spec.hidden = {out};
    if (isolation.own_user) spec.user = 62999;
    limits.wall_s = 20;
    limits.memory_bytes = 1ull << 30;
    limits.processes = 64;
    limits.output_bytes = 1 << 20;
  }
  ~SandboxBench() { fs::remove_all(root); }
  cli::ChildExit sh(const std::string& script) const {
    return cli::run_isolated({"/bin/sh", "-c", script}, log, limits, spec);
  }
};

// Writes: only its own folder.
void check_writes(const SandboxBench& s) {
  const fs::path outside = fs::path(GPULAB_REPO) / "labs" / "PWNED-sandbox-test";
  const auto writes =
      s.sh(fmt::format("echo x > '{}'; echo x > '{}/PWNED'; echo x > /tmp/PWNED-sandbox-test; echo ok > '{}/mine'",
                       outside.string(), s.out.string(), s.box.string()));
  CHECK(writes.exited_ok());
  CHECK(fs::exists(s.box / "mine"));
  if (s.isolation.bubblewrap || s.isolation.own_user) {
    CHECK_FALSE(fs::exists(outside));
    CHECK_FALSE(fs::exists(s.out / "PWNED"));
  } else {
    CHECK(s.isolation.describe(s.limits).find("files NOT protected") != std::string::npos);
  }
  fs::remove(outside);
  fs::remove("/tmp/PWNED-sandbox-test");
}

// Network: nothing arrives at a listener on this machine.
void check_network(const SandboxBench& s) {
  if (s.isolation.network_off && fs::exists("/bin/bash")) {
    Listener listener(47124);
    REQUIRE(listener.listening());
    s.sh("/bin/bash -c 'exec 3<>/dev/tcp/127.0.0.1/47124 && echo gpulab-network-escape >&3'");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    CHECK(listener.received().empty());
  } else {
    CHECK(s.isolation.describe(s.limits).find("network NOT isolated") != std::string::npos);
  }
}

// A fork bomb is stopped, and nothing of it is left.
void check_fork_bomb(SandboxBench& s) {
  s.limits.wall_s = 5;
  // A name no other process on the machine mentions (a CI runner's own scripts may say "b.sh").
  const std::string bomb_script = fmt::format("gpulab-fork-bomb-{}.sh", ::getpid());
  const auto bomb = s.sh(fmt::format("echo 'f() {{ f | f & }}; f; sleep 100' > {0}; /bin/sh {0}", bomb_script));
  CHECK(bomb.killed_for == cli::KillReason::timeout);
  CHECK(bomb.peak_processes > 1);
  CHECK_MESSAGE(processes_mentioning(bomb_script).empty(),
                fmt::format("{}", fmt::join(processes_mentioning(bomb_script), "\n")));
}

// Memory, disk and output.
void check_memory_disk_and_output(SandboxBench& s) {
  s.limits.wall_s = 60;
  if (fs::exists("/usr/bin/python3")) {
    const auto memory = s.sh("/usr/bin/python3 -c 'import time; x = bytearray(3 << 30); time.sleep(30)'");
    CHECK(memory.killed_for == cli::KillReason::memory);
    // Stopped by the progress watchdog instead, it still says how much memory it held (the
    // grader's message then points at the allocation, not at a hung kernel).
    s.limits.idle_s = 3;
    const auto held = s.sh("/usr/bin/python3 -c 'import time; x = bytearray(600 << 20); time.sleep(30)'");
    CHECK(held.killed_for == cli::KillReason::idle);
    CHECK(held.peak_memory_bytes > (500ull << 20));
    CHECK(held.peak_memory_bytes < s.limits.memory_bytes);
    s.limits.idle_s = 0;
  }
  s.limits.disk_bytes = 8 << 20;  // many files, each under the output limit
  const auto disk =
      s.sh("i=0; while [ $i -lt 100 ]; do head -c 900000 /dev/zero > f$i; i=$((i + 1)); sleep 0.01; done; sleep 30");
  CHECK(disk.killed_for == cli::KillReason::disk);
  const auto output = s.sh("yes 'the same line again'");
  CHECK(output.signal == SIGXFSZ);
  CHECK(fs::file_size(s.log) <= s.limits.output_bytes);
}

}  // namespace

TEST_CASE("the sandbox keeps a command off the network, out of every folder but its own, and within its limits") {
  SandboxBench sandbox;
  INFO(sandbox.isolation.describe(sandbox.limits));
  check_writes(sandbox);
  check_network(sandbox);
  check_fork_bomb(sandbox);
  check_memory_disk_and_output(sandbox);
}

TEST_CASE("a child gets the environment the grader started with, even after a library cut a variable short in place") {
  // What an OpenCL ICD loader does to OCL_ICD_FILENAMES: it splits the value on ':' inside environ.
  char* path = std::getenv("PATH");
  REQUIRE(path != nullptr);
  const std::string started_with = path;
  char* colon = std::strchr(path, ':');
  REQUIRE_MESSAGE(colon != nullptr, "PATH has a single folder; the test needs two");
  SandboxBench sandbox;
  const fs::path seen = sandbox.box / "path.txt";
  for (const bool isolated : {true, false}) {
    CAPTURE(isolated);
    sandbox.spec.isolation = isolated ? &sandbox.isolation : nullptr;
    *colon = '\0';
    const auto run = sandbox.sh(fmt::format("printf %s \"$PATH\" > '{}'", seen.string()));
    *colon = ':';
    CHECK(run.exited_ok());
    CHECK(read_file(seen) == started_with);
  }
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

TEST_CASE(
    "a submission's own make check history shows in its feedback and, on the summary page, when all first passed") {
  Batch b("grade-history");
  b.add_folder("dana", "solutions", graded_lab().id);
  const auto& lab = graded_lab();
  // Two checks of the lab (the first with only the naive task passing), one of a lab not graded here,
  // and a torn line.
  json first{{"when", "2026-11-20T09:00:00Z"},
             {"backend", "opencl"},
             {"source", "/home/dana/course/labs"},
             {"labs", json::array()}},
      second = first, other = first;
  json tasks = json::array(), passed = json::array();
  for (const auto& t : lab.tasks) {
    tasks.push_back({{"task", t.name}, {"status", &t == &lab.tasks.front() ? "passed" : "wrong_result"}});
    passed.push_back({{"task", t.name}, {"status", "passed"}});
  }
  first["labs"].push_back({{"id", lab.id}, {"name", lab.name}, {"files", "aaaa"}, {"tasks", tasks}});
  second["when"] = "2026-11-21T10:30:00Z";
  second["labs"] = json::array({{{"id", lab.id}, {"name", lab.name}, {"files", "bbbb"}, {"tasks", passed}}});
  other["labs"] = json::array({{{"id", "99-elsewhere"}, {"tasks", passed}}});
  write_file(b.submissions / "dana" / "build" / "history.jsonl",
             first.dump() + "\n" + other.dump() + "\n" + second.dump() + "\n{\"when\": \"torn");

  std::string output;
  REQUIRE(b.grade(lab_args(), output) == 0);
  INFO(output);
  const json dana = b.result("dana");
  REQUIRE(dana["history"].size() == 2);                // the other lab's line and the torn one are left out
  CHECK_FALSE(dana["history"][0].contains("source"));  // a path on the student's machine
  const std::string feedback = read_file(b.out / "students" / "dana" / "feedback.txt");
  CHECK(feedback.find("Your checks before you submitted") != std::string::npos);
  CHECK(feedback.find("2026-11-20 09:00") != std::string::npos);
  CHECK(feedback.find("2026-11-21 10:30") != std::string::npos);
  if (!fs::exists(b.out / "index.html")) return;  // without matplotlib the batch said so
  const std::string page = read_file(b.out / "index.html");
  CHECK(page.find("<h2>History</h2>") != std::string::npos);
  CHECK(page.find("all passed 2026-11-21 10:30:00 UTC, check 2") != std::string::npos);
}

// Unsafe code never passes (barrier_verdict.hpp): the divergent-barrier fixture's naive kernel puts
// its barrier in the else branch of a test on the thread's index. PoCL would run it without a sign
// (or hang until the time limit); the static check's proof fails the task instead, in `make check`
// and in batch grading, and the student's history records the failure.
TEST_CASE(
    "a barrier the static check proves divergent fails its task as unsafe code in a check on PoCL and in its history") {
  const fs::path labs = repo_path("tests/fixtures/submissions/divergent-barrier/labs");
  const auto run = run_check(labs, "--backend opencl --lab " + graded_lab().name);
  INFO(run.output);
  CHECK(run.exit_code == 1);
  REQUIRE(run.report.is_object());
  const json& naive = run.report["labs"][0]["tasks"][0];
  CHECK(naive["task"] == "naive");
  CHECK(naive["status"] == "unsafe_code");
  CHECK(naive["points"] == 0.0);
  CHECK(naive["finding"] == "divergent_barrier");
  CHECK(naive["message"].get<std::string>().rfind(graded_lab().id + "/transpose.cl:21: barrier(CLK_LOCAL_MEM_FENCE)",
                                                  0) == 0);
  CHECK(run.output.find("✘ unsafe code") != std::string::npos);
  CHECK(run.output.find("warning:") == std::string::npos);  // the verdict, not a warning beside it
  CHECK(run.output.find("FAILED") != std::string::npos);
  // This run's line of the history (other tests check at the same time: the one with its seed).
  const std::uint64_t seed = run.report.at("seed");
  std::ifstream history(fs::path(GPULAB_CLI).parent_path() / "history.jsonl");
  std::string recorded;
  for (std::string line; std::getline(history, line);) {
    const auto entry = json::parse(line, nullptr, false);
    if (!entry.is_discarded() && entry.value("seed", std::uint64_t{0}) == seed)
      recorded = entry["labs"][0]["tasks"][0].value("status", "");
  }
  CHECK(recorded == "unsafe_code");
}

TEST_CASE(
    "a batch on OpenCL fails a proven divergent barrier as unsafe code and says once that it has no sanitizer gate") {
  Batch b("grade-unsafe");
  fs::create_directories(b.submissions / "erin");
  fs::copy(repo_path("tests/fixtures/submissions/divergent-barrier"), b.submissions / "erin",
           fs::copy_options::recursive);
  std::string output;
  REQUIRE(b.grade(lab_args() + " --timeout 20", output) == 0);
  INFO(output);
  CHECK(output.find("sanitizer gate: not on opencl") != std::string::npos);
  const json erin = b.result("erin");
  CHECK(statuses(erin)["naive"] == "unsafe_code");
  CHECK(erin["score"] == 0.0);
  const std::string csv = read_file(b.out / "grades.csv");
  CHECK(csv.find(graded_lab().id + "/naive: divergent_barrier") != std::string::npos);
  const json gradescope = json::parse(read_file(b.out / "students" / "erin" / "results.json"));
  REQUIRE(!gradescope["tests"].empty());
  CHECK(gradescope["tests"][0]["status"] == "failed");
  CHECK(gradescope["tests"][0]["score"] == 0.0);
  CHECK(gradescope["tests"][0]["output"].get<std::string>().find("unsafe code") != std::string::npos);
  const std::string feedback = read_file(b.out / "students" / "erin" / "feedback.txt");
  CHECK(feedback.find("unsafe code") != std::string::npos);
  CHECK(feedback.find("transpose.cl:21") != std::string::npos);
  // --no-sanitize says so; on OpenCL it changes no result, so an unchanged student is not graded again.
  output.clear();
  REQUIRE(b.grade(lab_args() + " --timeout 20 --no-sanitize", output) == 0);
  CHECK(output.find("sanitizer gate: off (--no-sanitize)") != std::string::npos);
  CHECK(output.find("1 unchanged and skipped") != std::string::npos);
}
