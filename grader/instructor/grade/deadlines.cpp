#include "deadlines.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <regex>
#include <stdexcept>
#include <vector>

#include "csv.hpp"
#include "gpulab/text.hpp"

namespace gpulab::cli {

namespace fs = std::filesystem;

std::time_t parse_iso_time(const std::string& text) {
  // Date, T or a space, hours and minutes, optional seconds, then Z or an offset (+01:00, +0100).
  static const std::regex iso(
      R"(^\s*(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?\s*(Z|[+-]\d{2}:?\d{2})\s*$)");
  std::smatch m;
  if (!std::regex_match(text, m, iso))
    throw std::invalid_argument(fmt::format(
        "'{}' is not a time with a time zone: write it as 2026-12-01T23:59:00+01:00 (or ...Z for UTC)", text));
  std::tm tm{};
  tm.tm_year = std::stoi(m[1]) - 1900;
  tm.tm_mon = std::stoi(m[2]) - 1;
  tm.tm_mday = std::stoi(m[3]);
  tm.tm_hour = std::stoi(m[4]);
  tm.tm_min = std::stoi(m[5]);
  tm.tm_sec = m[6].matched ? std::stoi(m[6]) : 0;
  if (tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60)
    throw std::invalid_argument(fmt::format("'{}' is not a valid date and time", text));
  const std::tm asked = tm;
  std::time_t t = timegm(&tm);
  if (tm.tm_mday != asked.tm_mday || tm.tm_mon != asked.tm_mon)  // 2026-02-30 would become March 2
    throw std::invalid_argument(fmt::format("'{}' is not a date of the calendar", text));
  const std::string zone = m[7];
  if (zone != "Z") {
    const std::string digits = zone.substr(1, 2) + (zone.size() == 6 ? zone.substr(4, 2) : zone.substr(3, 2));
    const int offset = (std::stoi(digits.substr(0, 2)) * 60 + std::stoi(digits.substr(2, 2))) * 60;
    t -= zone[0] == '+' ? offset : -offset;
  }
  return t;
}

std::string iso_time(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

namespace {

const std::vector<std::string> kColumns{"student",         "due",           "grace_hours",
                                        "penalty_per_day", "max_late_days", "submitted"};

// One row's fields into a policy; `where` names the file and line for the messages.
DuePolicy policy_of(const std::map<std::string, std::string>& row, const std::string& where) {
  DuePolicy p;
  const auto field = [&](const std::string& column) {
    const auto it = row.find(column);
    return it == row.end() ? std::string() : it->second;
  };
  const auto number = [&](const std::string& column) -> std::optional<double> {
    const std::string text = field(column);
    if (text.empty()) return std::nullopt;
    if (const auto v = parse_double(text); v && *v >= 0) return v;
    throw std::runtime_error(fmt::format("{}: {} '{}' must be a number, 0 or more", where, column, text));
  };
  const auto time = [&](const std::string& column) -> std::optional<std::time_t> {
    if (field(column).empty()) return std::nullopt;
    try {
      return parse_iso_time(field(column));
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(fmt::format("{}: {}: {}", where, column, e.what()));
    }
  };
  p.due = time("due");
  p.submitted = time("submitted");
  p.grace_hours = number("grace_hours");
  p.penalty_per_day = number("penalty_per_day");
  if (const auto days = number("max_late_days")) {
    if (*days != std::floor(*days))
      throw std::runtime_error(fmt::format("{}: max_late_days '{}' must be a whole number of days", where, *days));
    p.max_late_days = static_cast<int>(*days);
  }
  return p;
}

}  // namespace

Deadlines read_deadlines(const fs::path& path) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error(fmt::format("{}: cannot be read (DEADLINES= names the due-date CSV)", path.string()));
  std::string line;
  std::vector<std::string> header;
  while (header.empty() && std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) {
      if (line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // the byte order mark spreadsheets write
      header = csv_fields(line);
    }
  for (const auto& column : header)
    if (std::find(kColumns.begin(), kColumns.end(), column) == kColumns.end())
      throw std::runtime_error(fmt::format("{}:1: unknown column '{}': the columns are {}", path.string(), column,
                                           fmt::join(kColumns, ", ")));
  if (std::find(header.begin(), header.end(), "student") == header.end())
    throw std::runtime_error(fmt::format("{}:1: the first line must name the columns, at least student and due: {}",
                                         path.string(), fmt::join(kColumns, ",")));
  Deadlines d;
  for (int number = 2; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto fields = csv_fields(line);
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
    const std::string where = fmt::format("{}:{}", path.string(), number);
    if (row["student"].empty()) throw std::runtime_error(where + ": the student column is empty (use * for everyone)");
    (row["student"] == "*" ? d.everyone : d.students[row["student"]]) = policy_of(row, where);
  }
  return d;
}

std::optional<Lateness> lateness_of(const Deadlines& d, const std::string& student, const SubmissionTime& handed_in) {
  const auto own = d.students.find(student);
  const DuePolicy none;
  const DuePolicy& p = own == d.students.end() ? none : own->second;
  const auto due = p.due ? p.due : d.everyone.due;
  if (!due) return std::nullopt;
  Lateness l;
  l.due = *due;
  l.submitted_from = p.submitted ? "" : handed_in.source;
  l.submitted = p.submitted.value_or(handed_in.time);
  const double grace_s = 3600 * p.grace_hours.value_or(d.everyone.grace_hours.value_or(0));
  const double late_s = std::difftime(l.submitted, l.due) - grace_s;
  if (late_s <= 0) return l;
  l.late_days = static_cast<int>(std::ceil(late_s / 86400));
  const auto max_days = p.max_late_days ? p.max_late_days : d.everyone.max_late_days;
  const double per_day = p.penalty_per_day.value_or(d.everyone.penalty_per_day.value_or(0)) / 100;
  l.penalty = max_days && l.late_days > *max_days ? 1.0 : std::min(1.0, l.late_days * per_day);
  return l;
}

SubmissionTime submission_time(const fs::path& submission) {
  // Never a submission's own .git: running git there would obey the student's config, and its commit
  // dates are the student's to write.
  // A folder with no file has no file time: its own time stands for it (not the epoch), and says so.
  std::error_code ec;
  if (fs::is_directory(submission, ec) && newest_file_time(submission) == 0)
    return {std::chrono::system_clock::to_time_t(std::chrono::file_clock::to_sys(fs::last_write_time(submission))),
            "folder time, no files"};
  return {newest_file_time(submission), "file time"};
}

std::time_t newest_file_time(const fs::path& submission) {
  const auto seconds = [](fs::file_time_type t) {
    return std::chrono::system_clock::to_time_t(std::chrono::file_clock::to_sys(t));
  };
  std::error_code ec;
  if (!fs::is_directory(submission, ec)) return seconds(fs::last_write_time(submission));
  std::time_t newest = 0;
  for (const auto& e : fs::recursive_directory_iterator(submission, ec))
    if (e.is_regular_file(ec)) newest = std::max(newest, seconds(e.last_write_time(ec)));
  return newest;
}

}  // namespace gpulab::cli
