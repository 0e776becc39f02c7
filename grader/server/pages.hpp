// The course server's web pages (gpulab serve): HTML rendered on the server from the store, no
// script. A student sees their own submissions and reports; the course staff the queue with each
// submission's timestamps, the class by lab, any report, regrades and the gradebook export.
#pragma once
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "store.hpp"

namespace gpulab::server {

std::string login_page(const std::string& error);
// One row of the class leaderboard: a task's best rate by a student who joined it.
struct LeaderboardEntry {
  std::string lab, task, pseudonym, unit;
  double rate = 0, ratio = 0;
  bool you = false;
};
// The leaderboard from every grading of the students on it (store.hpp): per lab and task, each
// student's best rate among the tasks that passed without an integrity finding, under a pseudonym
// (a hash of the id and the server's secret), best first.
std::vector<LeaderboardEntry> leaderboard_of(
    const std::vector<std::tuple<std::string, std::string, std::string>>& gradings, const std::string& viewer,
    const std::string& secret);

// `gradings`: each submission's newest grading, in the order of `submissions`. The page holds the
// student's score history per lab (an SVG) and the leaderboard, with the form to join or leave it.
std::string student_page(const std::string& student, const std::vector<Submission>& submissions,
                         const std::vector<std::optional<Grading>>& gradings, bool on_leaderboard,
                         const std::vector<LeaderboardEntry>& leaderboard);
std::string report_page(const Submission& s, const std::optional<Grading>& g, bool staff);
std::string staff_page(const std::vector<Submission>& submissions, const std::vector<std::optional<Grading>>& gradings,
                       int workers);
// The gradebook: per student and lab, the score of the newest graded submission (student,lab,score,
// max_score,status,error,passed,submission,graded_at); for one lab, what scripts/grade/lms.py export
// reads as a grades.csv (the LMS round trip).
std::string gradebook_csv(const std::vector<Submission>& submissions,
                          const std::vector<std::optional<Grading>>& gradings);

}  // namespace gpulab::server
