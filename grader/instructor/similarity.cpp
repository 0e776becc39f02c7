#include "similarity.hpp"

#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "files.hpp"
#include "gpulab/text.hpp"
#include "source_text.hpp"
#include "submission.hpp"

namespace gpulab::cli {

namespace fs = std::filesystem;

namespace {

// A line as the skeleton comparison sees it: no spaces at all, and no opening brace at the end, so a
// signature with its brace on the next line (another layout) is still the skeleton's.
std::string line_key(const std::string& line) {
  std::string out;
  for (char c : line)
    if (!std::isspace(static_cast<unsigned char>(c))) out += c;
  while (!out.empty() && out.back() == '{') out.pop_back();
  return out;
}

// The path of `tool` (a name searched in PATH, or a path), or "" when there is none that can be run.
std::string find_tool(const std::string& tool) {
  if (tool.find('/') != std::string::npos) return ::access(tool.c_str(), X_OK) == 0 ? tool : "";
  return find_program(tool);
}

std::string required_tool(const std::string& tool) {
  const std::string found = find_tool(tool);
  if (found.empty())
    throw std::runtime_error(
        fmt::format("the similarity tester {} was not found: install similarity-tester "
                    "(scripts/install-deps.sh grade, or sudo apt-get install similarity-tester)",
                    tool));
  return found;
}

// A student's copy of one lab file: as handed in (for the page) and as compared (for sim).
struct StudentFile {
  std::string original, code, compared;  // code: without comments; compared: without the skeleton's lines too
};

// One lab and backend: its students (by name) and their files, by the manifest's file name.
struct Group {
  const Manifest* lab = nullptr;
  std::string backend;
  std::vector<std::string> students;
  std::map<std::string, std::map<std::string, StudentFile>> files;  // student -> file -> copy
  std::string key() const { return lab->id + "-" + backend; }
};

std::string group_folder(const SimilarPair& pair) { return pair.lab + "-" + pair.backend; }

std::vector<std::string> backends_of(const Manifest& lab, const std::vector<std::string>& wanted) {
  std::vector<std::string> out;
  for (const auto& [backend, files] : lab.files)
    if (wanted.empty() || std::find(wanted.begin(), wanted.end(), backend) != wanted.end()) out.push_back(backend);
  return out;
}

// A backend the labs do not have would leave the report empty without saying why.
void check_backends(const SimilarityOptions& options) {
  std::set<std::string> known;
  for (const auto& lab : options.labs)
    for (const auto& [backend, files] : lab.files) known.insert(backend);
  for (const auto& wanted : options.backends)
    if (!known.count(wanted))
      throw std::invalid_argument(
          fmt::format("BACKEND={} is not a backend of these labs (they have: {})", wanted, fmt::join(known, ", ")));
}

// Takes each student's lab files the way grading does; a submission that cannot be opened is a note.
std::vector<Group> collect_groups(const SimilarityOptions& options, const fs::path& scratch,
                                  std::vector<std::string>& notes) {
  std::vector<Group> groups;
  for (const auto& lab : options.labs)
    for (const auto& backend : backends_of(lab, options.backends)) groups.push_back(Group{&lab, backend, {}, {}});
  for (const auto& [name, entry] : submission_entries(options.submissions)) {
    try {
      const SubmissionFiles submission = open_submission(entry, scratch / "unpacked" / name);
      for (auto& group : groups) {
        const fs::path lab_dir = scratch / "taken" / name / group.key();
        const LabFiles taken = take_lab_files(submission, *group.lab, group.backend, lab_dir);
        if (taken.taken.empty()) continue;
        const fs::path skeleton_dir = group.lab->path.parent_path();
        for (const auto& file : taken.taken) {
          const std::string text = read_text_or_throw(lab_dir / file);
          group.files[name][file] = {text, blank_comments(text, Literals::keep),
                                     without_skeleton(text, read_text(skeleton_dir / file))};
        }
        group.students.push_back(name);
      }
    } catch (const std::exception& e) {
      notes.push_back(
          fmt::format("{} ({}) could not be opened and is left out: {}", name, entry.filename().string(), e.what()));
    }
  }
  return groups;
}

// sim's name for a student's copy: the student's index, so no name from a submission reaches the shell.
std::string sim_name(std::size_t index) { return fmt::format("{:04}.src", index); }

SimOutput run_tool(const std::string& tool, const fs::path& dir, std::size_t count, int min_run_tokens) {
  // -e: each pair of files compared on its own (exact per-pair runs); -s: not a file with itself;
  // -n: only positions and sizes of the runs; -r: the shortest run that counts.
  std::string command =
      fmt::format("cd {} && {} -e -s -n -r {}", shell_quote(dir.string()), shell_quote(tool), min_run_tokens);
  for (std::size_t i = 0; i < count; ++i) command += " " + sim_name(i);
  const CommandOutput result = run_command(command);
  if (result.status != 0)
    throw std::runtime_error(
        fmt::format("{} failed (status {}): {}", tool, result.status, result.output.substr(0, 2000)));
  return parse_sim_output(result.output);
}

// The pair of students `first` and `second` (indices into group.students), created on first use.
SimilarPair& pair_of(std::map<std::pair<int, int>, SimilarPair>& pairs, const Group& group, int first, int second) {
  const auto key = std::minmax(first, second);
  auto [it, created] = pairs.try_emplace(key);
  if (created) {
    it->second.lab = group.lab->id;
    it->second.backend = group.backend;
    it->second.a = group.students[key.first];
    it->second.b = group.students[key.second];
  }
  return it->second;
}

// Compares one file of the lab among the students who handed it in; adds its runs and tokens.
void compare_file(const Group& group, const std::string& file, const std::string& tool, const fs::path& dir,
                  int min_run_tokens, std::map<std::pair<int, int>, SimilarPair>& pairs, std::vector<int>& tokens) {
  std::vector<int> students;  // indices into group.students, in sim's file order
  fs::create_directories(dir);
  for (std::size_t i = 0; i < group.students.size(); ++i) {
    const auto& files = group.files.at(group.students[i]);
    if (auto it = files.find(file); it != files.end()) {
      write_text_atomically(it->second.compared, dir / sim_name(students.size()));
      students.push_back(static_cast<int>(i));
    }
  }
  if (students.size() < 2) return;
  const SimOutput sim = run_tool(tool, dir, students.size(), min_run_tokens);
  for (std::size_t k = 0; k < students.size(); ++k)
    if (auto it = sim.tokens.find(sim_name(k)); it != sim.tokens.end()) tokens[students[k]] += it->second;
  auto index_of = [&](const std::string& name) { return students.at(std::stoul(name.substr(0, name.find('.')))); };
  for (const auto& run : sim.runs) {
    const int first = index_of(run.first), second = index_of(run.second);
    if (first == second) continue;
    SimilarPair& pair = pair_of(pairs, group, first, second);
    const bool in_order = first < second;  // the pair's a is the student with the smaller index
    pair.tokens += run.tokens;
    pair.runs.push_back({file, run.tokens, in_order ? run.first_from : run.second_from,
                         in_order ? run.first_to : run.second_to, in_order ? run.second_from : run.first_from,
                         in_order ? run.second_to : run.first_to});
  }
}

std::vector<SimilarPair> compare_group(const Group& group, const std::string& tool, const fs::path& scratch,
                                       int min_run_tokens) {
  std::map<std::pair<int, int>, SimilarPair> pairs;
  std::vector<int> tokens(group.students.size(), 0);
  const auto& files = group.lab->files.at(group.backend);
  for (std::size_t f = 0; f < files.size(); ++f)
    compare_file(group, files[f], tool, scratch / "compared" / group.key() / std::to_string(f), min_run_tokens, pairs,
                 tokens);
  std::vector<SimilarPair> out;
  for (auto& [key, pair] : pairs) {
    pair.tokens_a = tokens[key.first];
    pair.tokens_b = tokens[key.second];
    // A run's tokens are counted once in a (sim scans a's side without overlap); b's side may repeat, hence the cap.
    pair.percent_a = pair.tokens_a ? std::min(100.0, 100.0 * pair.tokens / pair.tokens_a) : 0;
    pair.percent_b = pair.tokens_b ? std::min(100.0, 100.0 * pair.tokens / pair.tokens_b) : 0;
    out.push_back(std::move(pair));
  }
  return out;
}

// Pages show untrusted files: everything is escaped, and the policy forbids scripts and fetches even so.
constexpr const char* kPageHead =
    "<!doctype html>\n<html><head><meta charset=\"utf-8\">\n"
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
    "<title>{}</title>\n<style>\n"
    "body {{ font-family: sans-serif; margin: 1.5em; }} table {{ border-collapse: collapse; }}\n"
    "td, th {{ border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }}\n"
    "pre {{ margin: 0; font-size: 12px; }} .sk {{ color: #aaa; }} .num {{ text-align: right; }}\n"
    ".code {{ overflow-x: auto; max-width: 47vw; }}\n"
    ".c0 {{ background: #ffe08a; }} .c1 {{ background: #a8e6a1; }} .c2 {{ background: #a9d1f7; }}\n"
    ".c3 {{ background: #f7b6c2; }} .c4 {{ background: #d4b8f0; }} .c5 {{ background: #f9c98f; }}\n"
    ".c6 {{ background: #9fe3dc; }} .c7 {{ background: #e3e39f; }}\n"
    "</style></head><body>\n";
constexpr int kColours = 8;

// One student's copy of `file`, a line per row: the line number, then the text. Code lines inside a run
// have the run's colour; lines of the skeleton (blanked for the comparison) are grey; comments and blank
// lines stay plain, since they were not compared either.
std::string file_column(const StudentFile* copy, const std::vector<std::pair<int, int>>& spans) {
  if (!copy) return "<td><em>not handed in</em></td>";
  const auto original = split_lines(copy->original), code = split_lines(copy->code);
  const auto compared = split_lines(copy->compared);
  std::string html = "<td><div class=\"code\"><pre>";
  for (std::size_t i = 0; i < original.size(); ++i) {
    const int line = static_cast<int>(i) + 1;
    const bool has_code = i < code.size() && !line_key(code[i]).empty();
    const bool skeleton = has_code && i < compared.size() && line_key(compared[i]).empty();
    std::string css = skeleton ? "sk" : "";
    for (std::size_t r = 0; r < spans.size() && has_code && css.empty(); ++r)
      if (spans[r].first <= line && line <= spans[r].second) css = fmt::format("c{}", r % kColours);
    html += fmt::format("<span class=\"{}\">{:>4}  {}</span>\n", css, line, html_escape(original[i]));
  }
  return html + "</pre></div></td>";
}

std::string pair_page(const Group& group, const SimilarPair& pair, int min_run_tokens) {
  std::string html = fmt::format(kPageHead, html_escape(pair.a + " and " + pair.b + ": " + group.key()));
  html += fmt::format(
      "<h1>{} and {}</h1>\n<p>{}, {}: {:.0f}% of {} is found in {}, {:.0f}% of {} in {}; {} matching "
      "tokens in {} run(s) of at least {} tokens. Runs have one colour on both sides; grey lines are the "
      "skeleton's and were not compared. <a href=\"index.html\">All pairs</a></p>\n<ol>\n",
      html_escape(pair.a), html_escape(pair.b), html_escape(group.lab->id), html_escape(group.backend), pair.percent_a,
      html_escape(pair.a), html_escape(pair.b), pair.percent_b, html_escape(pair.b), html_escape(pair.a), pair.tokens,
      pair.runs.size(), min_run_tokens);
  for (std::size_t r = 0; r < pair.runs.size(); ++r) {
    const auto& run = pair.runs[r];
    html += fmt::format("<li><span class=\"c{}\">{}</span>: lines {}-{} and {}-{}, {} tokens</li>\n", r % kColours,
                        html_escape(run.file), run.a_first, run.a_last, run.b_first, run.b_last, run.tokens);
  }
  html += "</ol>\n";
  for (const auto& file : group.lab->files.at(group.backend)) {
    std::vector<std::pair<int, int>> spans_a, spans_b;  // one per run, in run order, so colours match
    for (const auto& run : pair.runs) {
      spans_a.emplace_back(run.file == file ? run.a_first : 0, run.file == file ? run.a_last : -1);
      spans_b.emplace_back(run.file == file ? run.b_first : 0, run.file == file ? run.b_last : -1);
    }
    auto copy = [&](const std::string& student) -> const StudentFile* {
      const auto& files = group.files.at(student);
      auto it = files.find(file);
      return it == files.end() ? nullptr : &it->second;
    };
    html += fmt::format("<h2>{}</h2>\n<table><tr><th>{}</th><th>{}</th></tr>\n<tr>{}{}</tr></table>\n",
                        html_escape(file), html_escape(pair.a), html_escape(pair.b), file_column(copy(pair.a), spans_a),
                        file_column(copy(pair.b), spans_b));
  }
  return html + "</body></html>\n";
}

// The page's file name: the two (already plain) student names; a second pair that would get the same
// name ("a--b" + "c" and "a" + "b--c") gets a number.
std::string page_name(const SimilarPair& pair, std::set<std::string>& used) {
  const std::string stem = group_folder(pair) + "/" + pair.a + "--" + pair.b;
  std::string name = stem + ".html";
  for (int n = 2; !used.insert(name).second; ++n) name = fmt::format("{}-{}.html", stem, n);
  return name;
}

std::string index_page(const std::vector<Group>& groups, const SimilarityReport& report, const SimilarityOptions& o) {
  std::string html = fmt::format(kPageHead, "Similar submissions");
  html += fmt::format(
      "<h1>Similar submissions</h1>\n<p>Pairs of students whose lab files share runs of at least {} "
      "tokens after the skeleton's lines are taken out (sim_c++ of similarity-tester: layout, comments "
      "and names do not count), most similar first; pairs below {}% are left out. Similarity is the "
      "matching tokens over all the code of the two (a short file cannot reach 100% by itself); the "
      "percentages beside it are how much of each is found in the other. A high score is a reason to read "
      "both files, not a proof.</p>\n",
      o.min_run_tokens, o.min_percent);
  if (!report.notes.empty()) {
    html += "<ul>\n";
    for (const auto& note : report.notes) html += fmt::format("<li>{}</li>\n", html_escape(note));
    html += "</ul>\n";
  }
  for (const auto& group : groups) {
    std::string rows;
    int rank = 0, shown = 0;
    for (const auto& p : report.pairs) {
      if (p.lab != group.lab->id || p.backend != group.backend) continue;
      ++rank;
      if (p.page.empty()) continue;  // beyond max_pages: only in pairs.json
      ++shown;
      rows += fmt::format(
          "<tr><td class=\"num\">{}</td><td>{}</td><td>{}</td><td class=\"num\">{:.0f}%</td>"
          "<td class=\"num\">{:.0f}%</td><td class=\"num\">{:.0f}%</td><td class=\"num\">{}</td>"
          "<td><a href=\"{}\">side by side</a></td></tr>\n",
          rank, html_escape(p.a), html_escape(p.b), p.similarity(), p.percent_a, p.percent_b, p.tokens,
          html_escape(p.page));
    }
    html += fmt::format("<h2>{} ({}): {} students, {} pairs at or above {}%</h2>\n", html_escape(group.lab->id),
                        html_escape(group.backend), group.students.size(), rank, o.min_percent);
    if (shown < rank) html += fmt::format("<p>The first {} are shown; pairs.json lists them all.</p>\n", shown);
    if (shown)
      html +=
          "<table><tr><th>#</th><th>a</th><th>b</th><th>similarity</th><th>of a in b</th><th>of b in a</th>"
          "<th>matching tokens</th><th></th></tr>\n" +
          rows + "</table>\n";
  }
  return html + "</body></html>\n";
}

nlohmann::json pairs_json(const SimilarityReport& report, const SimilarityOptions& o) {
  nlohmann::json pairs = nlohmann::json::array();
  for (const auto& p : report.pairs) {
    nlohmann::json runs = nlohmann::json::array();
    for (const auto& r : p.runs)
      runs.push_back({{"file", r.file},
                      {"tokens", r.tokens},
                      {"a_lines", {r.a_first, r.a_last}},
                      {"b_lines", {r.b_first, r.b_last}}});
    pairs.push_back({{"lab", p.lab},
                     {"backend", p.backend},
                     {"a", p.a},
                     {"b", p.b},
                     {"similarity", p.similarity()},
                     {"percent_a", p.percent_a},
                     {"percent_b", p.percent_b},
                     {"tokens", p.tokens},
                     {"tokens_a", p.tokens_a},
                     {"tokens_b", p.tokens_b},
                     {"page", p.page},
                     {"runs", runs}});
  }
  return {{"tool", o.tool},
          {"min_run_tokens", o.min_run_tokens},
          {"min_percent", o.min_percent},
          {"notes", report.notes},
          {"pairs", pairs}};
}

}  // namespace

std::string without_skeleton(const std::string& student, const std::string& skeleton) {
  std::set<std::string> skeleton_lines;
  for (const auto& line : split_lines(blank_comments(skeleton, Literals::keep)))
    if (auto key = line_key(line); !key.empty()) skeleton_lines.insert(key);
  std::string out;
  for (const auto& line : split_lines(blank_comments(student, Literals::keep)))
    out += (skeleton_lines.count(line_key(line)) ? std::string() : line) + "\n";
  return out;
}

SimOutput parse_sim_output(const std::string& text) {
  static const std::regex file_line(R"(^File (\S+): (\d+) tokens, \d+ lines)");
  static const std::regex run_line(R"(^(\S+): line (\d+)-(\d+)\s*\|(\S+): line (\d+)-(\d+)\s*\[(\d+)\])");
  SimOutput out;
  std::smatch m;
  for (const auto& line : split_lines(text)) {
    if (std::regex_search(line, m, file_line)) {
      out.tokens[m[1]] = std::stoi(m[2]);
    } else if (std::regex_search(line, m, run_line)) {
      out.runs.push_back(
          {m[1], m[4], std::stoi(m[7]), std::stoi(m[2]), std::stoi(m[3]), std::stoi(m[5]), std::stoi(m[6])});
    }
  }
  return out;
}

SimilarityReport write_similarity_report(const SimilarityOptions& options) {
  const std::string tool = required_tool(options.tool);
  check_backends(options);
  const ScratchFolder scratch("gpulab-similarity");
  SimilarityReport report;
  const std::vector<Group> groups = collect_groups(options, scratch.path(), report.notes);
  for (const auto& group : groups) {
    if (group.students.size() < 2) {
      report.notes.push_back(fmt::format("{} ({}): {} student(s) handed in its files; nothing to compare",
                                         group.lab->id, group.backend, group.students.size()));
      continue;
    }
    for (auto& pair : compare_group(group, tool, scratch.path(), options.min_run_tokens))
      if (pair.similarity() >= options.min_percent) report.pairs.push_back(std::move(pair));
  }
  std::stable_sort(report.pairs.begin(), report.pairs.end(), [](const SimilarPair& x, const SimilarPair& y) {
    return x.similarity() != y.similarity() ? x.similarity() > y.similarity() : x.tokens > y.tokens;
  });
  const fs::path dir = options.out / "similarity";
  std::set<std::string> used;
  std::map<std::string, int> pages;  // per lab and backend
  for (auto& pair : report.pairs) {
    if (++pages[group_folder(pair)] > options.max_pages) continue;
    pair.page = page_name(pair, used);
    const auto group = std::find_if(groups.begin(), groups.end(),
                                    [&](const Group& g) { return g.lab->id == pair.lab && g.backend == pair.backend; });
    fs::create_directories((dir / pair.page).parent_path());
    write_text_atomically(pair_page(*group, pair, options.min_run_tokens), dir / pair.page);
  }
  write_text_atomically(index_page(groups, report, options), dir / "index.html");
  write_text_atomically(pairs_json(report, options).dump(2) + "\n", dir / "pairs.json");
  return report;
}

int run_similarity(const SimilarityOptions& options) {
  const SimilarityReport report = write_similarity_report(options);
  for (const auto& note : report.notes) fmt::print(stderr, "gpulab similarity: {}\n", note);
  std::fflush(stderr);
  if (!options.quiet) {
    // The top five of each lab and backend, in the labs' order (the pairs are ranked across all of them).
    std::vector<SimilarPair> by_group = report.pairs;
    std::stable_sort(by_group.begin(), by_group.end(),
                     [](const SimilarPair& x, const SimilarPair& y) { return group_folder(x) < group_folder(y); });
    std::map<std::string, int> shown;
    for (const auto& p : by_group)
      if (++shown[group_folder(p)] <= 5)
        fmt::print("  {} ({}): {} and {}: {:.0f}% ({:.0f}% / {:.0f}%, {} tokens)\n", p.lab, p.backend, p.a, p.b,
                   p.similarity(), p.percent_a, p.percent_b, p.tokens);
  }
  fmt::print("gpulab similarity: {} pairs at or above {}%; report: {}\n", report.pairs.size(), options.min_percent,
             (options.out / "similarity" / "index.html").string());
  return 0;
}

}  // namespace gpulab::cli
