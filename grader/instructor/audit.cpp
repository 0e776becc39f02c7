#include "audit.hpp"

#include <fmt/color.h>
#include <fmt/format.h>
#include <toml++/toml.h>

#include <regex>
#include <shared_mutex>
#include <sstream>

#include "barrier_check.hpp"
#include "barrier_verdict.hpp"
#include "files.hpp"
#include "gpulab/device.hpp"
#include "gpulab/parallel.hpp"
#include "machine_lock.hpp"
#include "sanitizer.hpp"
#include "source_text.hpp"
#include "supervisor.hpp"

namespace gpulab::cli {

namespace fs = std::filesystem;

namespace {

int line_at(const std::string& text, std::size_t pos) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
}

// How many times `needle` occurs in `text` before `pos` (overlaps not counted): the 1-based
// occurrence of the one at `pos` is this plus one.
int occurrences_before(const std::string& text, const std::string& needle, std::size_t pos) {
  int n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos && at < pos;
       at = text.find(needle, at + needle.size()))
    ++n;
  return n;
}

// The position of the `occurrence`-th `from` (1-based; 0: the only one), or npos.
std::size_t position_of(const std::string& text, const std::string& from, int occurrence) {
  std::vector<std::size_t> at;
  for (std::size_t p = text.find(from); p != std::string::npos; p = text.find(from, p + from.size())) at.push_back(p);
  if (occurrence == 0) return at.size() == 1 ? at[0] : std::string::npos;
  return occurrence <= static_cast<int>(at.size()) ? at[static_cast<std::size_t>(occurrence - 1)] : std::string::npos;
}

Mutant make_mutant(const std::string& key, const std::string& file, const std::string& text, std::size_t pos,
                   const std::string& from, const std::string& to) {
  Mutant m;
  m.line = line_at(text, pos);
  m.name = fmt::format("{} (line {})", key, m.line);
  m.file = file;
  m.from = from;
  m.to = to;
  m.occurrence = occurrences_before(text, from, pos) + 1;
  return m;
}

// The closing parenthesis that matches the one at `open`, or npos.
std::size_t matching_paren(const std::string& text, std::size_t open) {
  int depth = 0;
  for (std::size_t i = open; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    if (text[i] == ')' && --depth == 0) return i;
  }
  return std::string::npos;
}

}  // namespace

std::vector<Mutant> generic_mutants(const std::string& file, const std::string& text) {
  std::vector<Mutant> out;
  // A match counts where it survives blanking: in code, not in a comment or a string.
  const std::string code = blank_comments(text, Literals::blank);
  auto in_code = [&](std::size_t pos, std::size_t size) { return code.compare(pos, size, text, pos, size) == 0; };
  static const std::regex barrier(R"(\b(__syncthreads|work_group_barrier|barrier)\s*\([^;]*\)\s*;)");
  int barriers = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), barrier); it != std::sregex_iterator(); ++it) {
    const auto pos = static_cast<std::size_t>(it->position());
    if (!in_code(pos, it->str().size())) continue;
    out.push_back(make_mutant(fmt::format("{}: no barrier {}", file, ++barriers), file, text, pos, it->str(),
                              "/* barrier removed */"));
  }
  static const std::regex if_open(R"(\bif\s*\()");
  int ifs = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), if_open); it != std::sregex_iterator(); ++it) {
    const auto pos = static_cast<std::size_t>(it->position());
    if (!in_code(pos, it->str().size())) continue;
    ++ifs;
    const auto close = matching_paren(text, pos + it->str().size() - 1);
    if (close == std::string::npos) continue;
    const std::string condition = text.substr(pos, close + 1 - pos);
    int less = 0;
    for (std::size_t at = condition.find(" < "); at != std::string::npos; at = condition.find(" < ", at + 3)) {
      std::string changed = condition;
      changed.replace(at, 3, " <= ");
      out.push_back(
          make_mutant(fmt::format("{}: if {} `<` {} to `<=`", file, ifs, ++less), file, text, pos, condition, changed));
    }
  }
  return out;
}

std::string apply_mutant(const Mutant& m, const std::string& text) {
  const auto pos = position_of(text, m.from, m.occurrence);
  if (pos == std::string::npos)
    throw std::invalid_argument(m.occurrence == 0
                                    ? fmt::format("'{}' does not occur exactly once in {}", m.from, m.file)
                                    : fmt::format("'{}' has no occurrence {} in {}", m.from, m.occurrence, m.file));
  std::string out = text;
  out.replace(pos, m.from.size(), m.to);
  return out;
}

namespace {

std::string string_field(const toml::table& t, const char* key, const fs::path& file, bool required) {
  if (auto v = t[key].value<std::string>()) return *v;
  if (required)
    throw std::invalid_argument(
        fmt::format("{}:{}: this entry needs {} = \"...\"", file.string(), t.source().begin.line, key));
  return {};
}

void check_needs(const std::string& needs, const toml::table& t, const fs::path& file) {
  if (!needs.empty() && needs != "timing" && needs != "gpu" && needs != "cpu" && needs != "sanitizer")
    throw std::invalid_argument(fmt::format("{}:{}: needs = \"{}\": use \"timing\", \"gpu\", \"cpu\" or \"sanitizer\"",
                                            file.string(), t.source().begin.line, needs));
}

}  // namespace

LabMutants load_lab_mutants(const fs::path& file) {
  LabMutants out;
  if (!fs::exists(file)) return out;
  toml::table root;
  try {
    root = toml::parse_file(file.string());
  } catch (const toml::parse_error& e) {
    throw std::invalid_argument(fmt::format("{}:{}: {}", file.string(), e.source().begin.line, e.description()));
  }
  if (const auto* list = root["mutant"].as_array())
    for (const auto& node : *list) {
      const auto* t = node.as_table();
      if (!t) continue;
      Mutant m;
      m.name = string_field(*t, "name", file, true);
      m.file = string_field(*t, "file", file, true);
      m.from = string_field(*t, "from", file, true);
      m.to = string_field(*t, "to", file, true);
      m.occurrence = static_cast<int>((*t)["occurrence"].value_or<std::int64_t>(0));
      m.equivalent = string_field(*t, "equivalent", file, false);
      m.needs = string_field(*t, "needs", file, false);
      m.why = string_field(*t, "why", file, false);
      check_needs(m.needs, *t, file);
      out.mutants.push_back(std::move(m));
    }
  if (const auto* list = root["expect"].as_array())
    for (const auto& node : *list) {
      const auto* t = node.as_table();
      if (!t) continue;
      Expectation e{string_field(*t, "mutant", file, true), string_field(*t, "equivalent", file, false),
                    string_field(*t, "needs", file, false), string_field(*t, "why", file, false)};
      check_needs(e.needs, *t, file);
      if (e.equivalent.empty() && e.needs.empty())
        throw std::invalid_argument(
            fmt::format("{}:{}: an [[expect]] entry says equivalent = \"why\" or needs = \"...\"", file.string(),
                        t->source().begin.line));
      out.expectations.push_back(std::move(e));
    }
  return out;
}

namespace {

// What the lab's mutants are run with: one source folder per job (build_lab rebuilds what changed).
struct AuditPlan {
  const Toolchain& tc;
  const Manifest& m;
  const AuditOptions& o;
  std::map<std::string, std::string> originals;  // student file -> the solution's text
  std::optional<SanitizerGate> gate;
  // Correctness runs share the device; a timed run has it alone (shared_mutex: readers, one writer).
  std::shared_mutex device_lock;
  std::string gpu_lock;  // and machine-wide, as for `gpulab check` (empty: a CPU device)
};

// "- old\n+ new" for the lines the replacement touches.
std::string diff_of(const Mutant& mutant, const std::string& original) {
  const auto pos = position_of(original, mutant.from, mutant.occurrence);
  if (pos == std::string::npos) return {};
  const auto start = original.rfind('\n', pos) == std::string::npos ? 0 : original.rfind('\n', pos) + 1;
  auto end = original.find('\n', pos + mutant.from.size());
  end = end == std::string::npos ? original.size() : end;
  std::string before = original.substr(start, end - start);
  std::string after = before;
  after.replace(pos - start, mutant.from.size(), mutant.to);
  auto prefixed = [](const std::string& text, const char* mark) {
    std::string out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out += fmt::format("{} {}\n", mark, line);
    return out;
  };
  return prefixed(before, "-") + prefixed(after, "+");
}

// The first failed task of a run, as the report says it; empty when every task passed.
std::string first_failure(const LabRun& run) {
  for (const auto& t : run.tasks)
    if (t.status != Status::passed)
      return fmt::format("{} ({}: {})", describe(t.status), t.task, t.message.substr(0, t.message.find('\n')));
  return {};
}

RunRequest request_for(AuditPlan& plan, const BuildResult& build, const fs::path& lab_src, const fs::path& work,
                       bool timing) {
  RunRequest req;
  req.runner = build.runner;
  req.manifest = &plan.m;
  req.student_dir = lab_src;
  req.backend = plan.o.backend;
  req.device = plan.o.device;
  req.seed = plan.o.seed;
  req.work_dir = work / "run";
  req.hidden_cases = timing;  // as in grading: the hidden cases too
  req.correctness_only = !timing;
  req.limits.wall_s = 900;
  return req;
}

// The timed run, alone on the device (and machine-wide, as `gpulab check` is).
std::string timed_failure(AuditPlan& plan, const RunRequest& req) {
  std::unique_lock alone(plan.device_lock);
  std::optional<MachineLock> machine;
  if (!plan.gpu_lock.empty()) machine = MachineLock::take(plan.gpu_lock);
  return first_failure(supervise(req));
}

// Builds and grades one mutant in `lab_src` (which holds it), cheapest check first: the static
// barrier check (a barrier it proves divergent fails its task, as in grading; a mere warning kills
// nothing), the correctness cases, then (with timing) cases, thresholds and hidden cases, and the
// sanitizer gate. Says what killed it, if anything.
std::string kill_reason(AuditPlan& plan, const fs::path& lab_src, const fs::path& work, bool& invalid) {
  const BuildResult build = build_lab(plan.tc, plan.m, plan.o.backend, lab_src, work / "build");
  if (!build.ok) {
    invalid = true;
    return "does not build: " + build.message;
  }
  // As in grading: a barrier the check proves divergent fails the tasks that run it; others only warn.
  const std::vector<std::string> tasks = select_tasks(plan.m, {});
  const BarrierVerdicts verdicts = barrier_verdicts(plan.m, plan.o.backend, lab_src, tasks, build.warnings);
  if (!verdicts.unsafe.empty()) {
    LabRun unsafe;
    add_unsafe_tasks(unsafe, tasks, verdicts);
    return "static barrier check: " + first_failure(unsafe);
  }
  {
    std::shared_lock shared(plan.device_lock);
    if (std::string failed = first_failure(supervise(request_for(plan, build, lab_src, work, false))); !failed.empty())
      return failed;
  }
  const RunRequest full = request_for(plan, build, lab_src, work, true);
  if (plan.o.timing)
    if (std::string failed = timed_failure(plan, full); !failed.empty()) return failed;
  if (!plan.gate) return {};
  SanitizerGate gate = *plan.gate;
  gate.student_files = plan.m.files.at(plan.o.backend);
  gate.shown_dir = plan.m.id;
  gate.parallel = 2;
  std::shared_lock shared(plan.device_lock);
  return first_failure(sanitize_lab(full, gate));
}

bool run_has(const AuditPlan& plan, const std::string& needs) {
  if (needs == "timing") return plan.o.timing;
  if (needs == "sanitizer") return plan.gate.has_value();
  if (needs == "gpu") return !plan.gpu_lock.empty();  // set for a GPU device only
  // A CPU OpenCL device runs a work-group's items one after another between barriers, which shows
  // races a GPU hides when the writer and the reader share a warp.
  if (needs == "cpu") return plan.gpu_lock.empty();
  return true;
}

MutantVerdict judge(AuditPlan& plan, const Mutant& mutant, const fs::path& job_dir) {
  MutantVerdict v;
  v.mutant = mutant;
  const std::string& original = plan.originals.at(mutant.file);
  v.diff = diff_of(mutant, original);
  const fs::path lab_src = job_dir / "src" / plan.m.id;
  std::string text;
  try {
    text = apply_mutant(mutant, original);
  } catch (const std::exception& e) {
    v.outcome = MutantVerdict::Outcome::invalid;
    v.by = e.what();
    return v;
  }
  write_text_atomically(text, lab_src / mutant.file);
  bool invalid = false;
  v.by = kill_reason(plan, lab_src, job_dir, invalid);
  write_text_atomically(original, lab_src / mutant.file);  // a new time stamp: the next build compiles it again
  using O = MutantVerdict::Outcome;
  if (invalid)
    v.outcome = O::invalid;
  else if (!v.by.empty())
    v.outcome = O::killed;
  else if (!mutant.equivalent.empty())
    v.outcome = O::equivalent, v.by = mutant.equivalent;
  else if (!mutant.needs.empty() && !run_has(plan, mutant.needs))
    v.outcome = O::undetectable, v.by = fmt::format("needs {}: {}", mutant.needs, mutant.why);
  return v;
}

// The lab's mutants for the backend: generic ones of its kernel files, then its own, with what
// its mutants.toml expects of the generic ones.
std::vector<Mutant> mutants_for(const AuditPlan& plan, const fs::path& solution_dir) {
  std::vector<Mutant> all;
  for (const auto& [file, text] : plan.originals)
    if (file.ends_with(".cu") || file.ends_with(".cl"))
      for (auto& g : generic_mutants(file, text)) all.push_back(std::move(g));
  const LabMutants own = load_lab_mutants(solution_dir / "mutants.toml");
  for (auto& m : all)
    for (const auto& e : own.expectations)
      if (e.mutant == m.key()) m.equivalent = e.equivalent, m.needs = e.needs, m.why = e.why;
  for (const auto& m : own.mutants)
    if (plan.originals.count(m.file)) {
      Mutant located = m;
      if (const auto pos = position_of(plan.originals.at(m.file), m.from, m.occurrence); pos != std::string::npos)
        located.line = line_at(plan.originals.at(m.file), pos);
      all.push_back(std::move(located));
    }
  return all;
}

}  // namespace

std::vector<MutantVerdict> audit_lab(const Toolchain& tc, const Manifest& m, const fs::path& solution_dir,
                                     const fs::path& work_dir, const AuditOptions& o) {
  AuditPlan plan{tc, m, o, {}, {}, {}, {}};
  for (const auto& file : m.files.at(o.backend)) plan.originals[file] = read_text_or_throw(solution_dir / file);
  if (o.sanitize) plan.gate = make_sanitizer_gate(tc, o.backend);
  if (const DeviceInfo d = find_device(o.backend, o.device); d.device_class == DeviceClass::gpu)
    plan.gpu_lock = gpu_lock_name(d);
  const std::vector<Mutant> mutants = mutants_for(plan, solution_dir);
  const int jobs = std::max(1, o.jobs);
  for (int j = 0; j < jobs; ++j) {
    const fs::path src = work_dir / fmt::format("job{}", j) / "src" / m.id;
    fs::create_directories(src);
    for (const auto& [file, text] : plan.originals) write_text_atomically(text, src / file);
  }
  std::vector<MutantVerdict> verdicts(mutants.size());
  parallel_queue(mutants.size(), jobs, [&](std::size_t i, int job) {
    verdicts[i] = judge(plan, mutants[i], work_dir / fmt::format("job{}", job));
  });
  return verdicts;
}

std::string render_audit(const Manifest& m, const std::string& backend, const std::vector<MutantVerdict>& verdicts,
                         bool color) {
  using O = MutantVerdict::Outcome;
  auto count = [&](O o) {
    return std::count_if(verdicts.begin(), verdicts.end(), [o](const auto& v) { return v.outcome == o; });
  };
  auto paint = [color](const std::string& text, fmt::terminal_color c) {
    return color ? fmt::format(fg(c), "{}", text) : text;
  };
  std::string out = fmt::format(
      "{} ({}): {} mutants, {} killed, {} survived, {} equivalent, {} not detectable in this run, "
      "{} invalid\n",
      m.id, backend, verdicts.size(), count(O::killed), count(O::survived), count(O::equivalent),
      count(O::undetectable), count(O::invalid));
  for (const auto& v : verdicts) {
    static const char* names[] = {"killed", "SURVIVED", "equivalent", "not here", "INVALID"};
    const auto c = v.outcome == O::killed                                ? fmt::terminal_color::green
                   : v.outcome == O::survived || v.outcome == O::invalid ? fmt::terminal_color::red
                                                                         : fmt::terminal_color::yellow;
    out += fmt::format("  {} {}\n      {}\n", paint(fmt::format("{:<10}", names[static_cast<int>(v.outcome)]), c),
                       v.mutant.name, v.by.empty() ? "every case, threshold and check passed" : v.by);
    if (v.outcome == O::survived || v.outcome == O::invalid) {
      std::istringstream diff(v.diff);
      for (std::string line; std::getline(diff, line);) out += "        " + line + "\n";
    }
  }
  return out;
}

}  // namespace gpulab::cli
