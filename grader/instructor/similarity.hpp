// `gpulab similarity`: which students of a batch handed in similar lab files. Each submission is opened
// like `gpulab grade` opens it (submission.hpp), the skeleton's own lines are taken out of every student
// file, and the similarity tester (Debian's similarity-tester, sim_c++) compares the files pair by pair,
// token by token, so layout, comments and identifier names do not hide a copy. The report ranks the pairs
// of each lab and backend: OUT/similarity/index.html, a side-by-side page per pair, and pairs.json.
#pragma once
#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpulab/manifest.hpp"

namespace gpulab::cli {

struct SimilarityOptions {
  std::filesystem::path submissions;  // one folder or archive per student, as for `gpulab grade`
  std::filesystem::path out = "results";
  std::vector<Manifest> labs;         // their skeletons are the files beside each lab.toml
  std::vector<std::string> backends;  // empty: every backend a manifest lists
  double min_percent = 10;            // pairs whose similarity is below this are left out of the report
  int min_run_tokens = 24;            // sim's -r: the shortest matching run that counts
  int max_pages = 200;                // per lab and backend: the most similar pairs with a page and a row in index.html
  std::string tool = "sim_c++";       // the similarity tester: a name looked up in PATH, or a path
  bool quiet = false;
};

// One matching run: lines of the two students' copies of `file` with the same token sequence.
struct SimilarRun {
  std::string file;
  int tokens = 0;
  int a_first = 0, a_last = 0, b_first = 0, b_last = 0;
};

struct SimilarPair {
  std::string lab, backend, a, b;       // lab id, backend, the two students (a before b by name)
  int tokens = 0;                       // matching tokens in all
  int tokens_a = 0, tokens_b = 0;       // each student's tokens after the skeleton's lines are taken out
  double percent_a = 0, percent_b = 0;  // how much of a is found in b, and of b in a
  std::vector<SimilarRun> runs;
  std::string page;  // the side-by-side page, relative to OUT/similarity ("" beyond max_pages)
  // The ranking: the matching tokens over the union of the two students' own tokens (a Jaccard index of
  // their code), so neither a short file nor a long one can reach 100 % alone: one matching line in a
  // file of one line is 100 % of that file but a small share of the pair's code. A copy padded with as
  // much code again still shows 50 %.
  double similarity() const {
    const int shared = std::min({tokens, tokens_a, tokens_b});  // b's side of a run may repeat (compare_group)
    const int both = tokens_a + tokens_b - shared;
    return both > 0 ? 100.0 * shared / both : 0;
  }
};

// `student` with comments blanked and every line that is also a line of `skeleton` (spaces and an opening
// brace at the end ignored) blanked: the skeleton's text (signatures, closing braces, its not-implemented
// calls) is everybody's, so it must not make two students similar. Blank lines, not deleted ones, keep
// the line numbers, so sim's line ranges point into the file as handed in.
std::string without_skeleton(const std::string& student, const std::string& skeleton);

// What `sim_c++ -e -s -n` printed: each file's tokens, and each matching run between two files.
struct SimOutput {
  std::map<std::string, int> tokens;  // file -> tokens
  struct Run {
    std::string first, second;
    int tokens = 0, first_from = 0, first_to = 0, second_from = 0, second_to = 0;
  };
  std::vector<Run> runs;
};
SimOutput parse_sim_output(const std::string& text);

// The ranked pairs (most similar first), and the pages and pairs.json written under OUT/similarity.
struct SimilarityReport {
  std::vector<SimilarPair> pairs;
  std::vector<std::string> notes;  // submissions that could not be opened, labs with fewer than two students
};
SimilarityReport write_similarity_report(const SimilarityOptions& options);

// The command: prints where the report is and the top pairs; returns 0, or throws with the fix when
// the similarity tester is missing or SUBMISSIONS is not a folder.
int run_similarity(const SimilarityOptions& options);

}  // namespace gpulab::cli
