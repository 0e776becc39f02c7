// What `gpulab grade` derives from students' records: the Gradescope results, the feedback a student
// reads (text and HTML, with hidden cases redacted), and the instructor's gradebook.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpulab/manifest.hpp"
#include "student_record.hpp"

namespace gpulab::cli {

nlohmann::json gradescope_results(const StudentRecord& record);
std::string feedback_text(const StudentRecord& record);
std::string feedback_html(const StudentRecord& record);
// One row per record; columns: student, submission, a column per lab/task, score, max_score, status, error,
// findings (what the instructor should look at: buffer violations, sanitizer findings, divergent barriers).
std::string gradebook_csv(const std::vector<StudentRecord>& records, const std::vector<Manifest>& labs);

// "3", "2.5", "0.33": points as the outputs print them.
std::string points_text(double points);

}  // namespace gpulab::cli
