#include "student_outputs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "csv.hpp"
#include "files.hpp"
#include "gpulab/text.hpp"
#include "history.hpp"
#include "report.hpp"

namespace gpulab::cli {

using nlohmann::json;

void write_student_outputs(const StudentRecord& record, const std::filesystem::path& dir,
                           const GradescopeOptions& options) {
  write_text_atomically(gradescope_results(record, options).dump(2, ' ', false, json::error_handler_t::replace) + "\n",
                        dir / "results.json");
  write_text_atomically(feedback_text(record, options), dir / "feedback.txt");
  write_text_atomically(feedback_html(record, options), dir / "feedback.html");
}

namespace {

// A name on one line: printable, its line breaks and tabs spaces, without spaces at either end.
std::string printable_name(const std::string& name) {
  std::string out = printable(name);
  std::replace_if(
      out.begin(), out.end(), [](char c) { return c == '\n' || c == '\t'; }, ' ');
  const auto first = out.find_first_not_of(' '), last = out.find_last_not_of(' ');
  return first == std::string::npos ? "" : out.substr(first, last - first + 1);
}

}  // namespace

StudentRecord printable_record(StudentRecord record) {
  record.student = printable_name(record.student);
  record.submission = printable_name(record.submission);
  for (std::string* s : {&record.error, &record.isolation}) *s = printable(*s);
  for (auto& n : record.notes) n = printable(n);
  for (auto& lab : record.labs) make_printable(lab.run);
  for (auto& h : record.history) make_printable(h);
  return record;
}

std::string points_text(double p) { return fmt::format("{:g}", std::round(p * 100) / 100); }

namespace {

// A task whose failure was a hidden case's: what it was, never the case.
void redact_hidden_failure(TaskResult& t) {
  if (!t.failed_in_hidden_case) return;
  t.message = fmt::format(
      "{} in a case the course does not publish: test your kernel on more shapes (odd sizes, "
      "primes, single rows and columns, large inputs)",
      describe(t.status));
  t.details.clear();
  t.failed_in_hidden_case = false;  // the message says it now
}

// Hidden cases become "hidden case N" in every message of the task, and lose their own messages.
void alias_hidden_cases(TaskResult& t) {
  int n = 0;
  for (auto& c : t.cases) {
    if (!c.hidden) continue;
    const std::string alias = fmt::format("hidden case {}", ++n);
    t.message = replace_all(t.message, c.name, alias);
    t.details = replace_all(t.details, c.name, alias);
    c.name = alias;
    c.message.clear();
    c.details.clear();
  }
}

// What a student may see of a record: the shapes of hidden cases are the instructor's, so their
// names become "hidden case N" in every message (result.json keeps them for the instructor).
StudentRecord redacted_for_student(const StudentRecord& original) {
  StudentRecord record = printable_record(original);
  for (auto& lab : record.labs) {
    bool ran_hidden = false;
    for (const auto& t : lab.run.tasks)
      for (const auto& c : t.cases) ran_hidden = ran_hidden || c.hidden;
    // The program's own prints may show a hidden case's sizes.
    if (ran_hidden && !lab.run.output.empty())
      lab.run.output = "(not shown: it includes cases the course does not publish)";
    for (auto& t : lab.run.tasks) {
      redact_hidden_failure(t);
      alias_hidden_cases(t);
    }
  }
  return record;
}

// The console report's renderer makes the feedback: the record's labs as a run.
RunSummary summary_of(const StudentRecord& record) {
  RunSummary run;
  run.source = record.submission;
  run.backend = record.backend;
  run.seed = record.seed;
  for (const auto& lab : record.labs) run.labs.push_back(lab.run);
  return run;
}

std::string gradescope_output(const TaskResult& t) {
  std::string output = t.message;
  if (!t.details.empty()) output += "\n" + t.details;
  if (t.ratio && t.threshold) output += fmt::format("\n{}: {:.3f} (needed {:.3f})", t.metric, *t.ratio, *t.threshold);
  return t.status == Status::passed && output.empty() ? "passed" : output;
}

}  // namespace

void require_gradescope_visibility(const std::string& v) {
  if (v != "visible" && v != "hidden" && v != "after_due_date" && v != "after_published")
    throw std::invalid_argument(fmt::format(
        "--hidden-visibility {}: Gradescope's visibilities are after_due_date, after_published, hidden and visible",
        v));
}

namespace {

bool ran_hidden_cases(const TaskResult& t) {
  return std::any_of(t.cases.begin(), t.cases.end(), [](const CaseResult& c) { return c.hidden; });
}

std::string test_name(const LabRun& lab, const TaskResult& t) {
  return fmt::format("{} / {} ({}){}", lab.id, t.task, t.function, t.bonus ? " [bonus]" : "");
}

// The tests of one task: one, or with hidden cases and a visibility other than "visible" two: the
// visible cases' verdict (no points, shown now) and the grade over every case (shown per `visibility`).
void add_task_tests(json& tests, const LabRun& lab, const TaskResult& shown, const TaskResult& original,
                    const GradescopeOptions& o) {
  json graded{{"name", test_name(lab, shown)},      {"score", shown.points},
              {"max_score", shown.max_points},      {"status", shown.status == Status::passed ? "passed" : "failed"},
              {"output", gradescope_output(shown)}, {"visibility", "visible"}};
  if (o.hidden_visibility == "visible" || !ran_hidden_cases(original)) {
    tests.push_back(std::move(graded));
    return;
  }
  const bool visible_passed = original.status == Status::passed || original.failed_in_hidden_case;
  const int visible_cases = static_cast<int>(
      std::count_if(original.cases.begin(), original.cases.end(), [](const CaseResult& c) { return !c.hidden; }));
  tests.push_back({{"name", test_name(lab, shown) + ": the cases you can run"},
                   {"score", 0.0},
                   {"max_score", 0.0},
                   {"status", visible_passed ? "passed" : "failed"},
                   {"output", visible_passed ? fmt::format("passed: {} cases, as make check runs them", visible_cases)
                                             : gradescope_output(shown)},
                   {"visibility", "visible"}});
  graded["name"] = test_name(lab, shown) + ": every case, the course's hidden ones included";
  graded["visibility"] = o.hidden_visibility;
  tests.push_back(std::move(graded));
}

// The submission's rates for Gradescope's leaderboard: tasks with no integrity finding whose cases
// passed. Gradescope shows the board at once, so with results shown later only the visible cases'
// verdict counts: a task's presence must not give a hidden case away.
json leaderboard_entries(const StudentRecord& r, const GradescopeOptions& o) {
  json entries = json::array();
  for (const auto& lab : r.labs)
    for (const auto& t : lab.run.tasks) {
      const bool later = o.hidden_visibility != "visible" && ran_hidden_cases(t);
      const bool passed = t.status == Status::passed || (later && t.failed_in_hidden_case);
      if (passed && t.finding.empty() && t.rate)
        entries.push_back({{"name", fmt::format("{} / {} ({})", lab.run.id, t.task, lab.run.calibration.unit)},
                           {"value", *t.rate},
                           {"order", "desc"}});
    }
  return entries;
}

// When Gradescope shows what `visibility` holds back, in words.
std::string shown_when(const std::string& visibility) {
  return visibility == "after_due_date"    ? "after the due date"
         : visibility == "after_published" ? "once the grades are published"
                                           : "to the course staff only";
}

}  // namespace

json gradescope_results(const StudentRecord& record, const GradescopeOptions& options) {
  require_gradescope_visibility(options.hidden_visibility);
  const StudentRecord result = redacted_for_student(record);
  json tests = json::array();
  bool split = false;
  for (std::size_t l = 0; l < result.labs.size(); ++l)
    for (std::size_t i = 0; i < result.labs[l].run.tasks.size(); ++i) {
      const std::size_t before = tests.size();
      add_task_tests(tests, result.labs[l].run, result.labs[l].run.tasks[i], record.labs[l].run.tasks[i], options);
      split = split || tests.size() - before > 1;
    }
  std::string output;
  if (!result.error.empty()) output = "Your submission could not be graded: " + result.error;
  for (const auto& n : result.notes) output += (output.empty() ? "" : "\n") + n;
  if (split)
    output += std::string(output.empty() ? "" : "\n") +
              fmt::format("Tasks graded on cases the course does not publish show their points {}.",
                          shown_when(options.hidden_visibility));
  // The specification has no total maximum (the assignment sets it): it goes with the extra data.
  json out{{"extra_data", {{"max_score", result.max_score}, {"student", result.student}}},
           {"execution_time", static_cast<int>(result.duration_s)},
           {"output", output},
           {"tests", tests}};
  // With tests shown later, Gradescope's total is the sum of the tests, so it too is shown then.
  if (!split) out["score"] = result.score.value_or(0.0);
  if (options.leaderboard) out["leaderboard"] = leaderboard_entries(record, options);
  return out;
}

namespace {

// The timeline of the student's own checks of each graded lab, when the submission brought it.
std::string history_text(const StudentRecord& record) {
  if (record.history.empty()) return {};
  std::string text = "\nYour checks before you submitted (the make check history your machine recorded):\n";
  try {
    for (const auto& lab : record.labs) text += render_history(record.history, lab.run.id);
  } catch (const std::exception& e) {  // it informs; the feedback is complete without it
    text += fmt::format("  (it could not be shown: {})\n", e.what());
  }
  return text;
}

}  // namespace

std::string feedback_text(const StudentRecord& record, const GradescopeOptions& options) {
  const StudentRecord result = redacted_for_student(record);
  std::string text =
      fmt::format("gpulab grade: {} ({})\nsubmission content: {}\ngrader: {}\nisolation: {}\n\n", result.student,
                  result.submission, result.content_hash, result.grader_version, result.isolation);
  if (!result.error.empty())
    text += fmt::format("Your submission could not be graded:\n  {}\n\nScore: 0 / {}\n", result.error,
                        points_text(result.max_score));
  if (!result.notes.empty()) {
    text += "Notes:\n";
    for (const auto& n : result.notes) text += "  " + n + "\n";
    text += "\n";
  }
  if (result.labs.empty()) return text;
  text += render_report(summary_of(result), false);
  for (const auto& lab : result.labs)
    for (const auto& t : lab.run.tasks)
      if (auto ref = lab.references.find(t.task); ref != lab.references.end() && ref->second.ratio && t.ratio)
        text += fmt::format("{} {}: your {} {:.3f}; the reference solution on this machine {:.3f}\n", lab.run.id,
                            t.task, t.metric, *t.ratio, *ref->second.ratio);
  text += history_text(record);
  if (options.hidden_visibility == "visible") return text;
  std::vector<std::string> later;
  for (const auto& lab : record.labs)
    for (const auto& t : lab.run.tasks)
      if (ran_hidden_cases(t)) later.push_back(fmt::format("{} / {}", lab.run.id, t.task));
  if (!later.empty())
    text += fmt::format(
        "\nOn Gradescope, the points of {} (graded on cases the course does not publish) are shown {}; until "
        "then it shows whether the cases you can run passed.\n",
        fmt::join(later, ", "), shown_when(options.hidden_visibility));
  return text;
}

std::string feedback_html(const StudentRecord& record, const GradescopeOptions& options) {
  const StudentRecord result = printable_record(record);
  return fmt::format(R"(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>gpulab feedback: {0}</title>
<style>body{{font-family:system-ui,sans-serif;margin:2em;max-width:70em}}
pre{{background:#f6f6f6;padding:1em;overflow-x:auto;white-space:pre-wrap}}.score{{font-size:1.4em;font-weight:bold}}</style></head>
<body><h1>Feedback for {0}</h1><p class="score">{1} / {2} points</p>
<p>This is what <code>make check</code> shows for the files you submitted, graded on the course's machine
(including cases you do not see when you run it yourself).</p>
<pre>{3}</pre></body></html>
)",
                     html_escape(result.student), points_text(result.score.value_or(0.0)),
                     points_text(result.max_score), html_escape(feedback_text(result, options)));
}

namespace {

// What the instructor should look at in a record: each task's finding (buffer violation, impossible
// speed, sanitizer) and each warning of the static barrier check, separated by "; ".
std::string findings_of(const StudentRecord& record) {
  std::vector<std::string> found;
  for (const auto& lab : record.labs) {
    for (const auto& t : lab.run.tasks)
      if (!t.finding.empty()) found.push_back(fmt::format("{}/{}: {}", lab.run.id, t.task, t.finding));
    for (const auto& w : lab.run.warnings) found.push_back(w.substr(0, w.find(" — ")));
  }
  return fmt::format("{}", fmt::join(found, "; "));
}

double points_of(const StudentRecord& record, const std::string& lab, const std::string& task) {
  for (const auto& l : record.labs)
    if (l.run.id == lab)
      for (const auto& t : l.run.tasks)
        if (t.task == task) return t.points;
  return 0;
}

}  // namespace

namespace {

// submitted, due, late_days, late_penalty (percent), final_score: empty where no due date applies.
std::string late_columns(const StudentRecord& r, const std::map<std::string, Lateness>& lateness) {
  const auto it = lateness.find(r.student);
  if (it == lateness.end()) return ",,,,," + points_text(r.score.value_or(0.0));
  const Lateness& l = it->second;
  return fmt::format(",{}{},{},{},{},{}", iso_time(l.submitted),
                     l.submitted_from.empty() ? "" : " (" + l.submitted_from + ")", iso_time(l.due), l.late_days,
                     points_text(100 * l.penalty), points_text(r.score.value_or(0.0) * (1 - l.penalty)));
}

// attempts, counted: how many gradings are kept, and which one the row is: the latest, "latest
// (<graded_at>)" (a regrade is made for a reason: new files, or a fixed grader); a not-graded row counts none.
std::string attempt_columns(const StudentRecord& r) {
  const std::string counted = r.grader_error        ? "none (not graded)"
                              : r.graded_at.empty() ? "latest"
                                                    : fmt::format("latest ({})", r.graded_at);
  return fmt::format(",{},{}", r.attempts, csv_cell(counted));
}

}  // namespace

std::string gradebook_csv(const std::vector<StudentRecord>& records, const std::vector<Manifest>& labs,
                          const std::map<std::string, Lateness>* lateness) {
  std::vector<std::pair<std::string, std::string>> columns;  // lab id, task
  for (const auto& m : labs)
    for (const auto& t : m.tasks) columns.emplace_back(m.id, t.name);
  std::string csv = "student,submission";
  for (const auto& [lab, task] : columns) csv += "," + csv_cell(lab + "/" + task);
  csv += ",score,max_score,status,error,findings";
  csv += lateness ? ",submitted,due,late_days,late_penalty,final_score" : "";
  // Every grading of a student is kept (students/<name>/attempts/); the row is the latest, which counts.
  csv += ",attempts,counted\n";
  for (const auto& original : records) {
    const StudentRecord r = printable_record(original);
    csv += csv_cell(r.student) + "," + csv_cell(r.submission);
    if (r.grader_error) {
      // Not the student's zero: no points at all until a later run grades them.
      csv += std::string(columns.size(), ',') + ",," + points_text(r.max_score) + ",not graded," + csv_cell(r.error) +
             "," + (lateness ? ",,,,," : "") + attempt_columns(r) + "\n";
      continue;
    }
    for (const auto& [lab, task] : columns) csv += "," + points_text(points_of(r, lab, task));
    csv += "," + points_text(r.score.value_or(0.0)) + "," + points_text(r.max_score) + "," +
           (r.error.empty() ? "graded" : "refused") + "," + csv_cell(r.error) + "," + csv_cell(findings_of(r));
    if (lateness) csv += late_columns(r, *lateness);
    csv += attempt_columns(r) + "\n";
  }
  return csv;
}

}  // namespace gpulab::cli
