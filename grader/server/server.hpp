// gpulab serve: the course server. Students submit a lab's files with their token (gpulab submit);
// the server queues them in its SQLite store (store.hpp), grades them one at a time per worker with
// the batch grader (gpulab grade: the same sandbox, hidden cases and redacted feedback), keeps every
// grading, and answers each student about their own submissions only. HTTP API (JSON):
//   POST /api/submissions        multipart: field `lab`, one `file` part per student file -> {id, position}
//   GET  /api/submissions        the student's submissions, newest grading each
//   GET  /api/submissions/ID     one of them: state, queue position, timestamps, the report when graded
// Every request but GET /api/health carries `Authorization: Bearer TOKEN` (gpulab roster makes them).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace gpulab::server {

struct ServeOptions {
  std::filesystem::path dir;  // the store, submitted files and grading folders
  std::string database;       // a postgresql:// URL: the store there instead of DIR/gpulab.sqlite
  std::string host = "127.0.0.1";
  int port = 8080;              // 0: any free port (printed)
  std::string backend, device;  // passed on to gpulab grade ("" : its default)
  int workers = 1;              // submissions graded at once
  int max_pending = 3;          // a student's queued or running submissions of one lab
  std::size_t max_upload_bytes = 1 << 20;
  int max_attempts = 3;                 // gradings the grader itself failed before "not gradable"
  std::vector<std::string> grade_args;  // more options for gpulab grade (e.g. --time-limit=300)
  // Each grading as a Slurm job (gpulab grade --slurm; its options through grade_args, e.g.
  // --partition=gpu): the worker waits for the job to leave the queue, and a job that ends without
  // a result (cancelled, failed, past its time) queues the submission again.
  bool slurm = false;
};

// Runs until SIGINT or SIGTERM; returns the exit status.
int serve(const ServeOptions& options);

// gpulab roster: imports a CSV with the header id,name,email into DIR's store (when `csv` is given),
// makes new tokens for the `reissue` students (a lost token), and appends each new token to
// DIR/tokens.csv (id,token). Returns the exit status.
int import_roster(const std::filesystem::path& dir, const std::filesystem::path& csv,
                  const std::vector<std::string>& reissue = {}, const std::string& database = "");

}  // namespace gpulab::server
