// The course server's records (gpulab serve): students with hashed tokens, every submission with its
// files' hash, the queue's states and timestamps, and every grading of a submission. SQLite in the
// server's folder (SQLiteCpp: a thin, well-kept RAII layer over the C API, in Debian), or PostgreSQL
// (libpqxx) for a course whose servers span machines: database.hpp. Every method is one transaction
// under one lock, so the HTTP threads and the workers share one connection safely; taking the next
// submission is one statement, so servers sharing a PostgreSQL database never take the same one.
#pragma once
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "database.hpp"

namespace gpulab::server {

struct Student {
  std::string id, name, email;
};

// A submission's place in the queue: queued -> running -> graded, or not_gradable when the grader
// itself failed it three times (never the student's zero).
struct Submission {
  long long id = 0;
  std::string student, lab, sha256, state, message;
  double submitted_at = 0;
  std::optional<double> started_at, finished_at;
  int attempts = 0;
  long long bytes = 0;
};

// One grading of a submission: a regrade adds one; the newest counts.
struct Grading {
  long long id = 0, submission = 0;
  double graded_at = 0, score = 0, max_score = 0;
  bool passed = false;
  std::string report, result_json;
  std::string gradescope_json;  // the student's results.json for Gradescope, as gpulab grade wrote it
};

class Store {
 public:
  // Opens (creating) DIR/gpulab.sqlite, or the PostgreSQL database at `database` (a postgresql://
  // URL) when one is given, and creates the tables it lacks.
  explicit Store(const std::filesystem::path& dir, const std::string& database = "");

  // Adds the roster's students that are new (existing ones keep their tokens; their name and email
  // are updated) and returns each new student's token, made here and stored only as its SHA-256.
  std::vector<std::pair<std::string, std::string>> import_roster(const std::vector<Student>& students);
  // A new token for a student (the old one stops working); empty when the roster has no such id.
  std::optional<std::string> reissue_token(const std::string& student);
  // The course staff's token: made (and returned) the first time, stored as its SHA-256 only.
  std::optional<std::string> make_staff_token();
  bool is_staff_token(const std::string& token);
  // Every submission, newest first, at most `limit` (the instructor's page).
  std::vector<Submission> all_submissions(int limit);
  // The class leaderboard is opt-in: a student joins or leaves it.
  void set_leaderboard(const std::string& student, bool join);
  bool on_leaderboard(const std::string& student);
  // Every grading of the students on the leaderboard: (student, lab, result JSON).
  std::vector<std::tuple<std::string, std::string, std::string>> leaderboard_gradings();
  // The student a token belongs to.
  std::optional<std::string> student_of_token(const std::string& token);

  // Records a submission whose files are being written (state "receiving"), unless the student has
  // `max_pending` submissions of the lab waiting or running (then 0); throws when the database
  // refuses. enqueue() queues it once its files are on disk.
  long long add_submission(const std::string& student, const std::string& lab, const std::string& sha256,
                           long long bytes, int max_pending, const std::string& worker);
  // A submission whose files could not be stored: gone, as if never sent.
  void drop_submission(long long id);
  void enqueue(long long id);
  std::optional<Submission> submission(long long id);
  std::vector<Submission> submissions_of(const std::string& student);
  // 1 for the next to be graded; 0 when it is not queued.
  int queue_position(long long id);
  // The oldest queued submission, now running on `worker` (started_at set, attempts counted); empty
  // when none.
  std::optional<Submission> claim_next(const std::string& worker);
  // A running submission back in the queue (its grader failed, or the server restarted).
  void requeue(long long id, const std::string& why);
  void mark_not_gradable(long long id, const std::string& why);
  // A graded (or not gradable) submission queued again by the staff; its gradings stay. False when
  // it is waiting or running already, or does not exist.
  bool regrade(long long id);
  void add_grading(const Grading& g);
  std::optional<Grading> latest_grading(long long submission);
  int gradings_of(long long submission);
  // At start: what was running when the server stopped is queued again (returns how many), and an
  // upload it did not finish is said to have failed.
  // `worker`: the server's name (its host and folder), so that servers sharing a database each take
  // back only their own.
  int requeue_running(const std::string& worker);

 private:
  // One transaction: begun here, rolled back unless commit() ran.
  class Transaction;
  std::mutex mutex_;
  std::unique_ptr<Connection> db_;
};

// A new token: 32 random bytes from the kernel, as hex.
std::string new_token();
double unix_now();

}  // namespace gpulab::server
