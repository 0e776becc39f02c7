#include "server.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <httplib.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "commands.hpp"
#include "csv.hpp"
#include "files.hpp"
#include "pages.hpp"
#include "sha256.hpp"
#include "store.hpp"
#include "toolchain.hpp"

namespace gpulab::server {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

void reply(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}
void refuse(httplib::Response& res, int status, const std::string& why) { reply(res, status, {{"error", why}}); }

json optional_time(const std::optional<double>& t) { return t ? json(*t) : json(nullptr); }

// The uploaded files, checked against the lab's manifest: plain names the lab lists, each once.
struct Upload {
  std::string lab_id;
  std::map<std::string, std::string> files;  // name -> content
  std::string sha256;
  std::size_t bytes = 0;
};

std::string check_upload(const httplib::Request& req, const cli::Toolchain& tc, std::size_t max_bytes, Upload& up) {
  if (!req.is_multipart_form_data()) return "send the lab's files as multipart/form-data (gpulab submit does)";
  if (!req.has_file("lab")) return "the upload names no lab (a form field `lab`)";
  Manifest m;
  try {
    m = cli::select_labs(tc, {req.get_file_value("lab").content}).front();
  } catch (const std::exception& e) { return e.what(); }
  up.lab_id = m.id;
  std::set<std::string> allowed;
  for (const auto& [backend, names] : m.files) allowed.insert(names.begin(), names.end());
  const auto [first, last] = req.files.equal_range("file");
  for (auto it = first; it != last; ++it) {
    const httplib::MultipartFormData& item = it->second;
    if (!allowed.count(item.filename))
      return fmt::format("{} is not a student file of {} (its files: {})", item.filename, m.id,
                         fmt::join(allowed, ", "));
    if (!up.files.emplace(item.filename, item.content).second) return fmt::format("{} was sent twice", item.filename);
    up.bytes += item.content.size();
  }
  if (up.files.empty()) return fmt::format("no files: send {}'s student files ({})", m.id, fmt::join(allowed, ", "));
  if (up.bytes > max_bytes)
    return fmt::format("the files hold {} bytes; the server takes at most {} per submission", up.bytes, max_bytes);
  cli::Sha256 hash;
  for (const auto& [name, content] : up.files) hash.update(name).update(std::string(1, '\0')).update(content);
  up.sha256 = hash.hex();
  return {};
}

// The student's id as the batch's folder name (the report names it): no separators, no leading dot.
std::string folder_name(std::string id) {
  for (char& c : id)
    if (c == '/' || c == '\\' || static_cast<unsigned char>(c) < 0x20) c = '_';
  if (id.empty() || id[0] == '.') id = "_" + id;
  return id;
}

// The one student folder a one-student batch wrote ("" when none).
fs::path graded_folder(const fs::path& students) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(students, ec))
    if (entry.is_directory()) return entry.path();
  return {};
}

// What a grading says: the score, and whether every required task passed (what `make check` asks).
Grading grading_from(long long submission, const fs::path& result_file, const fs::path& feedback_file) {
  const std::string text = cli::read_text_or_throw(result_file);
  const json r = json::parse(text);
  Grading g;
  g.submission = submission;
  g.graded_at = unix_now();
  g.score = r.value("score", 0.0);
  g.max_score = r.value("max_score", 0.0);
  g.passed = r.contains("labs") && !r["labs"].empty() && r.value("error", "").empty();
  for (const auto& lab : r.value("labs", json::array()))
    for (const auto& task : lab.value("tasks", json::array()))
      if (!task.value("bonus", false) && task.value("status", "") != "passed") g.passed = false;
  g.report = cli::read_text(feedback_file);
  g.gradescope_json = cli::read_text(result_file.parent_path() / "results.json");
  g.result_json = text;
  return g;
}

// The token a signed-in browser sends back (cookie gpulab_token), "" when none.
std::string cookie_token(const httplib::Request& req) {
  const std::string cookies = req.get_header_value("Cookie");
  const std::string key = "gpulab_token=";
  for (std::size_t at = 0; (at = cookies.find(key, at)) != std::string::npos; at += key.size())
    if (at == 0 || cookies[at - 1] == ' ' || cookies[at - 1] == ';') {
      const auto end = cookies.find(';', at);
      return cookies.substr(at + key.size(), end == std::string::npos ? std::string::npos : end - at - key.size());
    }
  return {};
}

void html(httplib::Response& res, int status, const std::string& body) {
  res.status = status;
  res.set_content(body, "text/html; charset=utf-8");
}

// DIR/pseudonym-secret, made the first time (readable by its owner only).
std::string pseudonym_secret(const fs::path& dir) {
  const fs::path file = dir / "pseudonym-secret";
  std::string secret = cli::read_text(file);
  if (secret.empty()) {
    secret = new_token();
    cli::write_text_atomically(secret, file);
    fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
  }
  return secret;
}

// The staff's token, made the first time and written to DIR/staff-token (readable by its owner only).
void ensure_staff_token(Store& store, const fs::path& dir) {
  const auto token = store.make_staff_token();
  if (!token) return;
  const fs::path file = dir / "staff-token";
  cli::write_text_atomically(*token + "\n", file);
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
  fmt::print("gpulab: the course staff's token for the server's pages is in {}\n", file.string());
}

}  // namespace

class Server {
 public:
  Server(const ServeOptions& o) : o_(o), store_(o.dir, o.database), tc_(cli::Toolchain::load(cli::own_directory())) {}

  int run();

 private:
  void routes();
  void submit(const httplib::Request& req, httplib::Response& res);
  void show(const httplib::Request& req, httplib::Response& res);
  void page_routes();
  struct Viewer {
    bool staff = false;
    std::optional<std::string> student;
    bool any() const { return staff || student.has_value(); }
  };
  Viewer viewer(const std::string& token);
  std::vector<std::optional<Grading>> gradings_of(const std::vector<Submission>& subs);
  void home(const httplib::Request& req, httplib::Response& res);
  void report(const httplib::Request& req, httplib::Response& res);
  void list(const httplib::Request& req, httplib::Response& res);
  std::optional<std::string> student(const httplib::Request& req, httplib::Response& res);
  json describe(const Submission& s);
  void work();
  void grade(const Submission& s);
  int run_grader(const Submission& s, const fs::path& job);
  std::string wait_for_slurm(const fs::path& out);
  void stop();

  ServeOptions o_;
  Store store_;
  cli::Toolchain tc_;
  // Found once: a rebuild replaces the running executable, and /proc/self/exe then names no file.
  fs::path instructor_ = cli::own_directory() / "gpulab-instructor";
  // Keys the leaderboard's pseudonyms, so that hashing a student's id does not reveal theirs.
  std::string secret_ = pseudonym_secret(o_.dir);
  // Which server took a submission: this host and folder (servers may share a PostgreSQL database).
  std::string name_ = cli::host_name() + ":" + o_.dir.string();
  httplib::Server http_;
  std::atomic<bool> stopping_{false};
  std::mutex wake_mutex_;
  std::condition_variable wake_;
  std::mutex children_mutex_;
  std::set<pid_t> children_;
};

std::optional<std::string> Server::student(const httplib::Request& req, httplib::Response& res) {
  const std::string auth = req.get_header_value("Authorization");
  const std::string prefix = "Bearer ";
  std::optional<std::string> who;
  if (auth.rfind(prefix, 0) == 0) who = store_.student_of_token(auth.substr(prefix.size()));
  if (!who) refuse(res, 401, "no valid token: pass the one your instructor gave you (gpulab submit --token)");
  return who;
}

json Server::describe(const Submission& s) {
  json j{{"id", s.id},
         {"lab", s.lab},
         {"state", s.state},
         {"message", s.message},
         {"sha256", s.sha256},
         {"submitted_at", s.submitted_at},
         {"started_at", optional_time(s.started_at)},
         {"finished_at", optional_time(s.finished_at)},
         {"attempts", s.attempts},
         {"position", store_.queue_position(s.id)},
         {"gradings", store_.gradings_of(s.id)}};
  if (const auto g = store_.latest_grading(s.id))
    j["result"] = {{"graded_at", g->graded_at},
                   {"score", g->score},
                   {"max_score", g->max_score},
                   {"passed", g->passed},
                   {"report", g->report}};
  return j;
}

void Server::submit(const httplib::Request& req, httplib::Response& res) {
  const auto who = student(req, res);
  if (!who) return;
  Upload up;
  if (std::string why = check_upload(req, tc_, o_.max_upload_bytes, up); !why.empty()) return refuse(res, 400, why);
  const long long id =
      store_.add_submission(*who, up.lab_id, up.sha256, static_cast<long long>(up.bytes), o_.max_pending, name_);
  if (id == 0)
    return refuse(res, 429,
                  fmt::format("you have {} submissions of {} waiting or being graded: wait for one to finish",
                              o_.max_pending, up.lab_id));
  // The files on disk before the submission is queued; a disk that refuses them leaves no record.
  const fs::path files = o_.dir / "files" / std::to_string(id);
  try {
    fs::remove_all(files);
    for (const auto& [name, content] : up.files) cli::write_text_atomically(content, files / name);
  } catch (const std::exception& e) {
    std::error_code ignored;
    fs::remove_all(files, ignored);
    store_.drop_submission(id);
    return refuse(res, 507,
                  fmt::format("the server could not store your files ({}): nothing was submitted; tell "
                              "the course staff, and try again later",
                              e.what()));
  }
  store_.enqueue(id);
  wake_.notify_all();
  reply(res, 202, {{"id", id}, {"lab", up.lab_id}, {"position", store_.queue_position(id)}});
}

void Server::show(const httplib::Request& req, httplib::Response& res) {
  const auto who = student(req, res);
  if (!who) return;
  const auto s = store_.submission(std::stoll(req.matches[1]));
  // Another student's submission reads as one that does not exist.
  if (!s || s->student != *who) return refuse(res, 404, "no such submission of yours");
  reply(res, 200, describe(*s));
}

void Server::list(const httplib::Request& req, httplib::Response& res) {
  const auto who = student(req, res);
  if (!who) return;
  json all = json::array();
  for (const auto& s : store_.submissions_of(*who)) all.push_back(describe(s));
  reply(res, 200, {{"student", *who}, {"submissions", all}});
}

Server::Viewer Server::viewer(const std::string& token) {
  Viewer v;
  if (token.empty()) return v;
  v.staff = store_.is_staff_token(token);
  if (!v.staff) v.student = store_.student_of_token(token);
  return v;
}

std::vector<std::optional<Grading>> Server::gradings_of(const std::vector<Submission>& subs) {
  std::vector<std::optional<Grading>> all;
  for (const auto& s : subs) all.push_back(store_.latest_grading(s.id));
  return all;
}

void Server::home(const httplib::Request& req, httplib::Response& res) {
  const Viewer v = viewer(cookie_token(req));
  if (v.staff) {
    const auto subs = store_.all_submissions(1000);
    return html(res, 200, staff_page(subs, gradings_of(subs), o_.workers));
  }
  if (!v.student) return html(res, 200, login_page(""));
  const auto subs = store_.submissions_of(*v.student);
  html(res, 200,
       student_page(*v.student, subs, gradings_of(subs), store_.on_leaderboard(*v.student),
                    leaderboard_of(store_.leaderboard_gradings(), *v.student, secret_)));
}

void Server::report(const httplib::Request& req, httplib::Response& res) {
  const Viewer v = viewer(cookie_token(req));
  const auto s = store_.submission(std::stoll(req.matches[1]));
  if (!v.any()) return html(res, 401, login_page("Sign in to see a submission."));
  if (!s || (!v.staff && s->student != *v.student)) return html(res, 404, login_page("No such submission of yours."));
  html(res, 200, report_page(*s, store_.latest_grading(s->id), v.staff));
}

void Server::page_routes() {
  http_.Get("/", [this](const httplib::Request& q, httplib::Response& r) { home(q, r); });
  http_.Post("/login", [this](const httplib::Request& q, httplib::Response& r) {
    const std::string token = q.get_param_value("token");
    if (token.find_first_not_of("0123456789abcdef") != std::string::npos || !viewer(token).any())
      return html(r, 401, login_page("That token is not one this server knows."));
    r.set_header("Set-Cookie", "gpulab_token=" + token + "; Path=/; HttpOnly; SameSite=Strict");
    r.set_redirect("/", 303);
  });
  http_.Get("/logout", [](const httplib::Request&, httplib::Response& r) {
    r.set_header("Set-Cookie", "gpulab_token=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict");
    r.set_redirect("/", 303);
  });
  http_.Get(R"(/submissions/(\d{1,15}))", [this](const httplib::Request& q, httplib::Response& r) { report(q, r); });
  http_.Post(R"(/submissions/(\d{1,15})/regrade)", [this](const httplib::Request& q, httplib::Response& r) {
    if (!viewer(cookie_token(q)).staff) return html(r, 403, login_page("Only the course staff can regrade."));
    store_.regrade(std::stoll(q.matches[1]));
    wake_.notify_all();
    r.set_redirect(fmt::format("/submissions/{}", q.matches[1].str()), 303);
  });
  http_.Post("/leaderboard", [this](const httplib::Request& q, httplib::Response& r) {
    const Viewer v = viewer(cookie_token(q));
    if (!v.student) return html(r, 403, login_page("Sign in as a student to join the leaderboard."));
    store_.set_leaderboard(*v.student, q.get_param_value("join") == "1");
    r.set_redirect("/", 303);
  });
  http_.Get("/gradebook.csv", [this](const httplib::Request& q, httplib::Response& r) {
    if (!viewer(cookie_token(q)).staff) return html(r, 403, login_page("Only the course staff can export grades."));
    auto subs = store_.all_submissions(1 << 30);
    // ?lab=NN-name: one assignment, the form scripts/grade/lms.py export reads as a grades.csv.
    if (q.has_param("lab")) std::erase_if(subs, [&](const Submission& s) { return s.lab != q.get_param_value("lab"); });
    r.set_content(gradebook_csv(subs, gradings_of(subs)), "text/csv; charset=utf-8");
  });
  // A grading's results.json for Gradescope (an autograder that forwards the server's result).
  http_.Get(R"(/submissions/(\d{1,15})/results.json)", [this](const httplib::Request& q, httplib::Response& r) {
    const Viewer v = viewer(cookie_token(q));
    const auto s = store_.submission(std::stoll(q.matches[1]));
    const auto g = s ? store_.latest_grading(s->id) : std::nullopt;
    if (!s || !g || !v.any() || (!v.staff && s->student != *v.student))
      return refuse(r, 404, "no graded submission of yours with that number");
    r.set_content(g->gradescope_json, "application/json");
  });
}

void Server::routes() {
  page_routes();
  http_.set_payload_max_length(o_.max_upload_bytes + (64 << 10));
  http_.Get("/api/health", [](const httplib::Request&, httplib::Response& res) { reply(res, 200, {{"ok", true}}); });
  http_.Post("/api/submissions", [this](const httplib::Request& q, httplib::Response& r) { submit(q, r); });
  http_.Get("/api/submissions", [this](const httplib::Request& q, httplib::Response& r) { list(q, r); });
  http_.Get(R"(/api/submissions/(\d{1,15}))", [this](const httplib::Request& q, httplib::Response& r) { show(q, r); });
  // A database or disk error is the server's, said to the submitter; nothing is taken silently.
  http_.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) { what = e.what(); } catch (...) {
    }
    refuse(res, 500, "the server could not take this request (" + what + "): nothing was recorded; try again");
  });
}

// Runs gpulab grade on one submission, laid out as a one-student batch, in a process group of its
// own that dies with the server (killed if it stops). Returns its exit status (-1: it could not start).
int Server::run_grader(const Submission& s, const fs::path& job) {
  const fs::path lab_dir = job / "submissions" / folder_name(s.student) / "labs" / s.lab;
  fs::create_directories(lab_dir);
  for (const auto& f : fs::directory_iterator(o_.dir / "files" / std::to_string(s.id)))
    fs::copy_file(f.path(), lab_dir / f.path().filename());
  std::vector<std::string> args{instructor_.string(),
                                "grade",
                                "--submissions",
                                (job / "submissions").string(),
                                "--out",
                                (job / "out").string(),
                                "--lab",
                                s.lab,
                                "--quiet",
                                "--force"};
  if (!o_.backend.empty()) args.insert(args.end(), {"--backend", o_.backend});
  if (!o_.device.empty()) args.insert(args.end(), {"--device", o_.device});
  if (o_.slurm) args.push_back("--slurm");
  args.insert(args.end(), o_.grade_args.begin(), o_.grade_args.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string log = (job / "grade.log").string();
  const pid_t server = getpid();
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // a server killed outright takes its gradings with it
    if (getppid() != server) _exit(127);
    const int out = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0) _exit(127);
    dup2(out, 1), dup2(out, 2);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  {
    std::lock_guard lock(children_mutex_);
    children_.insert(pid);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  std::lock_guard lock(children_mutex_);
  children_.erase(pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// After gpulab grade --slurm queued a grading: waits until its job array has left Slurm's queue.
// Returns "" then, or why it cannot tell.
std::string Server::wait_for_slurm(const fs::path& out) {
  std::string job;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(out / "slurm", ec))
    if (fs::exists(e.path() / "submission.json"))
      job = json::parse(cli::read_text(e.path() / "submission.json"), nullptr, false).value("array_job", "");
  if (job.empty() || job.find_first_not_of("0123456789") != std::string::npos)
    return "gpulab grade --slurm queued no job (its output is in grade.log)";
  while (!stopping_) {
    const auto r = cli::run_command("squeue -h -o %i -j " + job);
    // squeue forgets a job soon after it ends, and then calls its id invalid.
    if ((r.status == 0 && r.output.find(job) == std::string::npos) ||
        r.output.find("Invalid job id") != std::string::npos)
      return {};
    std::unique_lock lock(wake_mutex_);
    wake_.wait_for(lock, std::chrono::seconds(2));
  }
  return "the server stopped";
}

// The end of a Slurm job's log, for the message of a job that left no result.
static std::string slurm_log_tail(const fs::path& out) {
  std::string tail;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(out / "slurm", ec))
    if (e.path().extension() == ".log" && e.path().filename().string().rfind("task-", 0) == 0) {
      const std::string log = cli::read_text(e.path());
      tail = log.size() > 400 ? "…" + log.substr(log.size() - 400) : log;
    }
  return tail;
}

void Server::grade(const Submission& s) {
  // A folder per attempt: what an earlier, interrupted attempt left is kept apart (and its log kept).
  const fs::path job = o_.dir / "jobs" / std::to_string(s.id) / fmt::format("attempt-{}", s.attempts);
  fs::remove_all(job);
  // `why` is for the course staff (the server's log); the student reads its first part, `summary`.
  std::string summary, why;
  try {
    const int status = run_grader(s, job);
    std::string slurm_failure;
    if (o_.slurm && status == 0) slurm_failure = wait_for_slurm(job / "out");
    if (stopping_) return;  // queued again at the next start
    const fs::path student = graded_folder(job / "out" / "students");
    if (!student.empty() && fs::exists(student / "result.json")) {
      store_.add_grading(grading_from(s.id, student / "result.json", student / "feedback.txt"));
      fmt::print("gpulab serve: submission {} ({}, {}) graded\n", s.id, s.student, s.lab);
      std::fflush(stdout);
      return;
    }
    if (o_.slurm && status == 0) {
      summary = "its Slurm job ended without a result (cancelled, failed or past its time limit)";
      why = slurm_failure.empty() ? slurm_log_tail(job / "out") : slurm_failure;
    } else {
      const std::string log = cli::read_text(job / "grade.log");
      summary = fmt::format("the grader failed (exit status {})", status);
      why = log.size() > 600 ? "…" + log.substr(log.size() - 600) : log;
    }
  } catch (const std::exception& e) {
    summary = "the grader failed";
    why = e.what();
  }
  if (stopping_) return;  // queued again at the next start
  fmt::print(stderr, "gpulab serve: submission {}, attempt {}: {}: {} (log: {})\n", s.id, s.attempts, summary, why,
             (job / "grade.log").string());
  if (s.attempts < o_.max_attempts)
    store_.requeue(s.id, summary + " (queued again)");
  else
    store_.mark_not_gradable(s.id, fmt::format("not gradable: the grader failed {} times ({}); this costs you no "
                                               "attempt, and the course staff can see why in the server's log",
                                               s.attempts, summary));
}

void Server::work() {
  while (!stopping_) {
    std::optional<Submission> next;
    try {
      next = store_.claim_next(name_);
    } catch (const std::exception& e) {
      fmt::print(stderr, "gpulab serve: the store refused the next submission: {}\n", e.what());
    }
    if (next) {
      grade(*next);
      continue;
    }
    std::unique_lock lock(wake_mutex_);
    wake_.wait_for(lock, std::chrono::seconds(2));
  }
}

void Server::stop() {
  stopping_ = true;
  http_.stop();
  wake_.notify_all();
  std::lock_guard lock(children_mutex_);
  for (pid_t child : children_) kill(-child, SIGTERM);
}

int Server::run() {
  ensure_staff_token(store_, o_.dir);
  if (const int n = store_.requeue_running(name_); n > 0)
    fmt::print("gpulab serve: {} submissions were being graded when the server stopped: queued again\n", n);
  routes();
  const int port =
      o_.port == 0 ? http_.bind_to_any_port(o_.host) : (http_.bind_to_port(o_.host, o_.port) ? o_.port : -1);
  if (port < 0) {
    fmt::print(stderr, "gpulab serve: cannot listen on {}:{} (in use, or not an address of this machine)\n", o_.host,
               o_.port);
    return 2;
  }
  // SIGINT and SIGTERM go to one thread, which stops the server (a handler could not do it safely).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::thread signal_thread([this, signals] {
    int received = 0;
    sigwait(&signals, &received);
    stop();
  });
  std::vector<std::thread> workers;
  for (int i = 0; i < o_.workers; ++i) workers.emplace_back([this] { work(); });
  fmt::print("gpulab serve: listening on http://{}:{} ({}; {} worker{})\n", o_.host, port, o_.dir.string(), o_.workers,
             o_.workers == 1 ? "" : "s");
  std::fflush(stdout);
  http_.listen_after_bind();
  stop();
  for (auto& w : workers) w.join();
  pthread_kill(signal_thread.native_handle(), SIGTERM);
  signal_thread.join();
  fmt::print("gpulab serve: stopped\n");
  return 0;
}

int serve(const ServeOptions& options) {
  Server server(options);
  return server.run();
}

namespace {

std::vector<Student> read_roster(const fs::path& csv) {
  std::ifstream in(csv);
  if (!in) throw std::runtime_error(fmt::format("cannot read the roster {}", csv.string()));
  std::string line;
  std::getline(in, line);
  if (cli::csv_fields(line) != std::vector<std::string>{"id", "name", "email"})
    throw std::runtime_error(fmt::format("{}: the first line must be the header id,name,email", csv.string()));
  std::vector<Student> students;
  for (int number = 2; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto f = cli::csv_fields(line);
    if (f.size() != 3 || f[0].empty())
      throw std::runtime_error(fmt::format("{}:{}: expected id,name,email with an id", csv.string(), number));
    students.push_back({f[0], f[1], f[2]});
  }
  return students;
}

}  // namespace

int import_roster(const fs::path& dir, const fs::path& csv, const std::vector<std::string>& reissue,
                  const std::string& database) {
  Store store(dir, database);
  ensure_staff_token(store, dir);
  std::vector<std::pair<std::string, std::string>> tokens;
  if (!csv.empty()) {
    const auto students = read_roster(csv);
    tokens = store.import_roster(students);
    fmt::print("gpulab roster: {} students, {} new\n", students.size(), tokens.size());
  }
  for (const auto& id : reissue) {
    const auto token = store.reissue_token(id);
    if (!token) throw std::runtime_error(fmt::format("no student {} in {}'s roster", id, dir.string()));
    tokens.emplace_back(id, *token);
    fmt::print("gpulab roster: a new token for {} (the old one no longer works)\n", id);
  }
  const fs::path tokens_file = dir / "tokens.csv";
  std::string text = cli::read_text(tokens_file);
  if (text.empty()) text = "id,token\n";
  for (const auto& [id, token] : tokens) text += cli::csv_cell(id) + "," + token + "\n";
  cli::write_text_atomically(text, tokens_file);
  fs::permissions(tokens_file, fs::perms::owner_read | fs::perms::owner_write);
  fmt::print(
      "gpulab roster: the new tokens are in {} (hand each student theirs; the server keeps only their "
      "hashes)\n",
      tokens_file.string());
  return 0;
}

}  // namespace gpulab::server
