#include "profiler.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "csv.hpp"
#include "files.hpp"
#include "gpulab/text.hpp"
#include "sandbox.hpp"

namespace gpulab::cli {

namespace fs = std::filesystem;

namespace {

// ncu writes numbers with thousands separators ("16,381,968"); "" or words are not numbers.
std::optional<double> number_in(const std::string& text) { return parse_double(replace_all(text, ",")); }

// "void tile<0>(const float *, float *, int)" -> "tile<0>": the name a student wrote.
std::string short_kernel_name(const std::string& demangled) {
  int depth = 0;
  std::size_t end = demangled.size();
  for (std::size_t i = 0; i < demangled.size(); ++i) {
    if (demangled[i] == '<') ++depth;
    if (demangled[i] == '>') --depth;
    if (demangled[i] == '(' && depth == 0) {
      end = i;
      break;
    }
  }
  std::string name = demangled.substr(0, end);
  if (name.rfind("void ", 0) == 0) name = name.substr(5);
  return name;
}

}  // namespace

std::vector<ProfiledLaunch> parse_ncu_raw_csv(const std::string& csv) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& line : split_lines(csv))
    if (!line.empty() && line.front() == '"') rows.push_back(csv_fields(line));  // ncu's ==PROF== lines are not rows
  if (rows.empty()) throw std::runtime_error("Nsight Compute's report has no CSV rows");
  const auto& header = rows.front();
  const auto kernel_column = std::find(header.begin(), header.end(), "Kernel Name");
  if (kernel_column == header.end())
    throw std::runtime_error("Nsight Compute's CSV has no \"Kernel Name\" column: not its raw page (--page raw)");
  const auto kernel_index = static_cast<std::size_t>(kernel_column - header.begin());
  std::vector<ProfiledLaunch> launches;
  // The row after the header holds the units; a launch row has an ID in its first field.
  for (std::size_t r = 1; r < rows.size(); ++r) {
    const auto& row = rows[r];
    if (row.size() != header.size() || !number_in(row.front())) continue;
    ProfiledLaunch launch{short_kernel_name(row[kernel_index]), {}};
    for (std::size_t c = 0; c < header.size(); ++c)
      if (header[c].find("__") != std::string::npos)
        if (const auto v = number_in(row[c])) launch.metrics[header[c]] = *v;
    launches.push_back(std::move(launch));
  }
  return launches;
}

namespace {

double metric(const std::map<std::string, double>& totals, const std::string& name) {
  const auto it = totals.find(name);
  return it == totals.end() ? 0.0 : it->second;
}

// Global loads or stores: how many of the bytes the 32-byte sectors fetched were asked for. A warp
// whose threads access consecutive words uses all of them (a broadcast even more: capped at 100%).
CounterReading read_global(const std::map<std::string, double>& t, const std::string& op) {
  const bool loads = op == "ld";
  CounterReading c;
  const double requests = metric(t, "l1tex__t_requests_pipe_lsu_mem_global_op_" + op + ".sum");
  const double sectors = metric(t, "l1tex__t_sectors_pipe_lsu_mem_global_op_" + op + ".sum");
  const double bytes = metric(t, "sm__sass_data_bytes_mem_global_op_" + op + ".sum");
  if (requests <= 0 || sectors <= 0) {
    c.value = "none";
    c.reading = loads ? "the kernel reads nothing from global memory" : "the kernel writes nothing to global memory";
    return c;
  }
  if (bytes <= 0) {  // this ncu measured no bytes asked for: the sectors alone
    c.value = fmt::format("{:.1f} sectors per request", sectors / requests);
    c.reading = "4 for 32 threads reading consecutive 4-byte words; 32 when each thread touches its own sector";
    return c;
  }
  const double used = std::min(1.0, bytes / (32 * sectors));
  c.value = fmt::format("{:.1f} sectors per request, {:.0f}% of their bytes used", sectors / requests, 100 * used);
  const char* access = loads ? "read" : "write";
  if (used >= 0.6) {
    c.reading = fmt::format(
        "coalesced: the threads of a warp {} neighbouring words, so the 32-byte sectors a "
        "request touches are used (nearly) whole",
        access);
  } else if (used >= 0.35) {
    c.reading = fmt::format(
        "partly coalesced: a warp's {}s use {:.0f}% of the sectors they touch; neighbouring "
        "threads (threadIdx.x) {} words that are apart, or several read one word (a broadcast, "
        "which costs nothing extra)",
        access, 100 * used, access);
    c.concern = true;
  } else {
    c.reading = fmt::format(
        "not coalesced: a warp's {}s touch {:.0f} sectors of 32 bytes for each request and use "
        "{:.0f}% of them; consecutive threads (threadIdx.x) {} addresses far apart (a stride): "
        "make them {} consecutive words",
        access, sectors / requests, 100 * used, access, access);
    c.concern = true;
  }
  return c;
}

// Shared memory: the wavefronts the accesses took over those they would take without bank conflicts
// (ncu counts the extra ones as conflicts): 1 without conflicts, n for an n-way conflict. A 16-byte
// access (float4) needs several wavefronts of its own, which are not conflicts. 0: no access.
double conflict_ways(const std::map<std::string, double>& t, const std::string& op) {
  if (metric(t, "smsp__sass_inst_executed_op_shared_" + op + ".sum") <= 0) return 0;
  const double wavefronts = metric(t, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_" + op + ".sum");
  const double conflicts = metric(t, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_" + op + ".sum");
  return wavefronts > conflicts && conflicts >= 0 ? wavefronts / (wavefronts - conflicts) : 1;
}

CounterReading read_bank_conflicts(const std::map<std::string, double>& t) {
  CounterReading c;
  const double loads = conflict_ways(t, "ld"), stores = conflict_ways(t, "st");
  if (loads == 0 && stores == 0) {
    c.value = "not used";
    c.reading = "the kernel does not use shared memory";
    return c;
  }
  c.value = fmt::format("loads {:.1f}-way, stores {:.1f}-way", loads, stores);
  const double worst = std::max(loads, stores);
  if (worst < 1.3) {
    c.reading = "no bank conflicts: the threads of a warp reach 32 different banks (or share a word) at once";
  } else if (worst < 1.95) {
    c.reading = fmt::format(
        "some bank conflicts on shared {}: a part of the accesses (a tree's later steps, a halo) "
        "have threads of a warp in the same bank",
        loads >= stores ? "loads" : "stores");
  } else {
    c.reading = fmt::format(
        "{:.0f}-way bank conflicts on shared {}: threads of a warp whose words lie a multiple of 32 words apart share "
        "a bank and wait in turn (a column of a [32][32] float tile lies in one bank: pad its rows to 33 words)",
        worst, loads >= stores ? "loads" : "stores");
    c.concern = true;
  }
  return c;
}

// What caps the warps an SM holds for this launch: the smallest of ncu's per-resource limits.
std::string occupancy_limiter(const std::map<std::string, double>& t) {
  const std::vector<std::pair<std::string, std::string>> limits{
      {"launch__occupancy_limit_registers",
       fmt::format("registers ({:.0f} per thread)", metric(t, "launch__registers_per_thread"))},
      {"launch__occupancy_limit_shared_mem", "shared memory per block"},
      {"launch__occupancy_limit_warps",
       fmt::format("the block size ({:.0f} threads)", metric(t, "launch__block_size"))},
      {"launch__occupancy_limit_blocks", "the most blocks an SM holds"}};
  const auto* least = &limits.front();
  for (const auto& l : limits)
    if (metric(t, l.first) < metric(t, least->first)) least = &l;
  const double blocks = metric(t, least->first);
  if (metric(t, "sm__maximum_warps_per_active_cycle_pct") >= 99.5)
    return fmt::format("{:.0f} block{} of {:.0f} threads per SM: every warp slot of the SM can be used", blocks,
                       blocks == 1 ? "" : "s", metric(t, "launch__block_size"));
  return fmt::format("{:.0f} block{} per SM, limited by {}", blocks, blocks == 1 ? "" : "s", least->second);
}

CounterReading read_occupancy(const std::map<std::string, double>& t) {
  CounterReading c;
  const double achieved = metric(t, "sm__warps_active.avg.pct_of_peak_sustained_active");
  const double theoretical = metric(t, "sm__maximum_warps_per_active_cycle_pct");
  const double waves = metric(t, "launch__waves_per_multiprocessor");
  c.value = fmt::format("{:.0f}% achieved, {:.0f}% possible; {:.0f} registers per thread", achieved, theoretical,
                        metric(t, "launch__registers_per_thread"));
  if (waves > 0 && waves < 1) {
    c.reading = fmt::format(
        "the grid fills {:.0f}% of one wave of blocks: some SMs have no block; launch more, "
        "smaller blocks",
        100 * waves);
    c.concern = true;
  } else if (theoretical < 50) {
    c.reading = fmt::format(
        "{}: fewer warps to hide memory latency; fine when each thread has enough independent "
        "work (a register tile), else use fewer registers or less shared memory per block",
        occupancy_limiter(t));
  } else if (achieved < 0.7 * theoretical) {
    c.reading = fmt::format(
        "{}, but the SMs held far fewer warps on average: blocks finish unevenly or the last "
        "wave is partly empty",
        occupancy_limiter(t));
  } else {
    c.reading = occupancy_limiter(t);
  }
  return c;
}

CounterReading read_dram(const std::map<std::string, double>& t) {
  CounterReading c;
  const double pct = metric(t, "dram__throughput.avg.pct_of_peak_sustained_elapsed");
  c.value = fmt::format("{:.0f}% of peak; {:.1f} MB read, {:.1f} MB written", pct,
                        metric(t, "dram__bytes_read.sum") / 1e6, metric(t, "dram__bytes_write.sum") / 1e6);
  if (pct >= 70)
    c.reading = "the memory is the limit: a kernel that must move these bytes cannot be much faster";
  else if (pct >= 40)
    c.reading =
        "the memory is busy part of the time: fewer wasted bytes per access or more loads in flight "
        "(more warps, wider loads) bring it closer to its peak";
  else
    c.reading =
        "far from the memory's peak: the time goes to something else (wasted sectors, bank conflicts, too few "
        "warps, arithmetic, or launches too small to fill the GPU)";
  return c;
}

CounterReading read_compute(const std::map<std::string, double>& t) {
  CounterReading c;
  const double fma = metric(t, "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active");
  c.value = fmt::format("busy {:.0f}% of the cycles; SM throughput {:.0f}% of peak", fma,
                        metric(t, "sm__throughput.avg.pct_of_peak_sustained_elapsed"));
  if (fma >= 60) {
    c.reading = "compute-bound: the FP32 units do useful work most of the time, as a fast matmul should";
  } else if (fma >= 30) {
    c.reading =
        "the FP32 units are busy a good part of the time; more multiply-adds per loaded value (a larger "
        "register tile) and fewer other instructions per multiply-add bring them closer to their peak";
  } else {
    c.reading =
        "the FP32 units wait most of the time: each loaded value takes part in too few multiply-adds "
        "(reuse it from shared memory and registers: a larger tile per block and per thread)";
    c.concern = true;
  }
  return c;
}

}  // namespace

const std::vector<ProfileCounter>& profile_counters() {
  static const std::vector<ProfileCounter> counters{
      {"global_loads",
       "global loads",
       {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        "sm__sass_data_bytes_mem_global_op_ld.sum"},
       [](const std::map<std::string, double>& t) { return read_global(t, "ld"); }},
      {"global_stores",
       "global stores",
       {"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        "sm__sass_data_bytes_mem_global_op_st.sum"},
       [](const std::map<std::string, double>& t) { return read_global(t, "st"); }},
      {"shared_bank_conflicts",
       "shared memory",
       {"smsp__sass_inst_executed_op_shared_ld.sum", "smsp__sass_inst_executed_op_shared_st.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"},
       read_bank_conflicts},
      {"occupancy",
       "occupancy",
       {"sm__warps_active.avg.pct_of_peak_sustained_active", "sm__maximum_warps_per_active_cycle_pct",
        "launch__registers_per_thread", "launch__block_size", "launch__waves_per_multiprocessor",
        "launch__occupancy_limit_registers", "launch__occupancy_limit_shared_mem", "launch__occupancy_limit_warps",
        "launch__occupancy_limit_blocks"},
       read_occupancy},
      {"dram_throughput",
       "DRAM throughput",
       {"dram__throughput.avg.pct_of_peak_sustained_elapsed", "dram__bytes_read.sum", "dram__bytes_write.sum"},
       read_dram},
      {"fp32_throughput",
       "FP32 pipes",
       {"sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
        "sm__throughput.avg.pct_of_peak_sustained_elapsed"},
       read_compute},
  };
  return counters;
}

namespace {

const ProfileCounter* find_counter(const std::string& name) {
  for (const auto& c : profile_counters())
    if (c.name == name) return &c;
  return nullptr;
}

constexpr const char* kDuration = "gpu__time_duration.sum";

}  // namespace

void require_known_counters(const std::vector<std::string>& names, const std::string& lab) {
  for (const auto& name : names)
    if (!find_counter(name)) {
      std::vector<std::string> known;
      for (const auto& c : profile_counters()) known.push_back(c.name);
      throw std::invalid_argument(
          fmt::format("{}: lab.toml's profile names '{}', which is not a profiler counter; "
                      "the counters are {}",
                      lab, name, fmt::join(known, ", ")));
    }
}

std::vector<std::string> ncu_metrics_for(const std::vector<std::string>& counters) {
  std::vector<std::string> metrics{kDuration};
  for (const auto& name : counters)
    if (const ProfileCounter* c = find_counter(name))
      for (const auto& m : c->metrics)
        if (std::find(metrics.begin(), metrics.end(), m) == metrics.end()) metrics.push_back(m);
  return metrics;
}

std::vector<KernelProfile> read_profile(const std::vector<ProfiledLaunch>& launches,
                                        const std::vector<std::string>& counters) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const ProfiledLaunch*>> by_kernel;
  for (const auto& l : launches) {
    if (!by_kernel.count(l.kernel)) order.push_back(l.kernel);
    by_kernel[l.kernel].push_back(&l);
  }
  std::vector<KernelProfile> out;
  for (const auto& kernel : order) {
    const auto& of_kernel = by_kernel[kernel];
    std::map<std::string, double> totals;
    double time = 0;
    for (const ProfiledLaunch* l : of_kernel) time += metric(l->metrics, kDuration);
    std::map<std::string, double> first;  // every metric any launch has, at its first value
    for (const ProfiledLaunch* l : of_kernel)
      for (const auto& [name, value] : l->metrics) first.emplace(name, value);
    for (const auto& [name, value] : first) {
      double v = 0;
      if (name.rfind("launch__", 0) == 0) {
        v = value;
      } else if (name.find("pct") != std::string::npos) {  // weighted by each launch's duration
        for (const ProfiledLaunch* l : of_kernel)
          v += metric(l->metrics, name) * (time > 0 ? metric(l->metrics, kDuration) / time : 1.0 / of_kernel.size());
      } else {
        for (const ProfiledLaunch* l : of_kernel) v += metric(l->metrics, name);
      }
      totals[name] = v;
    }
    KernelProfile k{kernel, static_cast<int>(of_kernel.size()), time / 1e6, {}};  // ns -> ms
    for (const auto& name : counters)
      if (const ProfileCounter* c = find_counter(name)) {
        CounterReading reading = c->read(totals);
        reading.counter = c->name;
        reading.label = c->label;
        k.counters.push_back(std::move(reading));
      }
    out.push_back(std::move(k));
  }
  return out;
}

std::string ncu_failure(const std::string& log) {
  if (log.find("ERR_NVGPUCTRPERM") != std::string::npos)
    return "this machine lets only administrators read the GPU's performance counters (ERR_NVGPUCTRPERM): ask them to "
           "allow it (the nvidia driver option NVreg_RestrictProfilingToAdminUsers=0; "
           "https://developer.nvidia.com/ERR_NVGPUCTRPERM) or run the check as root";
  if (log.find("No kernels were profiled") != std::string::npos)
    return "Nsight Compute saw no kernel launch in the timing case: the function launched no kernel of its own";
  const std::string marker = "==ERROR== ";
  const auto error = log.find(marker);
  if (error == std::string::npos) return {};
  const auto from = error + marker.size();
  const auto end = log.find('\n', from);
  return "Nsight Compute failed: " + log.substr(from, end == std::string::npos ? std::string::npos : end - from);
}

Profiler make_profiler(const Toolchain& tc, const std::string& backend) {
  if (backend != "cuda")
    throw std::runtime_error(
        "PROFILE=1 runs NVIDIA's Nsight Compute, which measures CUDA kernels only: profile with BACKEND=cuda on an "
        "NVIDIA GPU; the grades above do not depend on it");
  Profiler p;
  p.ncu = tc.cuda_tool("ncu");
  if (p.ncu.empty())
    throw std::runtime_error(
        "PROFILE=1 needs Nsight Compute's ncu, which comes with the CUDA toolkit (nsight-compute); it is neither "
        "next to nvcc nor on PATH: install it or add its folder to PATH. The grades above do not depend on it");
  return p;
}

namespace {

// One task's timing case under ncu, then its report read back as CSV.
TaskProfile profile_task(const RunRequest& base, const Profiler& profiler, const std::string& task) {
  RunRequest r = base;
  r.tasks = {task};
  r.hidden_cases = false;
  r.profile_cases = true;
  r.calibration.reset();
  r.pictures_dir.clear();
  r.work_dir = base.work_dir / "profile" / task;
  fs::remove_all(r.work_dir);
  fs::create_directories(r.work_dir);
  if (r.sandbox.user) give_to_user(r.work_dir, *r.sandbox.user);  // ncu writes its report and log there
  const fs::path report = r.work_dir / "kernels", log = r.work_dir / "ncu.log";
  r.wrapper = {profiler.ncu,
               "--profile-from-start",
               "off",
               "--launch-count",
               fmt::format("{}", profiler.launch_count),
               "--metrics",
               fmt::format("{}", fmt::join(ncu_metrics_for(base.manifest->profile), ",")),
               "--export",
               report.string(),
               "--force-overwrite",
               "--log-file",
               log.string()};
  // Each profiled launch is replayed once per group of counters, with its memory saved and restored.
  r.timeout_s = 10 * base.timeout_s.value_or(base.manifest->timeout_s);
  const LabRun run = supervise(r);

  TaskProfile out{task, "", {}, ""};
  // The case the runner timed: its device class's (a CUDA device is a GPU), one the task takes.
  const DeviceClass device_class =
      run.device.is_object() && run.device.value("class", "gpu") == "cpu" ? DeviceClass::cpu : DeviceClass::gpu;
  for (const Case* c : base.manifest->cases_for(device_class, task))
    if (c->timing && !c->hidden) out.case_name = c->name;
  const TaskResult* result = run.tasks.empty() ? nullptr : &run.tasks.front();
  const bool ran = result && (result->status == Status::passed || result->status == Status::wrong_result);
  if (!run.grader_failure.empty()) {
    out.note = "not profiled: " + run.grader_failure;
  } else if (result && !ran) {  // it crashed, hung or was refused: that is what to fix first
    out.note = fmt::format("not profiled: the timing case did not run to its end ({}): {}", describe(result->status),
                           result->message);
  } else if (const std::string failure = ncu_failure(read_text(log)); !failure.empty()) {
    out.note = failure;
  } else if (!fs::exists(report.string() + ".ncu-rep")) {
    out.note = "Nsight Compute wrote no report";
  } else {
    const CommandOutput csv = run_command(
        fmt::format("{} --import {} --csv --page raw --print-units base 2>{}", shell_quote(profiler.ncu),
                    shell_quote(report.string() + ".ncu-rep"), shell_quote((r.work_dir / "import.log").string())));
    if (csv.status != 0) {
      out.note = "Nsight Compute could not read its report back: " + read_text(r.work_dir / "import.log");
    } else {
      out.kernels = read_profile(parse_ncu_raw_csv(csv.output), base.manifest->profile);
      const int launches = std::accumulate(out.kernels.begin(), out.kernels.end(), 0,
                                           [](int n, const KernelProfile& k) { return n + k.launches; });
      if (launches >= profiler.launch_count)
        out.note = fmt::format("the first {} kernel launches of the call were measured", launches);
    }
    if (result && result->status == Status::wrong_result)
      out.note += (out.note.empty() ? "" : "; ") + std::string("its output was wrong: ") + result->message;
  }
  return out;
}

}  // namespace

std::vector<TaskProfile> profile_lab(const RunRequest& base, const Profiler& profiler) {
  std::vector<TaskProfile> out;
  const bool has_timing_case =
      std::any_of(base.manifest->cases.begin(), base.manifest->cases.end(), [](const Case& c) { return c.timing; });
  for (const auto& task : select_tasks(*base.manifest, base.tasks)) {
    if (!has_timing_case) {
      out.push_back({task, "", {}, "this lab has no timing case to profile"});
      continue;
    }
    try {
      out.push_back(profile_task(base, profiler, task));
    } catch (const std::exception& e) {  // profiling informs: its failure never costs the check
      out.push_back({task, "", {}, fmt::format("not profiled: {}", e.what())});
    }
  }
  return out;
}

}  // namespace gpulab::cli
