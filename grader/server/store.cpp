#include "store.hpp"

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <stdexcept>

#include "sha256.hpp"

namespace gpulab::server {

namespace fs = std::filesystem;

namespace {

constexpr const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS students (
  id TEXT PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL, token_sha256 TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS staff (token_sha256 TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS submissions (
  id INTEGER PRIMARY KEY AUTOINCREMENT, student TEXT NOT NULL REFERENCES students(id), lab TEXT NOT NULL,
  sha256 TEXT NOT NULL, bytes INTEGER NOT NULL, state TEXT NOT NULL, message TEXT NOT NULL DEFAULT '',
  submitted_at REAL NOT NULL, started_at REAL, finished_at REAL, attempts INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS submissions_state ON submissions(state, id);
CREATE INDEX IF NOT EXISTS submissions_student ON submissions(student, lab);
CREATE TABLE IF NOT EXISTS gradings (
  id INTEGER PRIMARY KEY AUTOINCREMENT, submission INTEGER NOT NULL REFERENCES submissions(id),
  graded_at REAL NOT NULL, score REAL NOT NULL, max_score REAL NOT NULL, passed INTEGER NOT NULL,
  report TEXT NOT NULL, result_json TEXT NOT NULL, gradescope_json TEXT NOT NULL DEFAULT '');
)";

std::string sha256_of(const std::string& text) { return cli::Sha256().update(text).hex(); }

Submission submission_from(SQLite::Statement& q) {
  Submission s;
  s.id = q.getColumn(0).getInt64();
  s.student = q.getColumn(1).getString();
  s.lab = q.getColumn(2).getString();
  s.sha256 = q.getColumn(3).getString();
  s.bytes = q.getColumn(4).getInt64();
  s.state = q.getColumn(5).getString();
  s.message = q.getColumn(6).getString();
  s.submitted_at = q.getColumn(7).getDouble();
  if (!q.getColumn(8).isNull()) s.started_at = q.getColumn(8).getDouble();
  if (!q.getColumn(9).isNull()) s.finished_at = q.getColumn(9).getDouble();
  s.attempts = q.getColumn(10).getInt();
  return s;
}

constexpr const char* kSubmissionColumns =
    "id, student, lab, sha256, bytes, state, message, submitted_at, started_at, finished_at, attempts";

}  // namespace

double unix_now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

std::string new_token() {
  std::ifstream random("/dev/urandom", std::ios::binary);
  unsigned char bytes[32];
  if (!random.read(reinterpret_cast<char*>(bytes), sizeof bytes))
    throw std::runtime_error("cannot read /dev/urandom to make a token");
  std::string hex;
  for (unsigned char b : bytes) hex += fmt::format("{:02x}", b);
  return hex;
}

Store::Store(const fs::path& dir)
    : db_((fs::create_directories(dir), dir / "gpulab.sqlite"), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE) {
  // WAL: readers (the web pages) do not wait for a worker's write; a busy database is waited for.
  db_.exec("PRAGMA journal_mode=WAL");
  db_.exec("PRAGMA foreign_keys=ON");
  db_.setBusyTimeout(10000);
  db_.exec(kSchema);
}

std::vector<std::pair<std::string, std::string>> Store::import_roster(const std::vector<Student>& students) {
  std::lock_guard lock(mutex_);
  SQLite::Transaction t(db_);
  std::vector<std::pair<std::string, std::string>> tokens;
  for (const auto& s : students) {
    SQLite::Statement update(db_, "UPDATE students SET name = ?, email = ? WHERE id = ?");
    update.bind(1, s.name);
    update.bind(2, s.email);
    update.bind(3, s.id);
    if (update.exec() > 0) continue;
    const std::string token = new_token();
    SQLite::Statement insert(db_, "INSERT INTO students (id, name, email, token_sha256) VALUES (?, ?, ?, ?)");
    insert.bind(1, s.id);
    insert.bind(2, s.name);
    insert.bind(3, s.email);
    insert.bind(4, sha256_of(token));
    insert.exec();
    tokens.emplace_back(s.id, token);
  }
  t.commit();
  return tokens;
}

std::optional<std::string> Store::reissue_token(const std::string& student) {
  std::lock_guard lock(mutex_);
  const std::string token = new_token();
  SQLite::Statement q(db_, "UPDATE students SET token_sha256 = ? WHERE id = ?");
  q.bind(1, sha256_of(token));
  q.bind(2, student);
  if (q.exec() == 0) return std::nullopt;
  return token;
}

std::optional<std::string> Store::make_staff_token() {
  std::lock_guard lock(mutex_);
  if (db_.execAndGet("SELECT COUNT(*) FROM staff").getInt() > 0) return std::nullopt;
  const std::string token = new_token();
  SQLite::Statement q(db_, "INSERT INTO staff (token_sha256) VALUES (?)");
  q.bind(1, sha256_of(token));
  q.exec();
  return token;
}

bool Store::is_staff_token(const std::string& token) {
  std::lock_guard lock(mutex_);
  SQLite::Statement q(db_, "SELECT 1 FROM staff WHERE token_sha256 = ?");
  q.bind(1, sha256_of(token));
  return q.executeStep();
}

std::vector<Submission> Store::all_submissions(int limit) {
  std::lock_guard lock(mutex_);
  SQLite::Statement q(db_, fmt::format("SELECT {} FROM submissions ORDER BY id DESC LIMIT ?", kSubmissionColumns));
  q.bind(1, limit);
  std::vector<Submission> all;
  while (q.executeStep()) all.push_back(submission_from(q));
  return all;
}

std::optional<std::string> Store::student_of_token(const std::string& token) {
  std::lock_guard lock(mutex_);
  SQLite::Statement q(db_, "SELECT id FROM students WHERE token_sha256 = ?");
  q.bind(1, sha256_of(token));
  if (!q.executeStep()) return std::nullopt;
  return q.getColumn(0).getString();
}

long long Store::add_submission(const std::string& student, const std::string& lab, const std::string& sha256,
                                long long bytes, int max_pending) {
  std::lock_guard lock(mutex_);
  SQLite::Transaction t(db_);
  SQLite::Statement count(
      db_,
      "SELECT COUNT(*) FROM submissions WHERE student = ? AND lab = ? AND state IN ('receiving', 'queued', 'running')");
  count.bind(1, student);
  count.bind(2, lab);
  count.executeStep();
  if (count.getColumn(0).getInt() >= max_pending) return 0;
  SQLite::Statement q(db_,
                      "INSERT INTO submissions (student, lab, sha256, bytes, state, submitted_at) "
                      "VALUES (?, ?, ?, ?, 'receiving', ?)");
  q.bind(1, student);
  q.bind(2, lab);
  q.bind(3, sha256);
  q.bind(4, static_cast<int64_t>(bytes));
  q.bind(5, unix_now());
  q.exec();
  const long long id = db_.getLastInsertRowid();
  t.commit();
  return id;
}

void Store::drop_submission(long long id) {
  std::lock_guard lock(mutex_);
  SQLite::Statement q(db_, "DELETE FROM submissions WHERE id = ? AND state = 'receiving'");
  q.bind(1, static_cast<int64_t>(id));
  q.exec();
}

void Store::enqueue(long long id) {
  std::lock_guard lock(mutex_);
  SQLite::Statement q(db_, "UPDATE submissions SET state = 'queued' WHERE id = ? AND state = 'receiving'");
  q.bind(1, static_cast<int64_t>(id));
  q.exec();
}

std::optional<Submission> Store::submission(long long id) {
  std::lock_guard lock(mutex_);
  SQLite::Statement q(db_, fmt::format("SELECT {} FROM submissions WHERE id = ?", kSubmissionColumns));
  q.bind(1, static_cast<int64_t>(id));
  if (!q.executeStep()) return std::nullopt;
  return submission_from(q);
}

std::vector<Submission> Store::submissions_of(const std::string& student) {
  std::lock_guard lock(mutex_);
  SQLite::Statement q(db_, fmt::format("SELECT {} FROM submissions WHERE student = ? ORDER BY id", kSubmissionColumns));
  q.bind(1, student);
  std::vector<Submission> all;
  while (q.executeStep()) all.push_back(submission_from(q));
  return all;
}

int Store::queue_position(long long id) {
  std::lock_guard lock(mutex_);
  SQLite::Statement q(db_,
                      "SELECT COUNT(*) FROM submissions WHERE state = 'queued' AND id <= ? "
                      "AND EXISTS (SELECT 1 FROM submissions WHERE id = ? AND state = 'queued')");
  q.bind(1, static_cast<int64_t>(id));
  q.bind(2, static_cast<int64_t>(id));
  q.executeStep();
  return q.getColumn(0).getInt();
}

std::optional<Submission> Store::claim_next() {
  std::lock_guard lock(mutex_);
  SQLite::Transaction t(db_);
  SQLite::Statement q(
      db_, fmt::format("SELECT {} FROM submissions WHERE state = 'queued' ORDER BY id LIMIT 1", kSubmissionColumns));
  if (!q.executeStep()) return std::nullopt;
  Submission s = submission_from(q);
  s.state = "running";
  s.started_at = unix_now();
  s.attempts += 1;
  SQLite::Statement claim(db_, "UPDATE submissions SET state = 'running', started_at = ?, attempts = ? WHERE id = ?");
  claim.bind(1, *s.started_at);
  claim.bind(2, s.attempts);
  claim.bind(3, static_cast<int64_t>(s.id));
  claim.exec();
  t.commit();
  return s;
}

void Store::requeue(long long id, const std::string& why) {
  std::lock_guard lock(mutex_);
  SQLite::Statement q(db_, "UPDATE submissions SET state = 'queued', started_at = NULL, message = ? WHERE id = ?");
  q.bind(1, why);
  q.bind(2, static_cast<int64_t>(id));
  q.exec();
}

void Store::mark_not_gradable(long long id, const std::string& why) {
  std::lock_guard lock(mutex_);
  SQLite::Statement q(db_, "UPDATE submissions SET state = 'not_gradable', finished_at = ?, message = ? WHERE id = ?");
  q.bind(1, unix_now());
  q.bind(2, why);
  q.bind(3, static_cast<int64_t>(id));
  q.exec();
}

bool Store::regrade(long long id) {
  std::lock_guard lock(mutex_);
  SQLite::Statement q(db_,
                      "UPDATE submissions SET state = 'queued', started_at = NULL, finished_at = NULL, attempts = 0, "
                      "message = 'regraded at the course staff''s request' "
                      "WHERE id = ? AND state IN ('graded', 'not_gradable')");
  q.bind(1, static_cast<int64_t>(id));
  return q.exec() > 0;
}

void Store::add_grading(const Grading& g) {
  std::lock_guard lock(mutex_);
  SQLite::Transaction t(db_);
  SQLite::Statement q(db_,
                      "INSERT INTO gradings (submission, graded_at, score, max_score, passed, report, result_json, "
                      "gradescope_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  q.bind(1, static_cast<int64_t>(g.submission));
  q.bind(2, g.graded_at);
  q.bind(3, g.score);
  q.bind(4, g.max_score);
  q.bind(5, g.passed ? 1 : 0);
  q.bind(6, g.report);
  q.bind(7, g.result_json);
  q.bind(8, g.gradescope_json);
  q.exec();
  SQLite::Statement done(db_, "UPDATE submissions SET state = 'graded', finished_at = ?, message = '' WHERE id = ?");
  done.bind(1, g.graded_at);
  done.bind(2, static_cast<int64_t>(g.submission));
  done.exec();
  t.commit();
}

std::optional<Grading> Store::latest_grading(long long submission) {
  std::lock_guard lock(mutex_);
  SQLite::Statement q(
      db_,
      "SELECT id, submission, graded_at, score, max_score, passed, report, result_json, gradescope_json "
      "FROM gradings "
      "WHERE submission = ? ORDER BY id DESC LIMIT 1");
  q.bind(1, static_cast<int64_t>(submission));
  if (!q.executeStep()) return std::nullopt;
  Grading g;
  g.id = q.getColumn(0).getInt64();
  g.submission = q.getColumn(1).getInt64();
  g.graded_at = q.getColumn(2).getDouble();
  g.score = q.getColumn(3).getDouble();
  g.max_score = q.getColumn(4).getDouble();
  g.passed = q.getColumn(5).getInt() != 0;
  g.report = q.getColumn(6).getString();
  g.result_json = q.getColumn(7).getString();
  g.gradescope_json = q.getColumn(8).getString();
  return g;
}

int Store::gradings_of(long long submission) {
  std::lock_guard lock(mutex_);
  SQLite::Statement q(db_, "SELECT COUNT(*) FROM gradings WHERE submission = ?");
  q.bind(1, static_cast<int64_t>(submission));
  q.executeStep();
  return q.getColumn(0).getInt();
}

int Store::requeue_running() {
  std::lock_guard lock(mutex_);
  db_.exec(
      "UPDATE submissions SET state = 'not_gradable', finished_at = submitted_at, "
      "message = 'the upload did not finish (the server stopped): submit again' WHERE state = 'receiving'");
  return db_.exec(
      "UPDATE submissions SET state = 'queued', started_at = NULL, "
      "message = 'the server stopped while it was graded: queued again' WHERE state = 'running'");
}

}  // namespace gpulab::server
