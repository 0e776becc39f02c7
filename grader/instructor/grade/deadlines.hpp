// Due dates, extensions and late penalties (`gpulab grade --deadlines FILE`, `make grade DEADLINES=`):
// a CSV the instructor writes, one row per student with an extension and a row `*` for everyone else:
//
//   student,due,grace_hours,penalty_per_day,max_late_days,submitted
//   *,2026-12-01T23:59:00+01:00,1,10,5,
//   alice,2026-12-04T23:59:00+01:00,,,,
//   bob,,,,,2026-12-02T08:00:00Z
//
// An empty field takes the `*` row's. `submitted` overrides the submission's own time (the newest
// modification time of its files as received, which copying or cloning resets): LMS exports give the
// real one, and the batch warns when a penalty rests on file times. A submission later
// than due + grace loses penalty_per_day percent of its score per started day, and all of it after
// max_late_days (empty: no limit). The gradebook shows the raw score, the lateness and the final score.
#pragma once
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace gpulab::cli {

struct DuePolicy {
  std::optional<std::time_t> due, submitted;
  std::optional<double> grace_hours, penalty_per_day;
  std::optional<int> max_late_days;
};

struct Deadlines {
  DuePolicy everyone;                         // the `*` row
  std::map<std::string, DuePolicy> students;  // extensions, and times from an LMS
};

// Reads the CSV; throws std::runtime_error naming the file, the line and the fix for a missing
// header, a time without a time zone, an unknown column or a negative number.
Deadlines read_deadlines(const std::filesystem::path& csv);

// "2026-12-01T23:59:00+01:00", "2026-12-01T22:59Z", "2026-12-01 23:59 +0100": seconds since the
// epoch; throws std::invalid_argument when the text is no such time or has no time zone.
std::time_t parse_iso_time(const std::string& text);
// "2026-12-01T22:59:00Z".
std::string iso_time(std::time_t t);

// When a submission was handed in, as far as the grader can tell without the CSV: its newest file
// time (a folder's files, an archive's own), and that it is one; an empty folder's own time (never
// the epoch), and that it has no files.
struct SubmissionTime {
  std::time_t time = 0;
  std::string source;  // "file time", or "folder time, no files"
};
SubmissionTime submission_time(const std::filesystem::path& submission);

struct Lateness {
  std::time_t submitted = 0, due = 0;
  std::string submitted_from;  // "" (the CSV's `submitted`), or SubmissionTime::source
  int late_days = 0;           // started days after due + grace
  double penalty = 0;          // fraction of the score taken, 0..1
};

// The lateness of `student`'s submission handed in at `handed_in` (when the CSV does not say); none
// when no due date applies to the student.
std::optional<Lateness> lateness_of(const Deadlines& deadlines, const std::string& student,
                                    const SubmissionTime& handed_in);

// The newest modification time of `submission` (a file, or every file under a folder); 0 for a folder
// without files.
std::time_t newest_file_time(const std::filesystem::path& submission);

}  // namespace gpulab::cli
