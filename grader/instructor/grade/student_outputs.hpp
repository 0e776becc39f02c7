// What `gpulab grade` derives from students' records: the Gradescope results, the feedback a student
// reads (text and HTML, with hidden cases redacted), and the instructor's gradebook.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "deadlines.hpp"
#include "gpulab/manifest.hpp"
#include "student_record.hpp"

namespace gpulab::cli {

struct GradescopeOptions {
  // Each task that passed without an integrity finding adds its rate to the submission's
  // `leaderboard` entries (Gradescope ranks them under the pseudonyms students choose).
  bool leaderboard = false;
  // A task graded on hidden cases is two tests: its visible cases (no points, visible) and its grade
  // over every case (its points, with this visibility: "after_due_date", "after_published",
  // "hidden" or "visible").
  std::string hidden_visibility = "after_due_date";
};
// Throws std::invalid_argument naming the four Gradescope visibilities for another.
void require_gradescope_visibility(const std::string& visibility);

// `record` with every text made printable (make_printable, lab_run.hpp): its labs, the refusal or the
// grader's error, the notes, the names of the student and the submission (a folder or archive name
// is the student's to choose) and the history. Every output below renders such a record, and a batch
// writes result.json from one.
StudentRecord printable_record(StudentRecord record);

// results.json in the fields and types of the Gradescope autograder specification.
nlohmann::json gradescope_results(const StudentRecord& record, const GradescopeOptions& options = {});
// What a student reads; with `hidden_visibility` not "visible", it names the tests Gradescope shows
// only after the due date.
std::string feedback_text(const StudentRecord& record, const GradescopeOptions& options = {});
std::string feedback_html(const StudentRecord& record, const GradescopeOptions& options = {});
// One row per record; columns: student, submission, a column per lab/task, score, max_score, status, error,
// findings (what the instructor should look at: buffer violations, sanitizer findings, divergent barriers);
// with due dates (by student) also submitted, due, late_days, late_penalty and final_score.
std::string gradebook_csv(const std::vector<StudentRecord>& records, const std::vector<Manifest>& labs,
                          const std::map<std::string, Lateness>* lateness = nullptr);

// OUT/students/<name>/{results.json, feedback.txt, feedback.html}: what a student and Gradescope get,
// rendered from the record (again at the end of every batch, so the batch's options hold for all).
void write_student_outputs(const StudentRecord& record, const std::filesystem::path& dir,
                           const GradescopeOptions& options);

// "3", "2.5", "0.33": points as the outputs print them.
std::string points_text(double points);

}  // namespace gpulab::cli
