#include "pages.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <ctime>
#include <map>

#include "csv.hpp"
#include "gpulab/text.hpp"
#include "sha256.hpp"

namespace gpulab::server {

namespace {

std::string escaped(const std::string& text) { return html_escape(text); }

std::string when(std::optional<double> t) {
  if (!t) return "-";
  const auto seconds = static_cast<std::time_t>(*t);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02} UTC", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec);
}

std::string page(const std::string& title, const std::string& body) {
  return fmt::format(R"(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{0} · gpulab</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; padding: 0 1em; }}
table {{ border-collapse: collapse; margin: 1em 0; }}
th, td {{ border-bottom: 1px solid #ccc; padding: 0.3em 0.8em; text-align: left; }}
pre {{ background: #f6f6f6; padding: 1em; overflow-x: auto; }}
.graded-passed {{ color: #176117; }} .graded-failed, .not_gradable {{ color: #a11; }}
</style></head>
<body><h1>{0}</h1>
{1}
</body></html>
)",
                     escaped(title), body);
}

std::string state_cell(const Submission& s, const std::optional<Grading>& g) {
  if (s.state == "graded" && g)
    return fmt::format(R"(<td class="graded-{}">{:g} / {:g}{}</td>)", g->passed ? "passed" : "failed", g->score,
                       g->max_score, g->passed ? "" : " (not passed)");
  return fmt::format(R"(<td class="{0}">{0}</td>)", escaped(s.state));
}

std::string submission_rows(const std::vector<Submission>& subs, const std::vector<std::optional<Grading>>& gs,
                            bool staff) {
  std::string rows;
  for (std::size_t i = 0; i < subs.size(); ++i) {
    const Submission& s = subs[i];
    rows += fmt::format(R"(<tr><td><a href="/submissions/{0}">{0}</a></td>{1}<td>{2}</td><td>{3}</td>)", s.id,
                        staff ? "<td>" + escaped(s.student) + "</td>" : "", escaped(s.lab), when(s.submitted_at));
    if (staff)
      rows += fmt::format("<td>{}</td><td>{}</td><td>{}</td>", when(s.started_at), when(s.finished_at), s.attempts);
    rows += state_cell(s, gs[i]) + "<td>" + escaped(s.message) + "</td></tr>\n";
  }
  return rows;
}

// The student's scores per lab over their submissions, one small SVG line chart per lab.
std::string history_svg(const std::vector<Submission>& subs, const std::vector<std::optional<Grading>>& gs) {
  std::map<std::string, std::vector<double>> fractions;  // lab -> score / max, in submission order
  for (std::size_t i = 0; i < subs.size(); ++i)
    if (gs[i] && gs[i]->max_score > 0) fractions[subs[i].lab].push_back(gs[i]->score / gs[i]->max_score);
  std::string out;
  for (const auto& [lab, f] : fractions) {
    constexpr double kWidth = 360, kHeight = 90, kPad = 8;
    const double step = f.size() > 1 ? (kWidth - 2 * kPad) / static_cast<double>(f.size() - 1) : 0;
    std::string points, dots;
    for (std::size_t i = 0; i < f.size(); ++i) {
      const double x = kPad + step * static_cast<double>(i), y = kHeight - kPad - f[i] * (kHeight - 2 * kPad);
      points += fmt::format("{:.1f},{:.1f} ", x, y);
      dots += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="3"><title>{:.0f}%</title></circle>)", x, y, 100 * f[i]);
    }
    out += fmt::format(
        R"(<figure class="history"><figcaption>{} · {} graded, last {:.0f}%</figcaption><svg role="img" width="{}" )"
        R"(height="{}" viewBox="0 0 {} {}"><rect width="100%" height="100%" fill="#f6f6f6"/><polyline points="{}" )"
        R"(fill="none" stroke="#176117" stroke-width="2"/><g fill="#176117">{}</g></svg></figure>)",
        escaped(lab), f.size(), 100 * f.back(), kWidth, kHeight, kWidth, kHeight, points, dots);
  }
  return out.empty() ? "" : "<h2>Your scores over time</h2>" + out;
}

std::string leaderboard_html(bool on, const std::vector<LeaderboardEntry>& board) {
  std::string out = fmt::format(
      R"(<h2>Class leaderboard</h2><form method="post" action="/leaderboard"><input type="hidden" name="join" )"
      R"(value="{}"><button>{}</button> {}</form>)",
      on ? 0 : 1, on ? "Leave the leaderboard" : "Join the leaderboard",
      on ? "Your best results are shown under a pseudonym."
         : "Optional: it shows your best results under a pseudonym.");
  if (board.empty()) return out + "<p>Nobody on it has a timed task passed yet.</p>";
  out += "<table><tr><th>lab</th><th>task</th><th>#</th><th>who</th><th>result</th></tr>";
  std::map<std::pair<std::string, std::string>, int> rank;
  for (const auto& e : board)
    out += fmt::format("<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                       e.you ? " class=\"graded-passed\"" : "", escaped(e.lab), escaped(e.task),
                       ++rank[{e.lab, e.task}], escaped(e.pseudonym) + (e.you ? " (you)" : ""),
                       e.unit == "%" ? fmt::format("{:.1f}%", 100 * e.ratio) : fmt::format("{:.2f}×", e.ratio));
  return out + "</table>";
}

}  // namespace

std::vector<LeaderboardEntry> leaderboard_of(
    const std::vector<std::tuple<std::string, std::string, std::string>>& gradings, const std::string& viewer,
    const std::string& secret) {
  std::map<std::tuple<std::string, std::string, std::string>, LeaderboardEntry> best;  // lab, task, student
  for (const auto& [student, lab, text] : gradings) {
    const auto r = nlohmann::json::parse(text, nullptr, false);
    if (!r.is_object()) continue;
    for (const auto& l : r.value("labs", nlohmann::json::array()))
      for (const auto& t : l.value("tasks", nlohmann::json::array())) {
        if (t.value("status", "") != "passed" || t.contains("finding") || !t.contains("ratio")) continue;
        LeaderboardEntry e{lab,
                           t.value("task", ""),
                           "",
                           t.value("metric_unit", "×"),
                           t.value("rate", 0.0),
                           t.value("ratio", 0.0),
                           student == viewer};
        e.pseudonym = "anon-" + cli::Sha256().update(secret).update(student).hex().substr(0, 6);
        auto& kept = best[{lab, e.task, student}];
        if (e.ratio > kept.ratio) kept = e;
      }
  }
  std::vector<LeaderboardEntry> out;
  for (const auto& [key, e] : best) out.push_back(e);
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::tie(a.lab, a.task) != std::tie(b.lab, b.task) ? std::tie(a.lab, a.task) < std::tie(b.lab, b.task)
                                                              : a.ratio > b.ratio;
  });
  return out;
}

std::string login_page(const std::string& error) {
  return page("Course server",
              fmt::format(R"({}<form method="post" action="/login">
<label>Your token (from the course staff): <input type="password" name="token" size="70" autofocus></label>
<button type="submit">Sign in</button></form>
<p>Submit from your clone with <code>make submit LAB=x</code>; this page shows what you submitted.</p>)",
                          error.empty() ? "" : "<p class=\"not_gradable\">" + escaped(error) + "</p>"));
}

std::string student_page(const std::string& student, const std::vector<Submission>& subs,
                         const std::vector<std::optional<Grading>>& gs, bool on_leaderboard,
                         const std::vector<LeaderboardEntry>& leaderboard) {
  std::string body = fmt::format("<p>Signed in as <b>{}</b>. <a href=\"/logout\">Sign out</a></p>", escaped(student));
  if (subs.empty())
    return page("Your submissions", body + "<p>Nothing submitted yet: <code>make submit LAB=x</code>.</p>" +
                                        leaderboard_html(on_leaderboard, leaderboard));
  body += "<table><tr><th>#</th><th>lab</th><th>submitted</th><th>result</th><th>note</th></tr>\n" +
          submission_rows(subs, gs, false) + "</table>";
  return page("Your submissions", body + history_svg(subs, gs) + leaderboard_html(on_leaderboard, leaderboard));
}

std::string report_page(const Submission& s, const std::optional<Grading>& g, bool staff) {
  std::string body = fmt::format("<p><a href=\"/\">All submissions</a></p><p>{} · {} · submitted {} · {}</p>",
                                 escaped(s.student), escaped(s.lab), when(s.submitted_at), escaped(s.state));
  if (!s.message.empty()) body += "<p>" + escaped(s.message) + "</p>";
  if (g) body += fmt::format("<p>graded {}</p><pre>{}</pre>", when(g->graded_at), escaped(g->report));
  if (staff && (s.state == "graded" || s.state == "not_gradable"))
    body += fmt::format(R"(<form method="post" action="/submissions/{}/regrade"><button>Regrade</button> (a new
grading is added; the earlier ones stay)</form>)",
                        s.id);
  return page(fmt::format("Submission {}", s.id), body);
}

std::string staff_page(const std::vector<Submission>& subs, const std::vector<std::optional<Grading>>& gs,
                       int workers) {
  int queued = 0, running = 0;
  for (const auto& s : subs) queued += s.state == "queued", running += s.state == "running";
  // The class by lab: each student's newest graded submission.
  std::map<std::string, std::map<std::string, std::string>> by_lab;  // lab -> student -> cell
  for (std::size_t i = subs.size(); i-- > 0;)
    if (gs[i]) by_lab[subs[i].lab][subs[i].student] = state_cell(subs[i], gs[i]);
  std::string classes;
  for (const auto& [lab, students] : by_lab) {
    classes += fmt::format("<h3>{}</h3><table><tr><th>student</th><th>newest result</th></tr>", escaped(lab));
    for (const auto& [student, cell] : students) classes += "<tr><td>" + escaped(student) + "</td>" + cell + "</tr>";
    classes += "</table>\n";
  }
  const std::string body = fmt::format(
      R"(<p>Course staff. <a href="/gradebook.csv">Gradebook (CSV)</a> · <a href="/logout">Sign out</a></p>
<h2>Queue</h2><p>{} waiting, {} being graded, {} worker{}.</p>
<table><tr><th>#</th><th>student</th><th>lab</th><th>queued</th><th>started</th><th>finished</th><th>attempts</th><th>result</th><th>note</th></tr>
{}</table>
<h2>The class by lab</h2>
{})",
      queued, running, workers, workers == 1 ? "" : "s", submission_rows(subs, gs, true), classes);
  return page("Course server", body);
}

std::string gradebook_csv(const std::vector<Submission>& subs, const std::vector<std::optional<Grading>>& gs) {
  std::map<std::pair<std::string, std::string>, std::size_t> newest;
  for (std::size_t i = 0; i < subs.size(); ++i)
    if (gs[i]) {
      const auto key = std::make_pair(subs[i].student, subs[i].lab);
      if (!newest.count(key) || subs[newest[key]].id < subs[i].id) newest[key] = i;
    }
  std::string csv = "student,lab,score,max_score,status,error,passed,submission,graded_at\n";
  for (const auto& [key, i] : newest)
    csv +=
        fmt::format("{},{},{:g},{:g},graded,,{},{},{}\n", cli::csv_cell(key.first), cli::csv_cell(key.second),
                    gs[i]->score, gs[i]->max_score, gs[i]->passed ? "yes" : "no", subs[i].id, when(gs[i]->graded_at));
  return csv;
}

}  // namespace gpulab::server
