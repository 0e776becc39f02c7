#include "report.hpp"

#include <fmt/color.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "files.hpp"
#include "gpulab/host_watch.hpp"
#include "gpulab/metrics.hpp"
#include "gpulab/telemetry.hpp"

namespace gpulab::cli {

double RunSummary::points() const {
  double p = 0;
  for (const auto& lab : labs) p += lab.points();
  return p;
}
double RunSummary::max_points() const {
  double p = 0;
  for (const auto& lab : labs) p += lab.max_points();
  return p;
}
int RunSummary::tasks_passed() const {
  int n = 0;
  for (const auto& lab : labs)
    for (const auto& t : lab.tasks) n += t.status == Status::passed;
  return n;
}
int RunSummary::tasks_total() const {
  int n = 0;
  for (const auto& lab : labs) n += static_cast<int>(lab.tasks.size());
  return n;
}
bool RunSummary::all_passed() const {
  if (tasks_total() == 0) return false;  // a run that ran nothing proves nothing
  for (const auto& lab : labs)
    for (const auto& t : lab.tasks)
      if (!t.bonus && t.status != Status::passed) return false;
  return true;
}

nlohmann::json to_json(const RunSummary& run) {
  return {{"source", run.source},
          {"backend", run.backend},
          {"seed", run.seed},
          {"labs", run.labs},
          {"points", run.points()},
          {"max_points", run.max_points()},
          {"tasks_passed", run.tasks_passed()},
          {"tasks_total", run.tasks_total()},
          {"passed", run.all_passed()}};
}

void from_json(const nlohmann::json& j, RunSummary& run) {
  run.source = j.value("source", "");
  run.backend = j.value("backend", "");
  run.seed = j.value("seed", std::uint64_t{0});
  run.labs = j.value("labs", std::vector<LabRun>{});
}

void write_json_atomically(const nlohmann::json& data, const std::filesystem::path& path) {
  write_text_atomically(data.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", path);
}

namespace {

class Painter {
 public:
  explicit Painter(bool color) : color_(color) {}
  std::string operator()(const std::string& text, fmt::text_style style) const {
    return color_ ? fmt::format(style, "{}", text) : text;
  }

 private:
  bool color_;
};

fmt::text_style style_of(Status s) {
  switch (s) {
    case Status::passed: return fg(fmt::terminal_color::green);
    case Status::not_implemented:
    case Status::not_run: return fg(fmt::terminal_color::yellow);
    default: return fg(fmt::terminal_color::red);
  }
}

std::string indent(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) out += prefix + line + "\n";
  return out;
}

// The tasks of a lab run on a CPU device whose speed bound is for GPUs only: their speed is shown,
// not graded (a CPU device cannot grade GPU optimisations, and a loaded one is noise).
std::vector<std::string> ungraded_speed(const LabRun& lab) {
  std::vector<std::string> tasks;
  if (!lab.device.is_object() || lab.device.value("class", "") != "cpu") return tasks;
  for (const auto& t : lab.tasks)
    if (!t.metric.empty() && !t.threshold) tasks.push_back(t.task);
  return tasks;
}

// ", device copy 2926 GB/s, cuBLAS SGEMM 51200 GFLOP/s, naive kernel 5300 GFLOP/s"; with a warning
// when the CPU figures contradict each other (all cores slower than one: other work took the cores).
std::string describe_calibration(const Calibration& cal) {
  std::string out;
  for (const auto& key : calibration_keys())
    if (auto it = cal.rates.find(key); it != cal.rates.end())
      out += fmt::format(", {} {} {}", calibration_label(key, cal), format_rate(it->second), cal.unit);
  const auto one = cal.rates.find("cpu_1core"), all = cal.rates.find("cpu_all_cores");
  if (one != cal.rates.end() && all != cal.rates.end() && all->second < one->second)
    out += " (all cores slower than one: the machine was busy, so the CPU figures are unreliable)";
  return out;
}

// "measured now", "cached, measured 25 s ago", "cached, measured 3 min ago", "measured once for the
// batch 2 h ago": how fresh the calibration is and whether this run measured it, so a reader knows
// what the ratios divide by.
std::string describe_measured(const Calibration& cal, double now) {
  if (!cal.measured_at) return {};
  const double age = std::max(0.0, now - *cal.measured_at);
  const std::string when = age >= 3600          ? fmt::format("{:.1f} h ago", age / 3600)
                           : age >= 60          ? fmt::format("{:.0f} min ago", std::floor(age / 60))
                           : cal.origin.empty() ? "now"
                                                : fmt::format("{:.0f} s ago", std::floor(age));
  const std::string by = cal.origin == "cache"   ? "cached, measured "
                         : cal.origin == "batch" ? "measured once for the batch "
                                                 : "measured ";
  return ", " + by + when;
}

std::string number(double v) {
  return v == static_cast<long long>(v) ? fmt::format("{}", static_cast<long long>(v)) : fmt::format("{:.1f}", v);
}

// One task's row of a lab's table: cases, time, rate, every ratio, the bound, the result and points.
std::string task_row(const TaskResult& t, const std::vector<const Metric*>& columns, const Painter& paint) {
  const std::string cases = t.cases_total ? fmt::format("{}/{}", t.cases_passed, t.cases_total) : "—";
  const std::string time = t.time_ms ? fmt::format("{:.3f} ms", *t.time_ms) : "—";
  const std::string rate = !t.rate        ? "—"
                           : *t.rate < 10 ? fmt::format("{:.3f}", *t.rate)
                                          : fmt::format("{:.1f}", *t.rate);
  std::string row =
      fmt::format("  {:<16} {:>7} {:>11} {:>9}", t.bonus ? t.task + " (bonus)" : t.task, cases, time, rate);
  for (const Metric* m : columns) {
    auto it = t.ratios.find(m->name);
    row += fmt::format(" {:>9}", it == t.ratios.end() ? "—" : format_ratio(*m, it->second));
  }
  const Metric* bound = find_metric(t.metric);
  const std::string needs = t.threshold && bound ? "≥" + format_ratio(*bound, *t.threshold) : "—";
  const std::string mark = t.status == Status::passed ? (t.borderline ? "✔~" : "✔ ") : (t.borderline ? "✘~" : "✘ ");
  // Pad before painting: escape codes would upset the column widths.
  const std::string result = paint(fmt::format("{:<16}", mark + describe(t.status)), style_of(t.status));
  row += fmt::format(" {:>9}  {} {:>7}\n", needs, result, number(t.points) + "/" + number(t.max_points));
  if (t.tier_threshold && bound) {
    const std::string at = "≥" + format_ratio(*bound, *t.tier_threshold);
    const std::string reached = !t.ratio                     ? "not measured"
                                : t.status != Status::passed ? "the task must pass first"
                                : tier_reached(t)            ? "reached"
                                                             : "not reached";
    row += fmt::format("  {:<16} bonus tier: +{} at {} — {}\n", "", number(t.tier_points), at, reached);
  }
  return row;
}

// What went wrong in a failed task: its message (marked when a hidden case failed) and what the
// details add to it.
std::string task_problem(const TaskResult& t, const Painter& paint) {
  std::string out = paint(fmt::format("  ✘ {} ({}): ", t.task, t.function), style_of(t.status)) +
                    (t.failed_in_hidden_case ? "(hidden case) " : "") + t.message + "\n";
  // Details often repeat the message as their first line: print only what they add.
  std::string details = t.details;
  if (details.rfind(t.message, 0) == 0) details.erase(0, t.message.size());
  while (!details.empty() && details.front() == '\n') details.erase(0, 1);
  return details.empty() ? out : out + indent(details, "      ");
}

// The profiler's counters under a lab's table (`gpulab check --profile`, profiler.hpp).
std::string profile_section(const std::vector<TaskProfile>& profile, const Painter& paint) {
  if (profile.empty()) return {};
  std::string out = "\n  profile (Nsight Compute; one launch of the timing case; for information, not graded):\n";
  for (const auto& t : profile) {
    out += fmt::format("    {}{}\n", t.task, t.case_name.empty() ? "" : fmt::format(" · case {}", t.case_name));
    for (const auto& k : t.kernels) {
      out += fmt::format("      {} · {} launch{}, {:.3f} ms\n", paint(k.kernel, fmt::emphasis::bold), k.launches,
                         k.launches == 1 ? "" : "es", k.time_ms);
      for (const auto& c : k.counters) {
        out += fmt::format("        {:<16} {}\n", c.label, c.value);
        out += "        " + std::string(17, ' ') +
               (c.concern ? paint("! " + c.reading, fg(fmt::terminal_color::yellow)) : c.reading) + "\n";
      }
    }
    if (!t.note.empty()) out += fmt::format("      {}\n", t.note);
  }
  return out;
}

// "GPU at start: SM 1755 of 1980 MHz · memory 2619 of 2619 MHz · 34 °C · 71 of 700 W · clock limits: idle".
std::string describe_gpu_state(const GpuState& s) {
  auto of = [](double now, double max, const char* unit) {
    return max > 0 ? fmt::format("{:.0f} of {:.0f} {}", now, max, unit) : fmt::format("{:.0f} {}", now, unit);
  };
  const auto reasons = reason_names(s.now.reasons);
  return fmt::format("GPU at start: SM {} · memory {} · {:.0f} °C · {} · clock limits: {}",
                     of(s.now.sm_mhz, s.max_sm_mhz, "MHz"), of(s.now.memory_mhz, s.max_memory_mhz, "MHz"),
                     s.now.temperature_c, of(s.now.power_w, s.power_limit_w, "W"),
                     reasons.empty() ? "none" : fmt::format("{}", fmt::join(reasons, ", ")));
}

// The header's lines under the device (the runner's "device" event): whether its kernels reach the
// runner's host memory, and the GPU's state at the start or why telemetry is unavailable.
std::string device_state(const nlohmann::json& device) {
  std::string out;
  if (const std::string access = device.value("host_memory_access", ""); !access.empty())
    out += fmt::format("host memory: kernels reach it ({}): {}\n", access, kHostMemoryNote);
  std::optional<GpuState> state;
  try {  // the runner's events are written next to student code: a malformed one is left out
    if (device.contains("gpu_state")) state = device["gpu_state"].get<GpuState>();
  } catch (const nlohmann::json::exception&) {}
  if (state)
    out += describe_gpu_state(*state) + "\n";
  else if (device.value("class", "") == "gpu" && device.contains("telemetry"))
    out += fmt::format("GPU telemetry: {} (timings were not checked for throttling)\n", device.value("telemetry", ""));
  return out;
}

// One line per task whose timing was measured again because the GPU throttled, saying which run counted.
std::string throttled_timings(const RunSummary& run) {
  std::string out;
  for (const auto& lab : run.labs)
    for (const auto& t : lab.tasks)
      if (t.telemetry && t.telemetry->remeasured())
        out += fmt::format("throttling: {} {}: {}\n", lab.id, t.task, describe_remeasure(*t.telemetry));
  return out;
}

}  // namespace

std::string render_warnings(const std::vector<std::string>& warnings, bool color) {
  if (warnings.empty()) return {};
  std::string out = "\n";
  for (const auto& w : warnings) out += Painter(color)("  warning: " + w, fg(fmt::terminal_color::yellow)) + "\n";
  return out;
}

std::string render_report(const RunSummary& run, bool color) {
  const Painter paint(color);
  const auto bold = fmt::emphasis::bold;
  std::string out;
  out += paint(fmt::format("gpulab check: {}", run.source), bold) +
         fmt::format(" · seed {} (SEED={} reproduces this run)\n", run.seed, run.seed);
  for (const auto& lab : run.labs)
    if (!lab.device.is_null()) {
      const std::string bus = lab.device.value("bus_id", "");
      out += fmt::format("device: {} · {} · {}{}\n", lab.device.value("name", "?"), lab.device.value("platform", "?"),
                         lab.device.value("details", ""), bus.empty() ? "" : " · PCI " + bus);
      out += device_state(lab.device);
      break;
    }
  out += throttled_timings(run);

  for (const auto& lab : run.labs) {
    out += "\n" + paint(fmt::format("{} · {}", lab.id, lab.title), bold);
    const Calibration& cal = lab.calibration;
    out +=
        fmt::format("  [{}{}{}]\n", lab.backend, describe_calibration(cal), describe_measured(cal, unix_seconds_now()));
    if (!lab.reused.empty()) out += paint("  " + lab.reused, fg(fmt::terminal_color::cyan)) + "\n";
    // A column for every ratio this run could compute.
    std::vector<const Metric*> columns;
    for (const auto& m : metrics())
      if (cal.rates.count(m.calibration)) columns.push_back(&m);
    out += fmt::format("  {:<16} {:>7} {:>11} {:>9}", "task", "cases", "time", cal.unit);
    for (const Metric* m : columns) out += fmt::format(" {:>9}", column_label(*m, cal));
    out += fmt::format(" {:>9}  {:<16} {:>7}\n", "needs", "result", "points");
    std::string problems;
    for (const auto& t : lab.tasks) {
      out += task_row(t, columns, paint);
      if (t.status != Status::passed) problems += task_problem(t, paint);
    }
    if (!problems.empty()) out += "\n" + problems;
    out += render_warnings(lab.warnings, color);
    out += profile_section(lab.profile, paint);
    if (std::any_of(lab.tasks.begin(), lab.tasks.end(), [](const TaskResult& t) { return t.borderline; }))
      out +=
          "  ~ borderline: the ratio ended within 5% of its threshold after being measured again; a loaded "
          "machine can tip it either way\n";
    if (const auto tasks = ungraded_speed(lab); !tasks.empty())
      out += fmt::format(
          "  CPU device: the speed of {} is not graded here, the GPU grade decides; its figures are for "
          "information. A work-group's items run one after another here, so a race between them (a barrier "
          "left out, a plain += where an atomic belongs) cannot show either\n",
          fmt::join(tasks, ", "));
    if (!lab.pictures_dir.empty())
      out += fmt::format(
          "  pictures (yours, the reference, the difference where they differ, the input where there is one): {}/\n",
          lab.pictures_dir);
    if (!lab.output.empty()) {
      bool failed = false;
      for (const auto& t : lab.tasks) failed |= t.status != Status::passed;
      if (failed) out += "  what the program printed (last lines):\n" + indent(lab.output, "      | ");
    }
  }
  if (run.tasks_total() == 0)
    return out + "\n" +
           paint(fmt::format("NOTHING RAN: no selected lab has a task with files for {} (see LAB=, TASK= and the "
                             "labs' [files])",
                             run.backend),
                 bold | fg(fmt::terminal_color::red)) +
           "\n";
  const bool ok = run.all_passed();
  const double bonus = std::max(0.0, run.points() - run.max_points());
  out += "\n" +
         paint(fmt::format("{}: {} of {} tasks passed, {} of {} points{}", ok ? "PASSED" : "FAILED", run.tasks_passed(),
                           run.tasks_total(), number(run.points()), number(run.max_points()),
                           bonus > 0 ? " (bonus included)" : ""),
               bold | fg(ok ? fmt::terminal_color::green : fmt::terminal_color::red)) +
         "\n";
  return out;
}

std::string render_outcome(const RunSummary& run) {
  if (run.all_passed()) return "";
  if (run.tasks_total() == 0)
    return fmt::format("no task ran: no selected lab has a task with files for {} (see LAB=, TASK= and BACKEND=)",
                       run.backend);
  // Bonus tasks never fail a run, so only the others count; "required" says why the total can be
  // smaller than the report's.
  int required = 0, failed = 0;
  for (const auto& lab : run.labs)
    for (const auto& t : lab.tasks)
      if (!t.bonus) ++required, failed += t.status != Status::passed;
  return fmt::format("{} of {} {}task{} failed: the report above says which and why", failed, required,
                     required < run.tasks_total() ? "required " : "", required == 1 ? "" : "s");
}

}  // namespace gpulab::cli
