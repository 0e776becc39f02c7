// The lab runner: one process per lab (and backend), started by `gpulab check`. It opens the
// device, calibrates, runs the selected tasks case by case and appends one JSON line per event to
// the progress file, so the parent can tell where a crash or hang happened and resume after it.
//
// The seed and which cases to run (visible, or hidden only) arrive on standard input, never in argv.
// Exit codes: 0 all requested tasks reported; 2 setup failed (see the "error" event);
// 3 the device was lost (a kernel fault): the parent reruns the tasks after the faulting one.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>

#include "gpulab/device.hpp"
#include "gpulab/exit_status.hpp"
#include "gpulab/host_watch.hpp"
#include "gpulab/results.hpp"
#include "gpulab/telemetry.hpp"
#include "lab_driver.hpp"

namespace gpulab {
namespace {

class Progress {
 public:
  explicit Progress(const std::string& path) : file_(std::fopen(path.c_str(), "a")) {
    if (!file_) throw std::runtime_error(fmt::format("cannot write the progress file {}", path));
  }
  ~Progress() { std::fclose(file_); }
  // Every event carries `at_s`, seconds since the runner started: where a slow lab spends its time.
  void emit(nlohmann::json event) {
    event["at_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const std::string line = event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    std::fwrite(line.data(), 1, line.size(), file_);
    std::fflush(file_);  // the parent reads it while we run, and after a crash
  }

 private:
  std::FILE* file_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

std::string with_hint(const Device& device, const ApiError& e) {
  const std::string hint = device.hint(e);
  return hint.empty() ? e.what() : fmt::format("{} — {}", e.what(), hint);
}

// The timed case's figures for the task. A baseline measured interleaved with the case's launches
// replaces the calibration's figure for its metric: both saw the same clocks and the same load.
void record_timing(TaskResult& r, const CaseResult& cr, const Calibration& calibration) {
  r.time_ms = cr.timing->median;
  r.rate = cr.rate();
  if (!r.rate) return;
  Calibration same_time = calibration;
  if (const Metric* m = find_metric(r.metric); m && cr.baseline_rate)
    same_time.rates[m->calibration] = *cr.baseline_rate;
  r.ratios = ratios_of(*r.rate, same_time);
  if (auto it = r.ratios.find(r.metric); it != r.ratios.end()) r.ratio = it->second;
  r.borderline = cr.borderline;
  r.telemetry = cr.telemetry;
}

// A task's result before its cases run: its names and points, and its threshold on this device.
TaskResult task_result_before_cases(const RunContext& ctx, const Task& task, std::size_t cases) {
  TaskResult r;
  r.task = task.name;
  r.function = task.function;
  r.max_points = task.points;
  r.bonus = task.bonus;
  r.cases_total = static_cast<int>(cases);
  if (task.threshold) {
    r.metric = task.threshold->metric;
    r.threshold = task.threshold->bound(ctx.device.info().backend, ctx.device.info().device_class);
  }
  if (task.tier && r.threshold) {
    r.tier_threshold = task.tier->bounds.bound(ctx.device.info().backend, ctx.device.info().device_class);
    if (r.tier_threshold) r.tier_points = task.tier->points;
  }
  return r;
}

// What the task's cases run with: the calibration, and the probe of its threshold's baseline, measured
// again interleaved with the timed launches.
RunContext task_context(const RunContext& ctx, const TaskResult& r, const Calibration& calibration) {
  RunContext task_ctx = ctx;
  task_ctx.task = r.task;
  task_ctx.calibration = &calibration;
  if (r.threshold)
    if (const Metric* m = find_metric(r.metric))
      if (auto it = calibration.probes.find(m->calibration); it != calibration.probes.end()) {
        task_ctx.baseline = &it->second;
        task_ctx.bound = r.threshold;
      }
  return task_ctx;
}

// Runs one task's cases; returns false if the device was lost and the process must end.
bool run_task(const RunContext& ctx, LabDriver& driver, const Task& task, Progress& progress,
              const Calibration& calibration) {
  const auto cases = ctx.manifest.cases_for(ctx.device.info().device_class, task.name);
  TaskResult r = task_result_before_cases(ctx, task, cases.size());
  progress.emit({{"event", "task_begin"}, {"task", task.name}});
  const RunContext task_ctx = task_context(ctx, r, calibration);
  bool device_lost = false;
  std::optional<Status> stop;  // a failure that makes the remaining cases pointless
  std::string driver_fault;    // the lab's driver broke a rule of the framework: no verdict at all
  for (const Case* c : cases) {
    progress.emit({{"event", "case_begin"}, {"task", task.name}, {"case", c->name}});
    try {
      const auto began = std::chrono::steady_clock::now();
      CaseResult cr = driver.run(task_ctx, task, *c);
      if (!cr.driver_fault.empty()) {
        driver_fault = cr.driver_fault;
        break;
      }
      cr.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
      cr.hidden = c->hidden;
      progress.emit({{"event", "case_end"}, {"task", task.name}, {"result", cr}});
      r.cases_passed += cr.passed;
      if ((!cr.passed && r.message.empty()) || (!cr.finding.empty() && r.finding.empty())) {
        if (r.finding.empty()) r.finding = cr.finding;
        r.message = cr.message;
        r.details = cr.details;
        r.failed_in_hidden_case = cr.hidden;
      }
      if (c->timing && cr.timing) record_timing(r, cr, calibration);
      r.cases.push_back(std::move(cr));
      continue;
    } catch (const NotImplemented& e) {
      stop = Status::not_implemented;
      r.message = fmt::format("not implemented yet: the TODO at {}:{}", e.file(), e.line());
      r.details = fmt::format("{}\nWrite the code, then delete the GPULAB_NOT_IMPLEMENTED line.", e.what());
    } catch (const ApiError& e) {
      device_lost = ctx.device.is_fatal(e);
      stop = device_lost ? Status::kernel_fault : Status::error;
      r.message = fmt::format("case {}: {}", c->name, with_hint(ctx.device, e));
    } catch (const std::exception& e) {
      stop = Status::error;
      r.message = fmt::format("case {}: {}", c->name, e.what());
    }
    // Work the student launched before the error may still fault: wait for it here, so a broken
    // device is blamed on this task and the next one gets a fresh process.
    if (!device_lost) try {
        ctx.device.synchronize();
      } catch (const ApiError& later) {
        if (ctx.device.is_fatal(later)) {
          device_lost = true;
          stop = Status::kernel_fault;
          r.message += fmt::format("; then {}", with_hint(ctx.device, later));
        }
      } catch (const std::exception&) {}
    break;
  }

  // Out of the runner as a setup error: the grader's failure (early_exit.cpp), never the student's.
  if (!driver_fault.empty())
    throw std::logic_error(fmt::format("task {}: the grader failed, not the submission: {}", task.name, driver_fault));
  // What ran is reported as measured; the verdict is the parent's (gpulab/verdict.hpp).
  if (stop)
    r.status = *stop;
  else
    r.cases_complete = true;
  progress.emit({{"event", "task_end"}, {"result", r}});
  return !device_lost;
}

// The copy probe's buffers (memory-bound labs): as large as a GPU timing case (256 MiB), so caches
// do not flatter the copy; smaller on a CPU.
struct CopyProbe {
  std::size_t bytes = 0;
  std::unique_ptr<Buffer> from, to;
};

// The device copy as a probe of memory-bound labs (GB/s), so a task's timing can measure it again
// interleaved with its launches (the copy_fraction bound).
void prepare_copy(const RunContext& ctx, Calibration& calibration, CopyProbe& copy) {
  const bool gpu = ctx.device.info().device_class == DeviceClass::gpu;
  copy.bytes = gpu ? (256u << 20) : (32u << 20);
  if (calibration.unit != "GB/s") return;
  copy.from = ctx.device.allocate(copy.bytes);
  copy.to = ctx.device.allocate(copy.bytes);
  copy.from->fill(0x5a);
  Buffer& f = *copy.from;
  Buffer& t = *copy.to;
  const std::size_t bytes = copy.bytes;
  calibration.probes["copy"] = Probe{[] {}, [&ctx, &f, &t, bytes] { ctx.device.copy(f, t, bytes); }, 2.0 * bytes};
}

// The device's copy bandwidth, for the speed of light of every lab and the copy_fraction metric of
// memory-bound ones.
void measure_copy(const RunContext& ctx, Calibration& calibration, const CopyProbe& copy) {
  calibration.copy_gbps = ctx.device.copy_bandwidth(copy.bytes, 10);
  if (calibration.unit == "GB/s") calibration.rates["copy"] = *calibration.copy_gbps;
}

// What the parent tells the runner where student code cannot see it: not in the argv or the
// environment (a student's static constructor receives both), but on standard input, read once here.
enum class Cases {
  visible,      // the visible cases, timing included (`gpulab check`, the first pass of grading)
  hidden,       // only the hidden cases (instructor grading)
  sanitize,     // the visible correctness cases, under compute-sanitizer: no timing, no guard zones
  correctness,  // the visible correctness cases alone: no timing (the mutation audit on a CPU device)
  profile,      // the timing case, launched once inside the profiled region (gpulab check --profile)
};

struct Secrets {
  std::uint64_t seed = 0;
  Cases cases = Cases::visible;
  // Rates the parent measured earlier and trusts (gpulab check's cache, a batch's calibration):
  // used instead of measuring them again. Empty: measure.
  std::optional<Calibration> calibration;
  bool calibrate_only = false;  // report the calibration, run no task (a batch's trusted calibration)
};

Secrets read_secrets() {
  std::string line;
  std::getline(std::cin, line);
  const auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("seed") || !j["seed"].is_number_unsigned())
    throw std::invalid_argument(
        "the runner reads its seed from standard input as {\"seed\": N, \"cases\": \"visible\", "
        "\"hidden\", \"sanitize\", \"correctness\", \"profile\" or \"calibrate\", and optionally "
        "\"calibration\": {...}}; start it through gpulab check or gpulab grade");
  Secrets s;
  s.seed = j["seed"].get<std::uint64_t>();
  const std::string cases = j.value("cases", "visible");
  s.cases = cases == "hidden"        ? Cases::hidden
            : cases == "sanitize"    ? Cases::sanitize
            : cases == "correctness" ? Cases::correctness
            : cases == "profile"     ? Cases::profile
                                     : Cases::visible;
  s.calibrate_only = cases == "calibrate";
  // A calibration that does not parse is measured again rather than trusted in part.
  if (j.contains("calibration")) try {
      s.calibration = calibration_from_json(j["calibration"]);
    } catch (const std::invalid_argument&) {}
  return s;
}

// Cases for correctness only: their pass has no timing and decides no threshold. The hidden pass
// keeps the hidden cases; the sanitizer's the visible correctness cases up to the random cases'
// sizes (the timing case's size, or a large case's, under instrumentation would take minutes, and
// the small cases find the same races).
Manifest correctness_only(Manifest manifest, bool hidden, std::int64_t max_size = 0, bool large = true) {
  std::erase_if(manifest.cases, [&](const Case& c) {
    const auto size = manifest.case_size(c);
    return c.hidden != hidden || c.timing || (c.large && !large) ||
           (max_size > 0 && size && *size > static_cast<double>(max_size));
  });
  for (auto& t : manifest.tasks) t.threshold.reset();
  return manifest;
}

// The timing case alone, as one untimed launch: what a profiler measures (gpulab check --profile).
// It keeps the timing case's size, where the kernel's memory traffic and occupancy are the lesson.
Manifest timing_case_only(Manifest manifest) {
  std::erase_if(manifest.cases, [](const Case& c) { return !c.timing; });
  for (auto& c : manifest.cases) c.timing = false;
  for (auto& t : manifest.tasks) t.threshold.reset();
  return manifest;
}

Manifest manifest_for(const std::string& path, const Secrets& secrets, DeviceClass device) {
  // Hidden cases run only in instructor grading (`gpulab grade`), in a process of their own after the
  // visible ones, so nothing of their data is left in a process whose results a student sees.
  // Either process adds the random cases its seed draws (manifest.hpp): visible ones, or hidden ones,
  // with the large and stress cases up to the device class's timing sizes.
  if (secrets.cases == Cases::hidden)
    return correctness_only(with_random_cases(load_manifest(path), secrets.seed, true, device), true);
  Manifest visible = with_random_cases(without_hidden_cases(load_manifest(path)), secrets.seed, false, device);
  if (secrets.cases == Cases::sanitize) {
    const std::int64_t max_size = visible.sanitize_max_size;
    return correctness_only(std::move(visible), false, max_size, false);
  }
  if (secrets.cases == Cases::correctness) return correctness_only(std::move(visible), false);
  if (secrets.cases == Cases::profile) return timing_case_only(std::move(visible));
  return visible;
}

// The calibrations for the timing case: the probes always (a threshold's baseline is measured
// interleaved with the timed launches whatever happens here), the rates from `given` when the parent
// sent fitting ones, else measured now. The "calibration" event says which, and how long it took.
Calibration calibrate(const RunContext& ctx, LabDriver& driver, const Case& timing,
                      const std::optional<Calibration>& given, CopyProbe& copy, Progress& progress) {
  const auto start = std::chrono::steady_clock::now();
  Calibration calibration;
  calibration.unit = driver.rate_unit();
  prepare_copy(ctx, calibration, copy);
  driver.prepare_calibration(ctx, timing, calibration);
  // Rates for another unit, or without the copy bandwidth (the speed of light needs it), are not used.
  const bool use_given = given && given->unit == calibration.unit && !given->rates.empty() && given->copy_gbps;
  if (use_given) {
    auto probes = std::move(calibration.probes);
    calibration = *given;
    calibration.probes = std::move(probes);
  } else {
    measure_copy(ctx, calibration, copy);
    driver.measure_calibration(ctx, timing, calibration);
    calibration.measured_at = unix_seconds_now();
  }
  if (!calibration.peak_gflops) calibration.peak_gflops = ctx.device.peak_gflops();
  calibration.work = driver.rate_work();
  nlohmann::json event = calibration_to_json(calibration);
  event["event"] = "calibration";
  event["given"] = use_given;
  event["took_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress.emit(std::move(event));
  return calibration;
}

// The "device" event: what the device is, how its kernels reach host memory (empty: they do not),
// and the GPU's state at the start, or why there is no telemetry.
nlohmann::json device_event(const DeviceInfo& info, GpuMonitor* monitor, const std::string& no_telemetry,
                            const std::string& host_access) {
  nlohmann::json event = {{"event", "device"},
                          {"backend", info.backend},
                          {"index", info.index},
                          {"name", info.name},
                          {"platform", info.platform},
                          {"details", info.details},
                          {"bus_id", info.bus_id},
                          {"class", to_string(info.device_class)},
                          {"host_memory_access", host_access}};
  if (!monitor) {
    event["telemetry"] = "unavailable: " + no_telemetry;
  } else if (const auto state = monitor->state()) {
    event["telemetry"] = "NVML";
    event["gpu_state"] = *state;
  } else {
    event["telemetry"] = "NVML, but the first reading failed";
  }
  return event;
}

// A build log for the report: its start, when a kernel made the compiler print thousands of lines
// (once per task, a whole log could fill the progress file past the output limit).
std::string report_log(const std::string& log) {
  constexpr std::size_t kKept = 16 << 10;
  if (log.size() <= kKept) return log;
  return fmt::format("{}\n… ({} more bytes of the build log)", log.substr(0, kKept), log.size() - kKept);
}

// Every selected task fails with the compile error of the student's device code.
void report_compile_error(const std::vector<const Task*>& tasks, const CompileError& e, Progress& progress) {
  const std::string log = report_log(e.log());
  for (const Task* t : tasks) {
    TaskResult r;
    r.task = t->name;
    r.function = t->function;
    r.status = Status::compile_error;
    r.message = e.what();
    r.details = log;
    r.max_points = t->points;
    r.bonus = t->bonus;
    progress.emit({{"event", "task_end"}, {"result", r}});
  }
}

int run(const std::string& manifest_path, const std::string& student_dir, const std::string& backend,
        const std::string& device_selector, const Secrets& secrets, const std::vector<std::string>& task_names,
        const std::string& pictures_dir, Progress& progress) {
  auto device = open_device(backend, device_selector);
  const Manifest manifest = manifest_for(manifest_path, secrets, device->info().device_class);
  const std::uint64_t seed = secrets.seed;
  std::vector<const Task*> tasks;
  for (const auto& name : task_names) {
    const Task* t = manifest.find_task(name);
    if (!t) throw std::invalid_argument(fmt::format("lab {} has no task '{}'", manifest.name, name));
    tasks.push_back(t);
  }
  if (task_names.empty())
    for (const auto& t : manifest.tasks) tasks.push_back(&t);

  device->set_guard_zones(secrets.cases != Cases::sanitize);
  set_student_buffer_guards(secrets.cases != Cases::sanitize);
  const DeviceInfo& info = device->info();
  // The GPU's telemetry (NVML) where there is one, and whether kernels reach host memory.
  std::string no_telemetry;
  const std::unique_ptr<GpuMonitor> monitor = open_nvml_monitor(info.bus_id, no_telemetry);
  const std::string host_access = host_memory_access(info, monitor ? monitor->addressing_mode() : "");
  progress.emit(device_event(info, monitor.get(), no_telemetry, host_access));

  // Calibrating alone needs none of the student's device code: the calibrations are the harness's.
  // The build is announced, so a driver that crashes while it builds is told from a kernel that faults.
  if (!secrets.calibrate_only) try {
      progress.emit({{"event", "build_begin"}});
      device->prepare_lab(manifest, student_dir);
      progress.emit({{"event", "build_end"}});
    } catch (const CompileError& e) {
      progress.emit({{"event", "build_end"}});
      report_compile_error(tasks, e, progress);
      return 0;
    }

  RunContext ctx{*device, manifest, seed, [&progress] { progress.emit({{"event", "heartbeat"}}); }, pictures_dir};
  ctx.profiled = secrets.cases == Cases::profile;
  ctx.monitor = monitor.get();
  ctx.watch_host_memory = !host_access.empty();
  auto driver = make_lab_driver();
  Calibration calibration;
  const auto cases = manifest.cases_for(info.device_class);
  const auto timing = std::find_if(cases.begin(), cases.end(), [](const Case* c) { return c->timing; });
  CopyProbe copy;  // the copy probe's buffers, re-measured during timing
  if (timing != cases.end()) calibration = calibrate(ctx, *driver, **timing, secrets.calibration, copy, progress);
  if (secrets.calibrate_only) return 0;

  for (const Task* t : tasks)
    if (!run_task(ctx, *driver, *t, progress, calibration)) return exit_code(ExitStatus::device_lost);
  return 0;
}

}  // namespace
}  // namespace gpulab

int main(int argc, char** argv) {
  CLI::App app{"gpulab lab runner: runs one lab's tasks on one device (started by `gpulab check`)"};
  std::string manifest, student_dir, backend, device, progress_path;
  std::vector<std::string> tasks;
  app.add_option("--manifest", manifest, "the lab's lab.toml")->required();
  app.add_option("--student-dir", student_dir, "folder of the student's files of this lab")->required();
  app.add_option("--backend", backend, "cuda or opencl")->required();
  app.add_option("--device", device, "device index or part of its name");
  app.add_option("--task", tasks, "tasks to run (default: all)");
  app.add_option("--progress", progress_path, "JSON-lines file to append events to")->required();
  std::string pictures;
  app.add_option("--pictures", pictures, "folder for the pictures of image labs (default: none)");
  CLI11_PARSE(app, argc, argv);

  std::optional<gpulab::Progress> progress;
  try {
    progress.emplace(progress_path);
    // Before it, only the constructors of global objects (the student's among them) have run.
    progress->emit({{"event", "start"}});
    const gpulab::Secrets secrets = gpulab::read_secrets();
    return gpulab::run(manifest, student_dir, backend, device, secrets, tasks, pictures, *progress);
  } catch (const std::exception& e) {
    if (progress) progress->emit({{"event", "error"}, {"message", e.what()}});
    fmt::print(stderr, "gpulab runner: {}\n", e.what());
    return gpulab::exit_code(gpulab::ExitStatus::setup_error);
  }
}
