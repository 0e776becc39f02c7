#include "sanitizer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include "files.hpp"
#include "gpulab/parallel.hpp"

namespace gpulab::cli {

namespace fs = std::filesystem;

namespace {

// A record of the log: its first line, then the indented lines that belong to it.
struct Record {
  std::string head;
  std::vector<std::string> body;
};

std::vector<Record> records_of(const std::string& log) {
  static const std::regex prefix(R"(^=+ ?)");
  std::vector<Record> out;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, prefix)) continue;  // the application's own output, if any
    const std::string content = m.suffix();
    if (content.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (content[0] == ' ' || content[0] == '\t') {
      if (!out.empty()) out.back().body.push_back(content);
    } else {
      out.push_back({content, {}});
    }
  }
  return out;
}

struct Location {
  std::string kernel, file;
  int line = 0;
};

// "at kernel(float *, int)+0x1b0 in /path/file.cu:25" (compute-sanitizer), or the older
// "at 0x1b0 in /path/file.cu:25:kernel(float *, int)"; without line information only the kernel.
std::optional<Location> location_in(const std::string& text) {
  static const std::regex current(R"(at\s+(.+?)\+0x[0-9a-fA-F]+(?:\s+in\s+(.+?):(\d+))?(?:\s|$))");
  static const std::regex older(R"(at\s+0x[0-9a-fA-F]+\s+in\s+(.+?):(\d+):([A-Za-z_]\w*))");
  std::smatch m;
  auto name_of = [](std::string signature) {
    signature = signature.substr(0, signature.find('('));
    if (const auto space = signature.rfind(' '); space != std::string::npos) signature.erase(0, space + 1);
    return signature;
  };
  if (std::regex_search(text, m, older)) return Location{m[3], m[1], std::stoi(m[2])};
  if (std::regex_search(text, m, current))
    return Location{name_of(m[1]), m[2].matched ? std::string(m[2]) : "", m[3].matched ? std::stoi(m[3]) : 0};
  return std::nullopt;
}

const char* kConceptBounds =
    "the bounds test: the grid is rounded up to whole blocks, so the threads past the end must not touch memory "
    "(if (i < n), not <=; both the row and the column test for 2-D data)";
const char* kConceptShared =
    "the shared-memory tile: its size and the index into it (a halo needs room on both sides; a thread's "
    "index into the tile is its local index, not its global one)";
const char* kConceptRace =
    "__syncthreads(): between the writes of a shared tile and the reads of it (read after write), and before the "
    "tile is written again in the next step of a loop (write after read); every thread of the block must reach it";
const char* kConceptBarrier =
    "barriers in divergent code: every thread of the block must reach the same __syncthreads(). Move it out of the "
    "if (or out of a loop whose trip count differs between threads, or before an early return) and guard only the "
    "loads and stores";
const char* kConceptInit =
    "initialising device memory: a buffer your code allocated is read before anything was written there (or "
    "beyond what was written): write it first, or read only what you wrote";

// A race's two accesses: the first in the record's first line, the second in the next ("and Read
// access at ..."). The tool does not say which came first, so a write and a read is one kind.
std::string race_kind(const Record& r) {
  static const std::regex first_access(R"(between (\w+) access)"), second_access(R"(^\s*and (\w+) access)");
  std::smatch m;
  if (!std::regex_search(r.head, m, first_access)) return "shared-memory data race";
  const std::string first = m[1];
  for (const auto& line : r.body)
    if (std::regex_search(line, m, second_access))
      return first == "Write" && m[1] == "Write"
                 ? "shared-memory data race (two writes, no barrier between them)"
                 : "shared-memory data race (a write and a read, no barrier between them)";
  return "shared-memory data race";
}

// What kind of error a record reports, and the concept behind it; empty: not a finding.
std::pair<std::string, std::string> classify(const std::string& tool, const Record& r) {
  static const std::regex access(R"(Invalid (__\w+__) (read|write|atomic) of size)");
  const std::string& head = r.head;
  std::smatch m;
  if (std::regex_search(head, m, access)) {
    const std::string space = m[1] == "__global__"   ? "global"
                              : m[1] == "__shared__" ? "shared-memory"
                              : m[1] == "__local__"  ? "local (stack)"
                                                     : std::string(m[1]);
    return {fmt::format("out-of-bounds {} {}", space, std::string(m[2])),
            m[1] == "__shared__" ? kConceptShared : kConceptBounds};
  }
  if (head.find("isaligned") != std::string::npos)
    return {"misaligned memory access",
            "vector loads and stores (float2, float4) need addresses that are multiples "
            "of their size: a row that does not start on such a multiple needs scalar accesses"};
  if (tool == "racecheck" && head.find("Race reported") != std::string::npos) return {race_kind(r), kConceptRace};
  if (tool == "racecheck" && head.find("hazard") != std::string::npos && head.find("SUMMARY") == std::string::npos)
    return {"shared-memory data race", kConceptRace};
  if (head.find("Barrier error") != std::string::npos) return {"barrier not reached by all threads", kConceptBarrier};
  if (head.find("Uninitialized") != std::string::npos) return {"read of uninitialised device memory", kConceptInit};
  if (head.find("Out-of-range") != std::string::npos) return {"out-of-bounds access", kConceptBounds};
  return {};
}

// The race's second access: "and Read access at kernel(...)+0x330 in file.cu:48 [1024 hazards]".
void add_second_access(SanitizerFinding& f, const Record& r) {
  for (const auto& line : r.body)
    if (line.find("and ") != std::string::npos && line.find(" access at ") != std::string::npos)
      if (auto where = location_in(line.substr(line.find(" access at ") + 8))) {
        f.other_file = where->file;
        f.other_line = where->line;
        return;
      }
}

}  // namespace

std::vector<SanitizerFinding> parse_sanitizer_log(const std::string& log, const std::string& tool) {
  std::vector<SanitizerFinding> out;
  std::set<std::tuple<std::string, std::string, int, int>> seen;
  for (const Record& r : records_of(log)) {
    auto [kind, advice] = classify(tool, r);
    if (kind.empty()) continue;
    SanitizerFinding f;
    f.tool = tool;
    f.kind = kind;
    f.report = r.head;
    f.advice = advice;
    std::optional<Location> where = location_in(r.head.substr(std::min(r.head.size(), r.head.find(" access at "))));
    for (const auto& line : r.body) {
      if (!where && line.find("at ") != std::string::npos) where = location_in(line);
      if (f.thread.empty() && line.find("by thread") != std::string::npos)
        f.thread = line.substr(line.find("by thread") + 3);
    }
    if (where) f.kernel = where->kernel, f.file = where->file, f.line = where->line;
    add_second_access(f, r);
    // A race reported from either end is one race.
    if (!seen.insert({f.kind, f.file, std::min(f.line, f.other_line), std::max(f.line, f.other_line)}).second) continue;
    out.push_back(std::move(f));
  }
  return out;
}

bool in_student_code(const SanitizerFinding& f, const fs::path& student_dir, const std::vector<std::string>& files) {
  if (!f.file.empty()) {
    const fs::path path = fs::path(f.file).lexically_normal();
    for (const auto& name : files) {
      if (path.is_absolute() ? path == (student_dir / name).lexically_normal()
                             : path.filename() == fs::path(name).filename())
        return true;
    }
    return false;
  }
  // No line information: a kernel the student's files define.
  if (f.kernel.empty()) return false;
  const std::regex defines("__global__[^;{]*\\b" + f.kernel + "\\s*\\(");
  for (const auto& name : files)
    if (std::regex_search(read_text(student_dir / name), defines)) return true;
  return false;
}

std::string describe(const SanitizerFinding& f, const fs::path& student_dir, const std::string& shown_dir) {
  auto shown = [&](const std::string& file, int line) {
    fs::path p(file);
    const auto relative = p.lexically_relative(student_dir);
    const bool under = p.is_absolute() && !relative.empty() && *relative.begin() != "..";
    const std::string name = shown_dir + "/" + (under ? relative.string() : p.filename().string());
    return line > 0 ? fmt::format("{}:{}", name, line) : name;
  };
  std::string text = f.kind;
  if (!f.kernel.empty()) text += fmt::format(" in kernel {}", f.kernel);
  if (!f.file.empty()) text += fmt::format(" at {}", shown(f.file, f.line));
  if (!f.other_file.empty() && (f.other_file != f.file || f.other_line != f.line))
    text += fmt::format(" (the other access: {})", shown(f.other_file, f.other_line));
  return text + fmt::format(" (compute-sanitizer {})", f.tool);
}

const std::vector<std::string>& default_sanitizer_tools() {
  static const std::vector<std::string> tools{"racecheck", "synccheck"};
  return tools;
}

SanitizerPlan plan_sanitizer(SanitizeMode mode, const std::string& backend, const KernelMap& kernels,
                             const std::vector<std::string>& passed) {
  SanitizerPlan plan;
  if (mode == SanitizeMode::off || backend != "cuda") return plan;
  if (mode == SanitizeMode::all) {
    plan.tasks = passed;
    plan.tools = SanitizerGate{}.tools;
    return plan;
  }
  plan.tools = default_sanitizer_tools();
  for (const auto& task : passed) {
    const auto reach = kernels.tasks.find(task);
    const bool unknown = reach == kernels.tasks.end() || !reach->second.kernels_known;
    (unknown || reach->second.shared_or_barrier ? plan.tasks : plan.left_out).push_back(task);
  }
  return plan;
}

SanitizerGate make_sanitizer_gate(const Toolchain& tc, const std::string& backend) {
  if (backend != "cuda")
    throw std::invalid_argument(
        "SANITIZE=1 runs NVIDIA's compute-sanitizer, which needs the CUDA backend (BACKEND=cuda on "
        "an NVIDIA GPU); on OpenCL every check already runs the static barrier check");
  SanitizerGate gate;
  gate.sanitizer = tc.cuda_tool("compute-sanitizer");
  if (gate.sanitizer.empty())
    throw std::runtime_error(
        "SANITIZE=1 needs compute-sanitizer, which comes with the CUDA toolkit (next to nvcc, or on "
        "PATH); it was not found");
  return gate;
}

namespace {

struct ToolRun {
  std::string task, tool;  // task "": every task of the lab's gate, in one run
  LabRun run;
  std::vector<SanitizerFinding> findings;  // all of them, the harness's included
};

// One task (or, `task` empty, every task of `base`) under one tool, in a runner process of its own.
ToolRun run_tool(const RunRequest& base, const SanitizerGate& gate, const std::string& task, const std::string& tool) {
  RunRequest r = base;
  if (!task.empty()) r.tasks = {task};
  r.hidden_cases = false;
  r.sanitize_cases = true;
  r.pictures_dir.clear();
  r.work_dir = base.work_dir / "sanitize" / tool / (task.empty() ? "all" : task);
  fs::remove_all(r.work_dir);
  fs::create_directories(r.work_dir);
  if (r.sandbox.user) give_to_user(r.work_dir, *r.sandbox.user);  // the tool writes its log there
  const fs::path log = r.work_dir / "sanitizer.log";
  r.wrapper = {gate.sanitizer,        "--tool", tool, "--log-file", log.string(), "--print-limit", "20",
               "--report-api-errors", "no"};
  // An instrumented launch is many times slower; the runner still reports after every launch.
  r.timeout_s = 5 * base.timeout_s.value_or(base.manifest->timeout_s);
  ToolRun out{task, tool, supervise(r), {}};
  out.findings = parse_sanitizer_log(read_text(log), tool);
  return out;
}

// Every task under every tool, `gate.parallel` at a time: the tools' cost is mostly on the host. With
// a kernel map, one run per tool takes every task.
std::vector<ToolRun> run_all(const RunRequest& base, const SanitizerGate& gate, const std::vector<std::string>& tasks) {
  std::vector<std::pair<std::string, std::string>> jobs;
  for (const auto& task : gate.kernels ? std::vector<std::string>{""} : tasks)
    for (const auto& tool : gate.tools) jobs.emplace_back(task, tool);
  std::vector<ToolRun> runs(jobs.size());
  parallel_queue(jobs.size(), gate.parallel,
                 [&](std::size_t i, int) { runs[i] = run_tool(base, gate, jobs[i].first, jobs[i].second); });
  return runs;
}

// "matmul_fast_kernel<4>", "ns::k": the name a kernel has in its file.
std::string plain_kernel_name(std::string name) {
  name = name.substr(0, name.find('<'));
  if (const auto colons = name.rfind("::"); colons != std::string::npos) name.erase(0, colons + 2);
  return name;
}

// Whether a finding of a run that took every task belongs to `task`: its kernel is one the task
// reaches, or one no task reaches as far as the map can tell (then every task of the run has it).
bool belongs_to(const SanitizerFinding& f, const std::string& task, const KernelMap& kernels) {
  const std::string kernel = plain_kernel_name(f.kernel);
  bool reached_by_any = false;
  for (const auto& [name, reach] : kernels.tasks) {
    if (!reach.functions.count(kernel)) continue;
    if (name == task) return true;
    reached_by_any = true;
  }
  return !reached_by_any;
}

// `task`'s result in a run: its own when the run took one task, else the one of that name.
const TaskResult* result_in(const ToolRun& r, const std::string& task) {
  for (const auto& t : r.run.tasks)
    if (t.task == task || !r.task.empty()) return &t;
  return nullptr;
}

// One task's result from its runs under every tool.
TaskResult gate_result(const std::string& task, const std::vector<const ToolRun*>& runs, const RunRequest& base,
                       const SanitizerGate& gate) {
  const TaskResult* first = result_in(*runs.front(), task);
  TaskResult result = first ? *first : TaskResult{};
  result.task = task;
  std::vector<std::string> found, harness;
  for (const ToolRun* r : runs)
    for (const auto& f : r->findings) {
      if (r->task.empty() && gate.kernels && !belongs_to(f, task, *gate.kernels)) continue;
      const std::string text = describe(f, base.student_dir, gate.shown_dir);
      if (!in_student_code(f, base.student_dir, gate.student_files)) {
        harness.push_back(text);
      } else if (std::find(found.begin(), found.end(), text) == found.end()) {
        found.push_back(text);
        found.back() += fmt::format("\n    look at {}{}", f.advice,
                                    f.thread.empty() ? "" : fmt::format("\n    first seen: {}", f.thread));
      }
    }
  const ToolRun* failed = nullptr;
  for (const ToolRun* r : runs)
    if (const TaskResult* t = result_in(*r, task); t && t->status != Status::passed && !failed) failed = r;
  if (!found.empty()) {
    result.status = Status::unsafe_code;
    result.finding = "sanitizer";
    result.points = 0;
    result.message = found.front().substr(0, found.front().find('\n'));
    result.details = fmt::format("{}", fmt::join(found, "\n"));
  } else if (failed) {
    result = *result_in(*failed, task);
    result.message = fmt::format("under compute-sanitizer {}: {}", failed->tool, result.message);
  } else {
    result.status = Status::passed;
    result.message =
        fmt::format("no finding of compute-sanitizer {} in {} cases", fmt::join(gate.tools, ", "), result.cases_total);
  }
  if (!harness.empty())
    result.details += fmt::format("{}not counted, in the grader's own code: {}", result.details.empty() ? "" : "\n",
                                  fmt::join(harness, "; "));
  return result;
}

}  // namespace

LabRun sanitize_lab(const RunRequest& base, const SanitizerGate& gate) {
  const Manifest& m = *base.manifest;
  const auto tasks = select_tasks(m, base.tasks);
  const std::vector<ToolRun> runs = run_all(base, gate, tasks);
  LabRun lab;
  lab.id = m.id, lab.name = m.name, lab.title = m.title, lab.backend = base.backend;
  for (const ToolRun& r : runs) {
    lab.processes += r.run.processes;
    if (lab.device.is_null()) lab.device = r.run.device;
    // A runner that never opened the device did not run student code: the tool or the grader failed.
    if (lab.grader_failure.empty() && (!r.run.grader_failure.empty() || r.run.device.is_null()))
      lab.grader_failure = fmt::format("compute-sanitizer {} did not run the lab: {}", r.tool,
                                       r.run.grader_failure.empty() ? r.run.output : r.run.grader_failure);
    if (lab.output.empty()) lab.output = r.run.output;
  }
  for (const auto& task : tasks) {
    std::vector<const ToolRun*> of_task;
    for (const auto& r : runs)
      if (r.task == task || r.task.empty()) of_task.push_back(&r);
    lab.tasks.push_back(gate_result(task, of_task, base, gate));
  }
  return lab;
}

void apply_sanitizer_gate(LabRun& graded, const LabRun& gate) {
  if (!gate.grader_failure.empty() && graded.grader_failure.empty()) graded.grader_failure = gate.grader_failure;
  for (auto& t : graded.tasks) {
    const auto g =
        std::find_if(gate.tasks.begin(), gate.tasks.end(), [&](const TaskResult& r) { return r.task == t.task; });
    if (g == gate.tasks.end() || t.status != Status::passed) continue;
    if (g->status == Status::unsafe_code) {
      t.status = Status::unsafe_code;
      t.finding = g->finding;
      t.points = 0;
      t.message = g->message;
      t.details = g->details;
    } else if (g->status != Status::passed) {
      t.details += fmt::format("{}the sanitizer gate did not pass: {}", t.details.empty() ? "" : "\n", g->message);
    }
  }
}

}  // namespace gpulab::cli
