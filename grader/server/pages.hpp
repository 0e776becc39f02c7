// The course server's web pages (gpulab serve): HTML rendered on the server from the store, no
// script. A student sees their own submissions and reports; the course staff the queue with each
// submission's timestamps, the class by lab, any report, regrades and the gradebook export.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "store.hpp"

namespace gpulab::server {

std::string login_page(const std::string& error);
// `gradings`: each submission's newest grading, in the order of `submissions`.
std::string student_page(const std::string& student, const std::vector<Submission>& submissions,
                         const std::vector<std::optional<Grading>>& gradings);
std::string report_page(const Submission& s, const std::optional<Grading>& g, bool staff);
std::string staff_page(const std::vector<Submission>& submissions, const std::vector<std::optional<Grading>>& gradings,
                       int workers);
// The gradebook: per student and lab, the score of the newest graded submission (student,lab,score,
// max_score,status,error,passed,submission,graded_at); for one lab, what scripts/grade/lms.py export
// reads as a grades.csv (the LMS round trip).
std::string gradebook_csv(const std::vector<Submission>& submissions,
                          const std::vector<std::optional<Grading>>& gradings);

}  // namespace gpulab::server
