// The course server end to end (gpulab roster, serve and submit; grader/server/): a real server on a
// loopback port, with SQLite in a scratch folder, grading on OpenCL (PoCL in CI). With --postgresql,
// main() starts a PostgreSQL server of its own (Debian's, as its postgres user) and runs the cases
// marked for it against that database; it exits 77 (skipped), saying why, where it cannot.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"
#include "pages.hpp"
#include "server_process.hpp"

using nlohmann::json;
using namespace gpulab::testing;

namespace {

// A fresh server folder with a roster of two students; their tokens by id.
std::string g_database;  // with --postgresql: the database's URL

std::map<std::string, std::string> course_with_roster(const fs::path& root) {
  fs::remove_all(root);
  fs::create_directories(root);
  write_file(root / "roster.csv",
             "id,name,email\nalice,Alice Archer,alice@example.org\nbob,Bob Baker,bob@example.org\n");
  std::string output;
  REQUIRE(run_command(std::string("'") + GPULAB_CLI + "' roster --dir '" + (root / "server").string() + "' --import '" +
                          (root / "roster.csv").string() + "'" +
                          (g_database.empty() ? "" : " --database '" + g_database + "'"),
                      output) == 0);
  std::map<std::string, std::string> tokens;
  std::istringstream lines(read_file(root / "server" / "tokens.csv"));
  std::string line;
  std::getline(lines, line);
  CHECK(line == "id,token");
  while (std::getline(lines, line)) tokens[line.substr(0, line.find(','))] = line.substr(line.find(',') + 1);
  REQUIRE(tokens.size() == 2);
  return tokens;
}

int submit(const ServerProcess& server, const std::string& token, const fs::path& source, std::string& output,
           const std::string& more = "", const std::string& lab = "hello") {
  return run_command(std::string("'") + GPULAB_CLI + "' submit --server " + server.url() + " --token " + token +
                         " --lab " + lab + " --poll 0.2 --source '" + source.string() + "' " + more,
                     output);
}

json get(const ServerProcess& server, const std::string& token, const std::string& path, int& status) {
  httplib::Client client(server.url());
  client.set_bearer_token_auth(token);
  const auto r = client.Get(path);
  REQUIRE(r);
  status = r->status;
  return json::parse(r->body);
}

// Sends solutions/00-hello without waiting for it; returns the submission's id.
long long send_hello(const ServerProcess& server, const std::string& token) {
  httplib::Client client(server.url());
  client.set_bearer_token_auth(token);
  httplib::MultipartFormDataItems items{{"lab", "hello", "", ""}};
  for (const std::string name : {"hello.cu", "hello.cl", "hello_opencl.cpp"})
    items.push_back({"file", read_file(repo_path("solutions/00-hello") / name), name, ""});
  const auto r = client.Post("/api/submissions", items);
  REQUIRE(r);
  INFO(r->body);
  REQUIRE(r->status == 202);
  return json::parse(r->body).at("id").get<long long>();
}

// Waits until the submission is in `state` (up to 5 minutes); returns its description.
json wait_for(const ServerProcess& server, const std::string& token, long long id, const std::string& state) {
  json s;
  for (int i = 0; i < 1500; ++i) {
    int status = 0;
    s = get(server, token, "/api/submissions/" + std::to_string(id), status);
    if (s.value("state", "") == state) return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  FAIL("submission ", id, " never reached ", state, ": ", s.dump());
  return s;
}

// Kills (SIGKILL) every process whose command line holds `text`; returns how many.
int kill_processes_with(const std::string& text) {
  int killed = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos || std::stoi(pid) == ::getpid()) continue;
    std::string cmdline = read_file(entry.path() / "cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(text) != std::string::npos && ::kill(std::stoi(pid), SIGKILL) == 0) ++killed;
  }
  return killed;
}

}  // namespace

TEST_CASE(
    "a course server grades a student's gpulab submit with the official report, shows each student only their "
    "own submissions, and keeps every record with hashed tokens") {
  const fs::path root = fs::path(GPULAB_SCRATCH) / "server-course";
  auto tokens = course_with_roster(root);
  ServerProcess server(root / "server");

  std::string alice_output, bob_output;
  CHECK(submit(server, tokens["alice"], repo_path("solutions"), alice_output) == 0);
  INFO(alice_output);
  CHECK(alice_output.find("sent to " + server.url() + " as submission 1") != std::string::npos);
  CHECK(alice_output.find("gpulab check: alice") != std::string::npos);
  CHECK(alice_output.find("PASSED: 1 of 1 tasks passed, 2 of 2 points") != std::string::npos);
  // The skeleton: graded, not implemented, the exit status of a failed check.
  CHECK(submit(server, tokens["bob"], committed_labs(), bob_output) == 1);
  INFO(bob_output);
  CHECK(bob_output.find("not implemented") != std::string::npos);
  // A second lab, both ways.
  std::string transpose_output;
  CHECK(submit(server, tokens["alice"], repo_path("solutions"), transpose_output, "", "transpose") == 0);
  CHECK(transpose_output.find("PASSED: 2 of 2 tasks passed") != std::string::npos);
  transpose_output.clear();
  CHECK(submit(server, tokens["bob"], committed_labs(), transpose_output, "", "transpose") == 1);
  CHECK(transpose_output.find("02-transpose") != std::string::npos);

  int status = 0;
  const json own = get(server, tokens["alice"], "/api/submissions/1", status);
  CHECK(status == 200);
  CHECK(own.at("state") == "graded");
  CHECK(own.at("result").at("score") == 2.0);
  get(server, tokens["bob"], "/api/submissions/1", status);
  CHECK(status == 404);  // alice's, to bob: as if it did not exist
  const json bobs = get(server, tokens["bob"], "/api/submissions", status);
  CHECK(bobs.at("submissions").size() == 2);
  CHECK(bobs.at("submissions")[0].at("id") == 2);
  get(server, "not-a-token", "/api/submissions", status);
  CHECK(status == 401);

  // A file the lab does not list, or a lab the course does not have, is refused with the reason.
  httplib::Client client(server.url());
  client.set_bearer_token_auth(tokens["bob"]);
  auto r = client.Post("/api/submissions",
                       httplib::MultipartFormDataItems{{"lab", "hello", "", ""}, {"file", "echo", "run.sh", ""}});
  REQUIRE(r);
  CHECK(r->status == 400);
  CHECK(r->body.find("run.sh is not a student file of 00-hello") != std::string::npos);
  std::string listed;
  CHECK(submit(server, tokens["bob"], committed_labs(), listed, "--status") == 0);
  CHECK(listed.find("00-hello") != std::string::npos);

  SQLite::Database db((root / "server" / "gpulab.sqlite").string());
  CHECK(db.execAndGet("SELECT COUNT(*) FROM submissions WHERE state = 'graded'").getInt() == 4);
  CHECK(db.execAndGet("SELECT COUNT(*) FROM gradings").getInt() == 4);
  CHECK(db.execAndGet("SELECT COUNT(*) FROM students WHERE token_sha256 = '" + tokens["alice"] + "'").getInt() == 0);
  CHECK(db.execAndGet("SELECT student FROM submissions WHERE id = 2").getString() == "bob");
  // Importing the roster again keeps every token and makes none.
  std::string output;
  CHECK(run_command(std::string("'") + GPULAB_CLI + "' roster --dir '" + (root / "server").string() + "' --import '" +
                        (root / "roster.csv").string() + "'",
                    output) == 0);
  CHECK(output.find("2 students, 0 new") != std::string::npos);
  CHECK(get(server, tokens["alice"], "/api/submissions", status).at("submissions").size() == 2);
  // A lost token: a new one works, the old one no longer does.
  output.clear();
  CHECK(
      run_command(std::string("'") + GPULAB_CLI + "' roster --dir '" + (root / "server").string() + "' --reissue alice",
                  output) == 0);
  INFO(output);
  const std::string tokens_csv = read_file(root / "server" / "tokens.csv");
  const std::string fresh = tokens_csv.substr(tokens_csv.rfind("alice,") + 6, 64);
  get(server, tokens["alice"], "/api/submissions", status);
  CHECK(status == 401);
  CHECK(get(server, fresh, "/api/submissions", status).at("submissions").size() == 2);
  CHECK(status == 200);

  // Three of one lab waiting or running at once, at most (a hello grading takes seconds here).
  for (int i = 0; i < 3; ++i) send_hello(server, fresh);
  httplib::Client again(server.url());
  again.set_bearer_token_auth(fresh);
  const auto fourth =
      again.Post("/api/submissions",
                 httplib::MultipartFormDataItems{{"lab", "hello", "", ""}, {"file", "// nothing", "hello.cu", ""}});
  REQUIRE(fourth);
  CHECK(fourth->status == 429);
  CHECK(fourth->body.find("waiting or being graded") != std::string::npos);
}

TEST_CASE("a server killed mid-queue, and a grading killed mid-run, lose no submission: each is graded once") {
  const fs::path root = fs::path(GPULAB_SCRATCH) / "server-restart";
  auto tokens = course_with_roster(root);
  long long first = 0, second = 0, third = 0;
  {
    ServerProcess server(root / "server");
    first = send_hello(server, tokens["alice"]);
    second = send_hello(server, tokens["alice"]);
    third = send_hello(server, tokens["bob"]);
    wait_for(server, tokens["alice"], first, "running");
    server.kill(SIGKILL);  // the server and its grading, mid-run, with two more queued
  }
  ServerProcess server(root / "server");
  const json a = wait_for(server, tokens["alice"], first, "graded");
  CHECK(a.at("attempts") == 2);
  CHECK(a.at("gradings") == 1);
  wait_for(server, tokens["alice"], second, "graded");
  // A grading killed under a running server (a worker or GPU lost) is queued again.
  const long long fourth = send_hello(server, tokens["bob"]);
  wait_for(server, tokens["bob"], fourth, "running");
  CHECK(kill_processes_with("jobs/" + std::to_string(fourth) + "/attempt-1/submissions") > 0);
  const json d = wait_for(server, tokens["bob"], fourth, "graded");
  CHECK(d.at("attempts") == 2);
  CHECK(d.at("result").at("passed") == true);
  CHECK(wait_for(server, tokens["bob"], third, "graded").at("gradings") == 1);
  SQLite::Database db((root / "server" / "gpulab.sqlite").string());
  CHECK(db.execAndGet("SELECT COUNT(*) FROM gradings").getInt() == 4);
  CHECK(db.execAndGet("SELECT COUNT(DISTINCT submission) FROM gradings").getInt() == 4);
}

TEST_CASE(
    "the server's pages show a student only their own submissions and reports, and the course staff the queue, "
    "every report, regrades that keep earlier gradings, and the gradebook") {
  const fs::path root = fs::path(GPULAB_SCRATCH) / "server-pages";
  auto tokens = course_with_roster(root);
  const std::string staff = read_file(root / "server" / "staff-token").substr(0, 64);
  ServerProcess server(root / "server");
  const long long alices = send_hello(server, tokens["alice"]);
  std::string output;
  CHECK(submit(server, tokens["bob"], committed_labs(), output) == 1);
  wait_for(server, tokens["alice"], alices, "graded");

  httplib::Client browser(server.url());
  auto page = [&](const std::string& token, const std::string& path) {
    const httplib::Headers cookie{{"Cookie", "theme=dark; gpulab_token=" + token}};
    auto r = browser.Get(path, cookie);
    REQUIRE(r);
    return std::make_pair(r->status, r->body);
  };
  CHECK(page("", "/").second.find("<form method=\"post\" action=\"/login\">") != std::string::npos);
  const auto login = browser.Post("/login", "token=" + tokens["bob"], "application/x-www-form-urlencoded");
  REQUIRE(login);
  CHECK(login->status == 303);
  CHECK(login->get_header_value("Set-Cookie").find("gpulab_token=" + tokens["bob"]) != std::string::npos);
  const auto refused = browser.Post("/login", "token=0123", "application/x-www-form-urlencoded");
  REQUIRE(refused);
  CHECK(refused->status == 401);

  const auto [bob_status, bob_home] = page(tokens["bob"], "/");
  CHECK(bob_status == 200);
  CHECK(bob_home.find("Signed in as <b>bob</b>") != std::string::npos);
  CHECK(bob_home.find("/submissions/2") != std::string::npos);
  CHECK(bob_home.find("/submissions/1\"") == std::string::npos);
  CHECK(page(tokens["bob"], "/submissions/1").first == 404);
  const auto [report_status, report] = page(tokens["bob"], "/submissions/2");
  CHECK(report_status == 200);
  CHECK(report.find("not implemented") != std::string::npos);
  CHECK(report.find("Regrade") == std::string::npos);
  CHECK(page(tokens["bob"], "/gradebook.csv").first == 403);
  CHECK(bob_home.find("<h2>Your scores over time</h2>") != std::string::npos);
  CHECK(bob_home.find("00-hello · 1 graded, last 0%") != std::string::npos);
  // The leaderboard is opt-in: joining and leaving change the student's own page.
  CHECK(bob_home.find("Join the leaderboard") != std::string::npos);
  const httplib::Headers bobs{{"Cookie", "gpulab_token=" + tokens["bob"]}};
  REQUIRE(browser.Post("/leaderboard", bobs, "join=1", "application/x-www-form-urlencoded"));
  CHECK(page(tokens["bob"], "/").second.find("Leave the leaderboard") != std::string::npos);
  REQUIRE(browser.Post("/leaderboard", bobs, "join=0", "application/x-www-form-urlencoded"));
  CHECK(page(tokens["bob"], "/").second.find("Join the leaderboard") != std::string::npos);

  const auto [staff_status, queue] = page(staff, "/");
  CHECK(staff_status == 200);
  CHECK(queue.find("<h2>Queue</h2>") != std::string::npos);
  CHECK(queue.find("<td>alice</td>") != std::string::npos);
  CHECK(queue.find("<td>bob</td>") != std::string::npos);
  CHECK(page(staff, "/submissions/1").second.find("PASSED") != std::string::npos);
  const std::string csv = page(staff, "/gradebook.csv").second;
  CHECK(csv.find("student,lab,score,max_score,status,error,passed,submission,graded_at\n") == 0);
  CHECK(csv.find("\nalice,00-hello,2,2,graded,,yes,1,") != std::string::npos);
  CHECK(csv.find("\nbob,00-hello,0,2,graded,,no,2,") != std::string::npos);
  CHECK(page(staff, "/gradebook.csv?lab=01-matmul").second.find("alice") == std::string::npos);
  CHECK(page(staff, "/gradebook.csv?lab=00-hello").second == csv);
  // Gradescope's results.json of a grading: to its student and the staff, to nobody else.
  const auto [own_status, gradescope] = page(tokens["bob"], "/submissions/2/results.json");
  CHECK(own_status == 200);
  CHECK(json::parse(gradescope).contains("tests"));
  CHECK(page(tokens["alice"], "/submissions/2/results.json").first == 404);
  CHECK(page(staff, "/submissions/2/results.json").first == 200);

  const httplib::Headers bob_cookie{{"Cookie", "gpulab_token=" + tokens["bob"]}};
  auto forbidden = browser.Post("/submissions/1/regrade", bob_cookie, "", "application/x-www-form-urlencoded");
  REQUIRE(forbidden);
  CHECK(forbidden->status == 403);
  const httplib::Headers staff_cookie{{"Cookie", "gpulab_token=" + staff}};
  auto regrade = browser.Post("/submissions/1/regrade", staff_cookie, "", "application/x-www-form-urlencoded");
  REQUIRE(regrade);
  CHECK(regrade->status == 303);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const json again = wait_for(server, tokens["alice"], alices, "graded");
  CHECK(again.at("gradings") == 2);
}

TEST_CASE(
    "the leaderboard ranks each task's best passed ratio per student under pseudonyms, and leaves out failures, "
    "findings and untimed tasks") {
  auto result = [](const std::string& task, const std::string& status, double ratio, bool finding = false) {
    json t{{"task", task}, {"status", status}, {"ratio", ratio}, {"rate", ratio * 100}, {"metric_unit", "%"}};
    if (finding) t["finding"] = "faster_than_device";
    return json{{"labs", {{{"tasks", {t, {{"task", "naive"}, {"status", "passed"}}}}}}}}.dump();
  };
  const std::vector<std::tuple<std::string, std::string, std::string>> gradings{
      {"alice", "02-transpose", result("optimized", "passed", 0.80)},
      {"alice", "02-transpose", result("optimized", "passed", 0.90)},  // her best counts
      {"bob", "02-transpose", result("optimized", "passed", 0.85)},
      {"carol", "02-transpose", result("optimized", "too_slow", 0.95)},
      {"dave", "02-transpose", result("optimized", "passed", 9.0, true)}};
  const auto board = gpulab::server::leaderboard_of(gradings, "bob", "secret");
  REQUIRE(board.size() == 2);
  CHECK(board[0].ratio == 0.90);
  CHECK_FALSE(board[0].you);
  CHECK(board[1].ratio == 0.85);
  CHECK(board[1].you);
  CHECK(board[0].pseudonym.rfind("anon-", 0) == 0);
  CHECK(board[0].pseudonym.find("alice") == std::string::npos);
  CHECK(board[0].pseudonym != gpulab::server::leaderboard_of(gradings, "bob", "another secret")[0].pseudonym);
  const std::string html = gpulab::server::student_page("bob", {}, {}, true, board);
  CHECK(html.find("90.0%") != std::string::npos);
  CHECK(html.find("(you)") != std::string::npos);
  CHECK(html.find("Leave the leaderboard") != std::string::npos);
}

TEST_CASE("against PostgreSQL, a course server grades, keeps every record, and survives a restart mid-queue" *
          doctest::skip(true)) {
  REQUIRE_MESSAGE(!g_database.empty(), "run with --postgresql (CTest does)");
  const fs::path root = fs::path(GPULAB_SCRATCH) / "server-postgresql";
  auto tokens = course_with_roster(root);
  long long first = 0, second = 0;
  {
    ServerProcess server(root / "server", {"--database", g_database});
    std::string output;
    CHECK(submit(server, tokens["bob"], committed_labs(), output) == 1);
    first = send_hello(server, tokens["alice"]);
    second = send_hello(server, tokens["alice"]);
    wait_for(server, tokens["alice"], first, "running");
    server.kill(SIGKILL);
  }
  ServerProcess server(root / "server", {"--database", g_database});
  CHECK(wait_for(server, tokens["alice"], first, "graded").at("attempts") == 2);
  const json done = wait_for(server, tokens["alice"], second, "graded");
  CHECK(done.at("result").at("passed") == true);
  int status = 0;
  get(server, tokens["bob"], "/api/submissions/" + std::to_string(first), status);
  CHECK(status == 404);
  // The rows are in PostgreSQL, none in a SQLite file.
  CHECK_FALSE(fs::exists(root / "server" / "gpulab.sqlite"));
  std::string rows;
  run_command("psql '" + g_database + "' -Atc 'SELECT COUNT(*) FROM gradings; SELECT COUNT(*) FROM students'", rows);
  CHECK(rows == "3\n2\n");
}

namespace {

// Debian's PostgreSQL in a folder of its own (its own socket and port), run as its postgres user;
// stopped when it goes.
class PostgresCluster {
 public:
  std::string why_not, url;

  PostgresCluster() {
    std::string bin = shell_output("ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1");
    bin.erase(bin.find_last_not_of("\n") + 1);
    if (bin.empty() || !fs::exists(fs::path(bin) / "initdb")) {
      why_not = "PostgreSQL is not installed (Debian: apt-get install postgresql-15; scripts/install-deps.sh test)";
      return;
    }
    if (::geteuid() != 0 || shell_output("id -u postgres 2>/dev/null").empty()) {
      why_not = "the test's PostgreSQL runs as the postgres user, which needs root to start it";
      return;
    }
    char tmpl[] = "/tmp/gpulab-pg-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    bin_ = bin;
    const int port = 20000 + static_cast<int>(::getpid() % 20000);
    const std::string as_postgres = "runuser -u postgres -- ";
    shell_output("chown postgres '" + dir_.string() + "'");
    const std::string init = shell_output(as_postgres + "'" + bin + "/initdb' -A trust -U postgres -D '" +
                                          (dir_ / "data").string() + "' 2>&1");
    const std::string start = shell_output(as_postgres + "'" + bin + "/pg_ctl' -w -D '" + (dir_ / "data").string() +
                                           "' -l '" + (dir_ / "log").string() + "' -o \"-k " + dir_.string() + " -p " +
                                           std::to_string(port) + " -c listen_addresses=''\" start 2>&1");
    if (start.find("server started") == std::string::npos) {
      why_not = "PostgreSQL did not start: " + init.substr(init.size() > 300 ? init.size() - 300 : 0) + start +
                shell_output("tail -n 5 '" + (dir_ / "log").string() + "'");
      return;
    }
    url = "postgresql://postgres@/postgres?host=" + dir_.string() + "&port=" + std::to_string(port);
  }
  ~PostgresCluster() {
    if (!bin_.empty())
      shell_output("runuser -u postgres -- '" + bin_ + "/pg_ctl' -D '" + (dir_ / "data").string() +
                   "' -m immediate stop 2>&1");
    if (!dir_.empty()) fs::remove_all(dir_);
  }

 private:
  fs::path dir_;
  std::string bin_;
  static std::string shell_output(const std::string& command) {
    std::string output;
    run_command(command, output);
    return output;
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args;
  bool postgresql = false;
  for (int i = 0; i < argc; ++i)
    if (std::string(argv[i]) == "--postgresql")
      postgresql = true;
    else
      args.push_back(argv[i]);
  std::optional<PostgresCluster> cluster;
  if (postgresql) {
    cluster.emplace();
    if (!cluster->why_not.empty()) {
      std::printf("skipped: %s\n", cluster->why_not.c_str());
      return 77;
    }
    g_database = cluster->url;
  }
  doctest::Context context(static_cast<int>(args.size()), args.data());
  if (postgresql) context.setOption("no-skip", true);
  return context.run();
}
