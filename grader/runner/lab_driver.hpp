// The contract between the runner and one lab: the runner owns devices, seeds, timing, progress
// and error handling; a lab driver makes a case's data, calls the student's function through the
// backend bindings, and checks the output against the CPU reference.
#pragma once
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/compare.hpp"
#include "gpulab/device.hpp"
#include "gpulab/host_watch.hpp"
#include "gpulab/manifest.hpp"
#include "gpulab/metrics.hpp"
#include "gpulab/random.hpp"
#include "gpulab/results.hpp"
#include "gpulab/telemetry.hpp"

namespace gpulab {

struct RunContext {
  Device& device;
  const Manifest& manifest;
  std::uint64_t run_seed;
  // Called after every launch, so a slow but working kernel is not mistaken for a hung one.
  std::function<void()> heartbeat = [] {};
  // Where image labs write their pictures (input, output, reference, difference); empty: nowhere.
  std::filesystem::path pictures_dir = {};
  // Set by the runner for each task: its name (seeds the timing plan), the calibrations (for the
  // speed of light), and for a task with a threshold the calibration launch to interleave with the
  // timed launches and the bound on the ratio of the two rates.
  std::string task = {};
  const Calibration* calibration = nullptr;
  const Probe* baseline = nullptr;
  std::optional<double> bound = {};
  // Each case's first launch runs inside the device's profiled region (gpulab check --profile).
  bool profiled = false;
  // The GPU's telemetry (NVML), sampled over each timing case's launches; null: none.
  GpuMonitor* monitor = nullptr;
  // The device's kernels reach the runner's host memory (host_watch.hpp): the harness's host data
  // is checksummed around every launch.
  bool watch_host_memory = false;
  // The case's own random stream: the same for the same run seed, lab, task and case.
  Rng rng(const Task& task, const Case& c) const { return Rng(derive_seed(run_seed, manifest.id, task.name, c.name)); }
  // A stream of the case's own for one purpose ("masks", "patches"): what a driver draws between
  // launches, from the run seed, so student code can predict none of it.
  Rng draws(const std::string& purpose, const Task& task, const Case& c) const {
    return Rng(derive_seed(run_seed, manifest.id, purpose + " " + task.name, c.name));
  }
  // The stream a case's inputs are drawn from: a timing case's are the same for every task of a run
  // (so its costly reference is computed once and shared), every other case's are the task's own.
  Rng inputs_rng(const Task& task, const Case& c) const {
    return c.timing ? Rng(derive_seed(run_seed, manifest.id, "timing inputs", c.name)) : rng(task, c);
  }
};

// How many input sets a case gets: a timing case rotates through several, in distinct buffers and
// with different contents, so a kernel cannot reuse an earlier result by pointer or by content.
inline constexpr int kTimingSets = 3;
inline int input_sets(const Case& c) { return c.timing ? kTimingSets : 1; }

// Words of an input set rewritten after its transform, before a launch: (word index, the word as it
// lies on the device). A handful at seeded places make every launch's input differ from the last
// in a way no single word reveals: a result cached from an earlier launch and corrected for the
// transform misses them, and so does a kernel that reads only a sample of its input.
using WordPatches = std::vector<std::pair<std::size_t, std::uint32_t>>;

// `count` patches at distinct places among `words` words, drawn from `rng`: each place, then its
// word from word_at(rng, place). `first`, where given, is the first place (a lab that must patch its
// last element). The driver's word_at also follows a patch into the expected output.
template <typename WordAt>
WordPatches draw_patches(Rng& rng, std::size_t count, std::size_t words, WordAt word_at,
                         std::optional<std::size_t> first = std::nullopt) {
  WordPatches patches;
  if (words < count) throw std::logic_error("draw_patches: more patches than words");
  while (patches.size() < count) {
    const auto at = patches.empty() && first
                        ? *first
                        : static_cast<std::size_t>(rng.integer(0, static_cast<std::int64_t>(words) - 1));
    if (std::any_of(patches.begin(), patches.end(), [at](const auto& p) { return p.first == at; })) continue;
    const std::uint32_t word = word_at(rng, at);
    patches.emplace_back(at, word);
  }
  return patches;
}

// The bits a lab's masks may flip: a mask is (random & may) | always, so `always` keeps it from
// being the identity (bit 0) and `may` keeps the numbers what the contract allows (finite floats:
// sign and mantissa; keys: any bit).
struct MaskBits {
  std::uint32_t may = 0xFFFFFFFFu;
  std::uint32_t always = 1u;
};

// The masks a driver gives its input sets at each load, from the case's "masks" stream.
class MaskDraws {
 public:
  MaskDraws(const RunContext& ctx, const Task& task, const Case& c, MaskBits bits = {})
      : rng_(ctx.draws("masks", task, c)), bits_(bits) {
    if ((bits.may & ~bits.always) == 0) throw std::logic_error("MaskDraws: the MaskBits let no bit of a mask vary");
  }
  WordTransform next() { return WordTransform{(static_cast<std::uint32_t>(rng_.next()) & bits_.may) | bits_.always}; }
  // A mask other than `current`, the set's mask at its previous launch: a family of few bits (matmul's
  // no-cancel inputs flip 8, 256 masks) repeats one now and then, and that launch would see what the
  // set's previous one saw (FreshLaunches stops the run).
  WordTransform next_other(const WordTransform& current) {
    WordTransform t = next();
    while (t == current) t = next();
    return t;
  }

 private:
  Rng rng_;
  MaskBits bits_;
};

// A case's input held once on the device, untouched, when the case has several input sets: before
// each launch of a timing case a set is rewritten from it with a fresh transform, on the device
// (Device::copy_transformed), so no upload lies inside the timed loop and no two launches see the
// same contents. With one set there is no copy: the identity uploads the input itself.
class PristineInput {
 public:
  PristineInput(Device& device, const void* input, std::size_t bytes, int sets)
      : device_(device), input_(input), bytes_(bytes) {
    if (sets > 1) {
      pristine_ = device.allocate(bytes);
      pristine_->upload(input, bytes);
    }
  }
  // `to` holds the input with every word transformed by `t`, then `patches` written over it.
  void write(Buffer& to, const WordTransform& t, const WordPatches& patches = {}) const {
    if (t.identity())
      to.upload(input_, bytes_);
    else if (pristine_)
      device_.copy_transformed(*pristine_, to, t);
    else
      throw std::logic_error("PristineInput: a transformed input needs more than one input set");
    for (const auto& [index, word] : patches) to.upload_range(&word, index * sizeof word, sizeof word);
  }

 private:
  Device& device_;
  const void* input_;
  std::size_t bytes_;
  std::unique_ptr<Buffer> pristine_;
};

// A lab's data for a case (its input, the reference output), made once per run for the timing case,
// whose inputs every task times (a calibration may use them too), and afresh for every other case.
template <typename Data>
class TimingCaseData {
 public:
  template <typename Make>
  std::shared_ptr<const Data> get(const Case& c, Make make) {
    if (c.timing && kept_ && kept_name_ == c.name) return kept_;
    std::shared_ptr<const Data> made = make();
    if (c.timing) {
      kept_ = made;
      kept_name_ = c.name;
    }
    return made;
  }

 private:
  std::shared_ptr<const Data> kept_;
  std::string kept_name_;
};

// A buffer student code receives (allocated with Device::allocate_guarded), checked after every
// launch: its guard zones, and for an input that its contents are unchanged.
struct Watched {
  Buffer* buffer;
  std::string name;  // as the contract names it: "a", "out"
  std::size_t element_bytes;
  const void* original = nullptr;        // an input's contents (buffer->size() bytes); null for outputs
  WordTransform transform = {};          // the buffer holds `original` with every word transformed so,
  const WordPatches* patches = nullptr;  // and then these words written over it
  // The buffer holds the above when a launch starts, and the launch rewrites it (an in-place sort):
  // its guards are checked after the launch, its contents by the lab's check of the output.
  bool in_place = false;
};

struct ExactOutput {
  Buffer* buffer;
  const void* expected;                  // buffer->size() bytes
  WordTransform transform = {};          // the buffer should hold `expected` with every word transformed so,
  const WordPatches* patches = nullptr;  // and these words over it (where the input's patches land)
};

// One case, ready to run: the runner prepares, launches, checks, and for a timing case repeats the
// launch under the device clock and checks the output of a timed launch again.
struct Launchable {
  int sets = 1;  // input sets, 0..sets-1: input_sets(case)
  // Before every launch of a set: fill its outputs with kPoisonByte, and restore inputs a launch
  // changes (an in-place sort), so each launch, timed ones included, does the whole job.
  std::function<void(int set)> prepare;
  std::function<void(int set)> launch;       // call the student's function once
  std::function<Comparison(int set)> check;  // fetch the set's outputs, compare with the reference
  // For warm-up and timed launches: a cheaper check (sampled, or linear-time), empty: `check`.
  std::function<Comparison(int set)> quick_check;
  std::function<std::vector<Watched>(int set)> watched;  // the set's buffers student code receives
  // Outputs whose right contents are known byte for byte (exact labs): warm-up and timed launches
  // compare random parts of them, and only a difference costs a full `check`. Empty: `quick_check`.
  std::function<std::vector<ExactOutput>(int set)> exact_outputs;
  // Puts input contents `content` (0..sets-1) into the input buffers of `set`. The runner moves
  // contents between sets during timing, so the same buffer never holds the same data twice in a
  // row and a result cached by pointer is stale. Set i starts with contents i. Required for a timing
  // case, whose launches the framework holds to it (FreshLaunches in execute.cpp): before every
  // warm-up and timed launch, what `watched` declares the set's inputs hold (sampled) and its
  // `arguments` must differ from what they were at the set's previous launch, or the run stops as
  // the grader's failure.
  std::function<void(int set, int content)> load;
  // The launch's arguments besides buffers that `load` changes (a lab whose new contents are new
  // parameters, such as the Mandelbrot lab's window), as text. Empty: none.
  std::function<std::string(int set)> arguments;
  double work = 0;  // what one launch must do, in the driver's rate unit
  // Host data of the driver's that its checks rely on besides the inputs' originals and the exact
  // outputs (e.g. a reference compared within a tolerance): checksummed around every launch where
  // the device reaches host memory. Empty: none.
  std::function<std::vector<HostRegion>(int set)> host_data;
  // The least a correct launch must do, for the speed of light: bytes read and written, flops.
  double least_bytes = 0;
  double flops = 0;
  // Inputs and outputs in host memory (hello): nothing else shows that the device computed
  // the outputs, so a launch whose student code started no kernel (counted by the launch guards,
  // grader/allowlist/*launch*) fails as a result computed on the host. Only where `work` > 0.
  bool kernel_required = false;
};

CaseResult execute(const RunContext& ctx, const Case& c, const Launchable& launchable);

// The chunks (offset, bytes) of a `size`-byte buffer that the framework compares after a warm-up or
// timed launch: all of it, in pieces, when small or without `rng`; else the first and the last
// 64 KiB and 14 more at places drawn from `rng`. A lab that checks an output its own way samples the
// same chunks.
std::vector<std::pair<std::size_t, std::size_t>> chunks_to_compare(std::size_t size, Rng* rng);

// Guard zones around the buffers student code allocates itself (cudaMalloc, clCreateBuffer): on,
// except under the sanitizer, whose memcheck must see an access past the end of the allocation.
void set_student_buffer_guards(bool on);
// How many kernels student code has started in this process (the launch guards count them).
unsigned long student_kernel_launches();
// The guard damage of a buffer student code allocated and still holds (kept across calls), or "".
std::string student_kept_buffer_damage();

// Median time in ms of one launch of `probe` on the device, after warm-up launches, each timed
// launch after a cache flush: for calibrations.
double median_launch_ms(const RunContext& ctx, const Probe& probe);
// Median time in ms of `launch` on the device, after warm-up launches: for calibrations.
// `prepare` runs, untimed, before every launch (e.g. fresh input for an in-place sort).
double median_launch_ms(
    const RunContext& ctx, const std::function<void()>& launch, const std::function<void()>& prepare = [] {});
// Median wall-clock time in ms of `work` on the host, over `repeats` runs: for CPU calibrations.
double median_host_ms(const std::function<void()>& work, int repeats);
// The CPU calibrations of a lab: `work` (in the lab's unit, e.g. bytes or flops) done by the
// one-core and the all-cores reference, each the median of `repeats` runs, as rates in units 1e9/s
// in cal.rates["cpu_1core"] and ["cpu_all_cores"]; a heartbeat between the two, which may be slow.
void measure_cpu_rates(const RunContext& ctx, Calibration& cal, double work, const std::function<void()>& one_core,
                       const std::function<void()>& all_cores, int repeats = 3);

class LabDriver {
 public:
  virtual ~LabDriver() = default;
  virtual CaseResult run(const RunContext& ctx, const Task& task, const Case& c) = 0;
  // The unit of Launchable::work per second: "GB/s" (work in bytes; the runner then also measures
  // the device's copy bandwidth), "GFLOP/s", "Gkeys/s", "Giter/s" (iterations of a loop, e.g. escape-time counts).
  virtual std::string rate_unit() const { return "GB/s"; }
  // What that work counts, for readers of the report and the docs: "bytes read and written once".
  virtual std::string rate_work() const { return "bytes read and written once"; }
  // The lab's calibrations (a vendor library, the harness's naive kernel, the CPU) for the timing
  // case `timing` come in two steps, so a run given rates measured earlier (gpulab check's cache, a
  // batch's trusted calibration) skips only the measuring:
  // - prepare: what a task's timing needs even then, cheaply (allocations, no timing): the probes
  //   that are measured again interleaved with the timed launches, in calibration.probes;
  // - measure: the rates, in the rate unit, into calibration.rates (and calibration.library);
  //   called after prepare, only when no earlier rates were given.
  virtual void prepare_calibration(const RunContext&, const Case& /*timing*/, Calibration& /*calibration*/) {}
  virtual void measure_calibration(const RunContext&, const Case& /*timing*/, Calibration& /*calibration*/) {}
};

// Defined once per lab (labs/NN-<name>/grader/); the runner executable of a lab links exactly one.
std::unique_ptr<LabDriver> make_lab_driver();

// Reads an integer case parameter, naming the case and the key when it is missing or wrong.
std::int64_t case_int(const Case& c, const char* key);

// The student function a task names, from one signature's table of the lab's contract
// (lab_contract.hpp, made from lab.toml); null when the function has another signature.
template <typename Function>
Function* lookup_function(const std::map<std::string, Function*>& functions, const std::string& name) {
  auto it = functions.find(name);
  return it == functions.end() ? nullptr : it->second;
}

// As lookup_function, for a binding that calls one signature: another is the manifest's mistake.
template <typename Function>
Function* find_function(const std::map<std::string, Function*>& functions, const std::string& name) {
  if (Function* f = lookup_function(functions, name)) return f;
  throw std::invalid_argument("the manifest names function '" + name +
                              "', which does not have the signature this lab's bindings call: see its [signatures]");
}

}  // namespace gpulab
