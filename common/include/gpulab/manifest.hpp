// A lab's manifest (labs/NN-name/lab.toml): its student files, tasks, cases and thresholds.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpulab {

enum class DeviceClass { gpu, cpu };
const char* to_string(DeviceClass c);

// A malformed manifest: the message names the file, the line and the fix.
class ManifestError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A task passes its threshold when the measured ratio (see `metric`) reaches the bound for the
// class of device that ran it ("gpu", "cpu"), or for that backend and class where the manifest
// names one ("opencl_gpu": compilers differ). A device without a bound is graded on correctness.
struct Threshold {
  std::string metric;  // a name from metrics(): "copy_fraction", "naive_speedup", ...
  std::map<std::string, double> bounds;
  std::optional<double> bound(const std::string& backend, DeviceClass c) const {
    if (auto it = bounds.find(backend + "_" + to_string(c)); it != bounds.end()) return it->second;
    if (auto it = bounds.find(to_string(c)); it != bounds.end()) return it->second;
    return std::nullopt;
  }
};

// A higher bound on the threshold's metric that earns `points` more on top of the task's (a bonus
// tier): where the reference is far faster than the threshold asks, the course rewards coming
// close to it without raising the bound that students already meet.
struct Tier {
  Threshold bounds;  // same metric as the task's threshold; each bound above the threshold's
  double points = 0;
};

struct Task {
  std::string name;
  std::string title;
  std::string function;   // the student function that implements it, named in reports
  std::string signature;  // the name of its shape in the lab's [signatures]; empty: the manifest has none
  int function_line = 0;  // where lab.toml names `function` (the contract's declarations point there)
  double points = 0;
  bool bonus = false;  // its points come on top; failing it does not fail the lab
  std::optional<Threshold> threshold;
  std::optional<Tier> tier;
};

// One shape of the lab's student functions, the contract the grader calls them by: per backend, its C++
// function type, e.g. cuda = "void(const float* in, float* out, int rows, int cols)". Declared once in
// lab.toml ([signatures.<name>]); the backends' declarations and tables are made from it (contract.hpp).
struct Signature {
  std::string name;
  std::map<std::string, std::string> types;  // backend -> function type
  std::map<std::string, int> lines;          // backend -> its line in lab.toml
};

struct Case {
  std::string name;
  bool timing = false;  // the timed case of the device class
  // A timing case's sizes that every run draws anew: each named parameter loses a seeded 0..N
  // (`trim = { n = 255 }`), so the timed shape cannot be listed in a kernel and meets a tail.
  std::vector<std::pair<std::string, std::int64_t>> trim;
  bool hidden = false;               // runs only in instructor grading (runner --hidden-cases)
  bool large = false;                // a large or stress case (draw_large_cases): near the timing size
  std::vector<DeviceClass> devices;  // empty: every class
  std::vector<std::string> tasks;    // empty: every task; else only these (e.g. lengths only "any-n" takes)
  nlohmann::json params;             // lab-specific fields (sizes, text, distributions)
  bool runs_on(DeviceClass c) const;
  bool applies_to(const std::string& task) const;
};

// Seeded random cases (a [[random]] block of lab.toml): drawn anew every run from the run seed, so a
// kernel cannot be tuned to the listed shapes. Over the cases one run draws from a block, every size
// dimension is a multiple of every tile size and a non-multiple of every one, in each size region
// (tiny: below the smallest tile; about one block: the largest tile, +- a little; many blocks: more
// than twice the largest tile, up to `max`), shapes are square and non-square, and every value of
// each `values` list is used. Grading draws `hidden` more, marked hidden.
//
// Beyond `max`, up to the size a task is timed at: on a device class whose timing case times some of
// the block's tasks, every run also draws large cases for those tasks (draw_large_cases): one just
// below the timing size that divides by no tile (in every dimension at once), one a multiple of every
// tile, one beside a power of two (with several dimensions, each dimension in each of these roles in
// turn), and one case per `stress` entry just below the timing size. So a kernel that goes wrong only above some size, on a tail or a partial tile, fails
// for every such size up to the timed one, and inputs whose statistics break narrow arithmetic (one
// value repeated, saturated pixels, extreme magnitudes) are drawn where they overflow.
struct RandomCases {
  enum class Role { tiny, block_multiple, block_other, many_multiple, many_other };
  std::vector<std::string> tasks;   // empty: every task; else only these
  std::vector<std::string> dims;    // size parameters, e.g. {"m", "n", "k"}; named in this order
  std::int64_t min = 1, max = 0;    // every dimension lies within [min, max]
  std::vector<std::int64_t> tiles;  // tile and block sizes the lab's kernels plausibly use
  bool power_of_two = false;        // every size a power of two (for tasks that require it)
  int count = 0;                    // drawn into every run
  int hidden = 0;                   // drawn in addition when grading (runner --hidden-cases)
  std::vector<std::pair<std::string, std::vector<nlohmann::json>>> values;  // each value drawn in every run
  // Parameter sets drawn just below the timing size in every run (`stress = [{ distribution = "equal" }]`):
  // the inputs that break narrow counters, packed accumulators and low precision at scale.
  std::vector<nlohmann::json> stress;
  // The size roles one run must cover in each dimension (power-of-two sizes: tiny, one block, many).
  std::vector<Role> roles() const;
  // The fewest cases that cover every role, the square shape and every value.
  int fewest_cases() const;
  // The cases each run adds after the blocks' draws so that, for every power of two up to twice the
  // largest tile, some size is an odd multiple of it (none for power-of-two blocks).
  int residue_count() const;
};

struct Manifest {
  std::filesystem::path path;
  std::string id;    // "02-transpose": the folder name
  std::string name;  // "transpose": what LAB= matches
  std::string title;
  std::map<std::string, std::vector<std::string>> files;  // backend -> student files
  std::vector<std::string> forbidden;  // what student files must not mention (case-insensitive), e.g. "cublas"
  // Symbols this lab's compiled files may reference beyond grader/allowlist/<backend>.txt (hello copies
  // to and from the host: "cudaMemcpy"), and headers they may not include beyond grader/allowlist/headers.txt.
  std::vector<std::string> allow;
  std::vector<std::string> forbidden_headers;
  double timeout_s = 60;  // seconds without progress before a run is declared hung
  // GiB of host memory the reference solution's run needs (the streams lab pins gigabytes): a batch
  // gives this lab's runs at least that much, whatever its --memory; 0: the batch's limit.
  double memory_gib = 0;
  int warmup = 3;
  int repeats = 15;
  // The largest case the sanitizer gate runs (its size: case_size); 0: every correctness case.
  // Instrumented launches are tens of times slower, and the small cases find the same mistakes.
  std::int64_t sanitize_max_size = 0;
  // The Nsight Compute counters that show this lab's lesson (`gpulab check --profile`, CUDA), by the
  // names of grader/cli/gpu_tools/profiler.hpp: "global_loads", "shared_bank_conflicts", "occupancy", ...
  std::vector<std::string> profile;
  std::vector<Signature> signatures;  // [signatures]: empty in a manifest that declares none (test fixtures)
  std::vector<Task> tasks;
  std::vector<Case> cases;
  std::vector<RandomCases> random;  // drawn per run by with_random_cases

  const Task* find_task(const std::string& name) const;
  const Signature* find_signature(const std::string& name) const;
  std::vector<const Case*> cases_for(DeviceClass c) const;
  // The cases one task runs on one device class.
  std::vector<const Case*> cases_for(DeviceClass c, const std::string& task) const;
  // Student files of one backend whose names end with `extension` (e.g. ".cl").
  std::vector<std::string> files_with_extension(const std::string& backend, const std::string& extension) const;
  bool has_hidden_cases() const;
  // The product of the case's size parameters (the dims its [[random]] blocks name: n; rows, cols;
  // m, n, k); empty when it has none (a case made from an image file).
  std::optional<double> case_size(const Case& c) const;
};

// The manifest as students see it: without the cases marked `hidden = true`, which only instructor
// grading runs, so students cannot tune their code to them.
Manifest without_hidden_cases(Manifest manifest);

// The random cases of one run: `count` per [[random]] block, and with `hidden` also `hidden` more per
// block, marked hidden; then each block's residue_count() cases, visible, whose sizes reach every
// power of two's odd multiples ("random 9: 48x257 (16 x odd, odd)"). The same seed draws the same
// cases, named "random 3: 96x47x129 inputs=uniform" (hidden ones "hidden random 3: ..."), so `SEED=`
// reproduces a run.
std::vector<Case> draw_random_cases(const Manifest& manifest, std::uint64_t run_seed, bool hidden);
// The large and stress cases of one run on a device class (see RandomCases): for every block, for
// each timing case of the class that times some of its tasks, three large cases (four with several
// dimensions) and one per stress entry ("large 2: 268435200 distribution=coarse", "stress 1: 268435451 distribution=equal"); with
// `hidden`, one hidden large case per block and timing case instead, from a stream of its own.
std::vector<Case> draw_large_cases(const Manifest& manifest, std::uint64_t run_seed, bool hidden, DeviceClass device);
// The manifest with its random cases for this run added before its timing cases; given the device
// class, also its large and stress cases, and its timing cases' trimmed sizes (Case::trim).
Manifest with_random_cases(Manifest manifest, std::uint64_t run_seed, bool hidden,
                           std::optional<DeviceClass> device = std::nullopt);

Manifest load_manifest(const std::filesystem::path& path);
// Every labs/*/lab.toml under `labs_root`, in folder order. Broken manifests throw.
std::vector<Manifest> load_all_manifests(const std::filesystem::path& labs_root);

}  // namespace gpulab
