#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <set>
#include <string>

#include <unistd.h>

#include "gpulab/manifest.hpp"

using namespace gpulab;
namespace fs = std::filesystem;

namespace {
fs::path write_manifest(const std::string& text) {
  // A folder of its own per call and process: CTest runs test cases in parallel.
  static int calls = 0;
  const fs::path dir = fs::temp_directory_path() /
                       ("gpulab-manifest-test-" + std::to_string(::getpid()) + "-" + std::to_string(++calls)) /
                       "07-example";
  fs::create_directories(dir);
  std::ofstream(dir / "lab.toml") << text;
  return dir / "lab.toml";
}

const char* kValid = R"(
name = "example"
title = "An example lab"
timeout_s = 12
repeats = 20

[files]
cuda = ["example.cu"]
opencl = ["example.cl", "example_opencl.cpp"]

[[tasks]]
name = "naive"
function = "example_naive"
points = 2

[[tasks]]
name = "fast"
function = "example_fast"
points = 3
threshold = { metric = "copy_fraction", gpu = 0.5, opencl_gpu = 0.4 }

[[cases]]
name = "tiny"
rows = 1
cols = 3

[[cases]]
name = "big"
rows = 4096
cols = 4096
timing = true
devices = ["gpu"]
)";

std::string error_of(const std::string& text) {
  try {
    load_manifest(write_manifest(text));
  } catch (const ManifestError& e) { return e.what(); }
  return "no error";
}
}  // namespace

TEST_CASE("a valid manifest is read with its files, tasks, thresholds and cases") {
  const Manifest m = load_manifest(write_manifest(kValid));
  CHECK(m.id == "07-example");
  CHECK(m.name == "example");
  CHECK(m.timeout_s == 12);
  CHECK(m.memory_gib == 0);  // the batch's limit
  CHECK(m.warmup == 3);
  CHECK(m.repeats == 20);
  CHECK(m.files.at("opencl") == std::vector<std::string>{"example.cl", "example_opencl.cpp"});
  CHECK(m.files_with_extension("opencl", ".cl") == std::vector<std::string>{"example.cl"});
  REQUIRE(m.tasks.size() == 2);
  CHECK_FALSE(m.tasks[0].threshold);
  REQUIRE(m.find_task("fast"));
  CHECK(m.find_task("fast")->threshold->bound("cuda", DeviceClass::gpu) == 0.5);
  CHECK(m.find_task("fast")->threshold->bound("opencl", DeviceClass::gpu) == 0.4);
  CHECK_FALSE(m.find_task("fast")->threshold->bound("cuda", DeviceClass::cpu));
  CHECK(m.find_task("missing") == nullptr);
  CHECK(m.cases[0].params.at("cols") == 3);
  CHECK_FALSE(m.cases[0].params.contains("name"));
  CHECK(m.cases_for(DeviceClass::gpu).size() == 2);
  CHECK(m.cases_for(DeviceClass::cpu).size() == 1);
}

TEST_CASE("the manifests of the course's labs are valid") {
  const auto labs = load_all_manifests(fs::path(GPULAB_REPO) / "labs");
  REQUIRE(labs.size() >= 2);
  for (const auto& m : labs) {
    CAPTURE(m.id);
    CHECK(m.files.count("cuda"));
    CHECK(m.files.count("opencl"));
    CHECK_FALSE(m.cases_for(DeviceClass::gpu).empty());
    CHECK_FALSE(m.cases_for(DeviceClass::cpu).empty());
  }
}

TEST_CASE("a TOML syntax error names the file, line and column") {
  const std::string e = error_of("name = \"x\"\ntitle = \n");
  CHECK(e.find("lab.toml:2:") != std::string::npos);
  CHECK(e.find("TOML syntax error") != std::string::npos);
}

TEST_CASE("a missing or mistyped key is named with its line and what it should be") {
  CHECK(error_of("title = \"t\"\n").find("missing key 'name'") != std::string::npos);
  const std::string e = error_of("name = 3\ntitle = \"t\"\n");
  CHECK(e.find("lab.toml:1: 'name' must be") != std::string::npos);
}

TEST_CASE("manifest mistakes that would make grading meaningless are rejected") {
  std::string text = kValid;
  CHECK(error_of(std::string(text).replace(text.find("copy_fraction"), 13, "speed")).find("unknown metric 'speed'") !=
        std::string::npos);
  CHECK(error_of(std::string(text).replace(text.find("gpu = 0.5"), 9, "gpu = -1")).find("positive") !=
        std::string::npos);
  CHECK(error_of(std::string(text).replace(text.find("gpu = 0.5"), 9, "tpu = 0.5")).find("unknown bound 'tpu'") !=
        std::string::npos);
  CHECK(error_of(std::string(text).replace(text.find("repeats = 20"), 12, "repeats = 3")).find("at least 10") !=
        std::string::npos);
  CHECK(error_of(std::string(text).replace(text.find("repeats = 20"), 12, "repeats = 20\nmemory_gib = -2"))
            .find("'memory_gib' must be 0") != std::string::npos);
  CHECK(load_manifest(
            write_manifest(std::string(text).replace(text.find("repeats = 20"), 12, "repeats = 20\nmemory_gib = 20")))
            .memory_gib == 20);
  CHECK(error_of(std::string(text).replace(text.find("devices = [\"gpu\"]"), 17, "devices = [\"tpu\"]"))
            .find("\"gpu\" or \"cpu\"") != std::string::npos);
  const std::string two_timing = text + "\n[[cases]]\nname = \"big2\"\nrows = 1\ncols = 1\ntiming = true\n";
  CHECK(error_of(two_timing).find("more than one timing case for task 'naive' on gpu") != std::string::npos);
  const std::string duplicate = text + "\n[[tasks]]\nname = \"fast\"\nfunction = \"f\"\n";
  CHECK(error_of(duplicate).find("task 'fast' is defined twice") != std::string::npos);
}

TEST_CASE("tasks may each have their own timing case, limited to them by the case's task list") {
  std::string text = kValid;
  text.replace(text.find("devices = [\"gpu\"]"), 17, "devices = [\"gpu\"]\ntasks = [\"fast\"]");
  text += "\n[[cases]]\nname = \"big-naive\"\ntasks = [\"naive\"]\nrows = 1024\ncols = 1024\ntiming = true\n";
  const Manifest m = load_manifest(write_manifest(text));
  CHECK(m.cases_for(DeviceClass::gpu, "fast").back()->name == "big");
  CHECK(m.cases_for(DeviceClass::gpu, "naive").back()->name == "big-naive");
}

TEST_CASE("a missing manifest is reported by path") {
  CHECK_THROWS_WITH_AS(load_manifest("/nonexistent/lab.toml"), doctest::Contains("no such manifest"), ManifestError);
}

TEST_CASE("a case is visible unless it says hidden = true, and only instructor grading keeps hidden cases") {
  std::string text = kValid;
  text += "\n[[cases]]\nname = \"secret\"\nrows = 41\ncols = 59\nhidden = true\n";
  const Manifest m = load_manifest(write_manifest(text));
  REQUIRE(m.cases.size() == 3);
  CHECK_FALSE(m.cases[0].hidden);
  CHECK(m.cases[2].hidden);
  CHECK_FALSE(m.cases[2].params.contains("hidden"));  // a grading flag, not a lab parameter
  CHECK(m.has_hidden_cases());
  CHECK(m.cases_for(DeviceClass::cpu, "naive").size() == 2);

  const Manifest students = without_hidden_cases(m);
  REQUIRE(students.cases.size() == 2);
  CHECK(students.cases[0].name == "tiny");
  CHECK(students.cases[1].name == "big");
  CHECK_FALSE(students.has_hidden_cases());
  CHECK_FALSE(load_manifest(write_manifest(kValid)).has_hidden_cases());
}

TEST_CASE("a hidden flag that is not true or false, or a hidden timing case, is a clear error") {
  std::string text = kValid;
  CHECK(error_of(text + "\n[[cases]]\nname = \"s\"\nrows = 1\ncols = 1\nhidden = \"yes\"\n")
            .find("lab.toml:38: 'hidden' must be true or false") != std::string::npos);
  const std::string hidden_timing = text.replace(text.find("timing = true"), 13, "timing = true\nhidden = true");
  CHECK(error_of(hidden_timing).find("case 'big' is both hidden and a timing case") != std::string::npos);
}

TEST_CASE(
    "every task of the course's labs has visible cases, and hidden ones exist only in the instructor's repository") {
  int hidden = 0;
  for (const auto& m : load_all_manifests(fs::path(GPULAB_REPO) / "labs")) {
    const Manifest students = without_hidden_cases(m);
    for (const auto& task : m.tasks) {
      CAPTURE(m.id);
      CAPTURE(task.name);
      CHECK_FALSE(students.cases_for(DeviceClass::cpu, task.name).empty());
    }
    hidden += static_cast<int>(m.cases.size() - students.cases.size());
  }
  // The student release (no solutions/) has its hidden cases removed.
  const bool instructor_repository = fs::exists(fs::path(GPULAB_REPO) / "solutions");
  CHECK((hidden > 0) == instructor_repository);
}

namespace {

bool divides_none(std::int64_t size, const std::vector<std::int64_t>& tiles) {
  return std::none_of(tiles.begin(), tiles.end(), [size](std::int64_t t) { return size % t == 0; });
}

bool divides_all(std::int64_t size, const std::vector<std::int64_t>& tiles) {
  return std::all_of(tiles.begin(), tiles.end(), [size](std::int64_t t) { return size % t == 0; });
}

// The cases of one block in one batch (visible or hidden) cover what [[random]] promises.
void check_coverage(const RandomCases& r, const std::vector<const Case*>& cases) {
  REQUIRE(!cases.empty());
  const std::int64_t smallest = r.tiles.front(), largest = r.tiles.back();
  bool square = false, non_square = false;
  for (const auto& dim : r.dims) {
    CAPTURE(dim);
    bool multiple = false, non_multiple = false, tiny = false, one_block = false, many = false;
    for (const Case* c : cases) {
      const std::int64_t size = c->params.at(dim).get<std::int64_t>();
      CHECK(size >= r.min);
      CHECK(size <= r.max);
      if (r.power_of_two) CHECK((size & (size - 1)) == 0);
      multiple |= divides_all(size, r.tiles);
      non_multiple |= divides_none(size, r.tiles);
      tiny |= size < smallest;
      one_block |= size >= largest / 2 && size <= 2 * largest && size >= smallest;
      many |= size > 2 * largest;
    }
    CHECK(multiple);
    CHECK(non_multiple);
    CHECK(tiny);
    CHECK(one_block);
    CHECK(many);
  }
  for (const Case* c : cases) {
    std::set<std::int64_t> sizes;
    for (const auto& dim : r.dims) sizes.insert(c->params.at(dim).get<std::int64_t>());
    square |= sizes.size() == 1;
    non_square |= sizes.size() == r.dims.size();
    CHECK(c->tasks == r.tasks);
    CHECK_FALSE(c->timing);
    CHECK_FALSE(c->large);
  }
  if (r.dims.size() > 1) {
    CHECK(square);
    CHECK(non_square);
  }
  for (const auto& [key, options] : r.values)
    for (const auto& value : options) {
      CAPTURE(key);
      CAPTURE(value.dump());
      CHECK(std::any_of(cases.begin(), cases.end(), [&](const Case* c) { return c->params.at(key) == value; }));
    }
}

}  // namespace

TEST_CASE(
    "every run's random cases cover multiples and non-multiples of every tile, each size region, square "
    "and non-square shapes and every listed value, visible and hidden alike") {
  for (const auto& m : load_all_manifests(fs::path(GPULAB_REPO) / "labs")) {
    CAPTURE(m.id);
    REQUIRE_FALSE(m.random.empty());
    for (std::uint64_t seed = 1; seed <= 60; ++seed) {
      const auto drawn = draw_random_cases(m, seed * 0x9E3779B97F4A7C15ull, true);
      std::size_t at = 0;
      for (const auto& r : m.random) {
        std::vector<const Case*> visible, hidden;
        for (int i = 0; i < r.count; ++i) visible.push_back(&drawn.at(at++));
        for (int i = 0; i < r.hidden; ++i) hidden.push_back(&drawn.at(at++));
        for (const Case* c : visible) CHECK((!c->hidden && c->name.rfind("random ", 0) == 0));
        for (const Case* c : hidden) CHECK((c->hidden && c->name.rfind("hidden random ", 0) == 0));
        check_coverage(r, visible);
        check_coverage(r, hidden);
      }
      for (const auto& r : m.random) at += static_cast<std::size_t>(r.residue_count());
      CHECK(at == drawn.size());
    }
  }
}

// A kernel right only where a larger tile divides the size (a k slice of half a tile dropped: 16 mod
// 32) is wrong for sizes that one tile divides and twice it does not; the draws must reach them.
TEST_CASE("random cases of many blocks reach every tile times an odd number, not only multiples of every tile") {
  for (const auto& m : load_all_manifests(fs::path(GPULAB_REPO) / "labs")) {
    CAPTURE(m.id);
    std::vector<std::map<std::int64_t, bool>> reached(m.random.size());
    for (std::uint64_t seed = 1; seed <= 60; ++seed) {
      const auto drawn = draw_random_cases(m, seed * 0x9E3779B97F4A7C15ull, true);
      std::size_t at = 0;
      for (std::size_t b = 0; b < m.random.size(); ++b) {
        const RandomCases& r = m.random[b];
        for (int i = 0; i < r.count + r.hidden; ++i, ++at)
          for (const auto& dim : r.dims) {
            const std::int64_t size = drawn.at(at).params.at(dim).get<std::int64_t>();
            for (const std::int64_t tile : r.tiles)
              if (size > 2 * r.tiles.back() && size % tile == 0 && size % (2 * tile) != 0) reached[b][tile] = true;
          }
      }
    }
    for (std::size_t b = 0; b < m.random.size(); ++b) {
      const RandomCases& r = m.random[b];
      if (r.power_of_two || r.tiles.size() < 2) continue;
      for (std::size_t k = 0; k + 1 < r.tiles.size(); ++k) {
        const std::int64_t tile = r.tiles[k], low = 2 * r.tiles.back() / tile + 1, high = r.max / tile;
        if (high < low + 1) continue;  // no odd factor sure to fit
        CAPTURE(b);
        CAPTURE(tile);
        CHECK(reached[b][tile]);
      }
    }
  }
}

// A kernel wrong only at one residue (the last element dropped when n = 16 mod 32, a level skipped
// when n = 64 mod 512) must meet it in every run, whatever tiles the lab names: some size in every
// dimension is an odd multiple of each power of two up to twice the largest tile.
TEST_CASE(
    "every run has, in every dimension, a size that is an odd multiple of each power of two up to twice the largest "
    "tile") {
  for (const auto& m : load_all_manifests(fs::path(GPULAB_REPO) / "labs")) {
    CAPTURE(m.id);
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      const auto drawn = draw_random_cases(m, seed * 0x9E3779B97F4A7C15ull, false);
      std::size_t at = 0;
      for (const auto& r : m.random) at += static_cast<std::size_t>(r.count);
      for (const auto& r : m.random) {
        std::map<std::string, std::set<int>> reached;  // per dimension, the exponents j of 2^j x odd
        for (int i = 0; i < r.residue_count(); ++i, ++at)
          for (const auto& dim : r.dims) {
            const std::int64_t size = drawn.at(at).params.at(dim).get<std::int64_t>();
            CHECK((size >= r.min && size <= r.max));
            reached[dim].insert(std::countr_zero(static_cast<std::uint64_t>(size)));
          }
        if (r.power_of_two) continue;
        for (int j = 0; (std::int64_t{1} << j) <= std::min(2 * r.tiles.back(), r.max); ++j)
          for (const auto& dim : r.dims) {
            CAPTURE(dim);
            CAPTURE(j);
            CHECK(reached[dim].contains(j));
          }
      }
      CHECK(at == drawn.size());
    }
  }
}

TEST_CASE("random cases come before the timing cases, and hidden ones only when grading asks for them") {
  for (const Manifest& lab : load_all_manifests(fs::path(GPULAB_REPO) / "labs")) {
    CAPTURE(lab.id);
    const Manifest listed = without_hidden_cases(lab);
    std::size_t visible_random = 0, hidden_random = 0;
    for (const auto& r : listed.random) visible_random += r.count + r.residue_count(), hidden_random += r.hidden;
    const Manifest student = with_random_cases(listed, 3, false);
    CHECK(student.cases.size() == listed.cases.size() + visible_random);
    CHECK_FALSE(student.has_hidden_cases());
    const auto timing = [](const Case& c) { return c.timing; };
    const auto random = [](const Case& c) { return c.name.find("random") != std::string::npos; };
    CHECK(std::none_of(std::find_if(student.cases.begin(), student.cases.end(), timing), student.cases.end(), random));
    const Manifest grading = with_random_cases(listed, 3, true);
    CHECK(grading.cases.size() == listed.cases.size() + visible_random + hidden_random);
    // The hidden draw does not change the visible one: a student's run shows the same visible cases.
    const auto visible_names = [](const Manifest& m) {
      std::vector<std::string> names;
      for (const auto& c : m.cases)
        if (!c.hidden) names.push_back(c.name);
      return names;
    };
    CHECK(visible_names(student) == visible_names(grading));
  }
}

namespace {

// The timing size of `dim` for the block's tasks on `device`: the largest over the timing cases that
// time one of them; 0 where none does.
std::int64_t timing_size(const Manifest& m, const std::string& task, const std::string& dim, DeviceClass device) {
  for (const auto& c : m.cases)
    if (c.timing && c.runs_on(device) && c.applies_to(task) && c.params.contains(dim))
      return c.params.at(dim).get<std::int64_t>();
  return 0;
}

}  // namespace

TEST_CASE(
    "every run on a device class draws, for every task timed there, large cases between the random cases' "
    "largest size and the timing size: just below it and dividing by no tile, a multiple of every tile, and "
    "beside a power of two") {
  for (const auto& m : load_all_manifests(fs::path(GPULAB_REPO) / "labs"))
    for (const DeviceClass device : {DeviceClass::gpu, DeviceClass::cpu})
      for (std::uint64_t seed = 1; seed <= 20; ++seed) {
        CAPTURE(m.id);
        CAPTURE(to_string(device));
        CAPTURE(seed);
        for (const auto& r : m.random) {
          Manifest one_block = m;  // the block's own large cases
          one_block.random = {r};
          const auto large = draw_large_cases(one_block, seed * 0x9E3779B97F4A7C15ull, false, device);
          for (const auto& task : m.tasks) {
            if (!r.tasks.empty() && std::find(r.tasks.begin(), r.tasks.end(), task.name) == r.tasks.end()) continue;
            const std::int64_t top = timing_size(m, task.name, r.dims.front(), device);
            if ((r.power_of_two ? top / 2 : top - 1) <= r.max) continue;  // no size but the timing case's
            CAPTURE(task.name);
            // What the region (max, top] holds: a multiple of every tile, a power of two with room
            // for a tail on both sides.
            std::int64_t lcm = 1;
            for (auto t : r.tiles) lcm = std::lcm(lcm, t);
            const bool has_multiple = r.max / lcm < top / lcm;
            bool has_power = false;
            for (std::int64_t p = 2; p < top; p *= 2)
              has_power |= p - r.tiles.front() > r.max && p + r.tiles.front() < top;
            bool below_top_other = false, multiple = !has_multiple, between = !has_power;
            for (const auto& c : large) {
              if (!c.applies_to(task.name) || c.name.rfind("large ", 0) != 0) continue;
              CHECK(c.large);
              CHECK_FALSE(c.timing);
              CHECK_FALSE(c.hidden);
              const std::int64_t size = c.params.at(r.dims.front()).get<std::int64_t>();
              CHECK(size > r.max);
              CHECK(size <= top);
              if (r.power_of_two) {
                CHECK((size & (size - 1)) == 0);
                CHECK(size < top);
                below_top_other |= size == top / 2;
                multiple = between = true;
                continue;
              }
              below_top_other |= size > top - r.tiles.front() && divides_none(size, r.tiles);
              multiple |= divides_all(size, r.tiles);
              between |= size < top - r.tiles.front() && divides_none(size, r.tiles);
            }
            CHECK(below_top_other);
            CHECK(multiple);
            CHECK(between);
          }
        }
      }
}

TEST_CASE("stress entries are drawn in every run just below the timing size, with their parameters over the block's") {
  const std::string text = std::string(kValid) +
                           "\n[[random]]\ndims = [\"rows\", \"cols\"]\ntiles = [8, 16]\nmax = 100\ncount = 6\n"
                           "values = { inputs = [\"uniform\", \"ones\"] }\n"
                           "stress = [{ inputs = \"max\" }, { inputs = \"ones\", scale = 4 }]\n";
  const Manifest m = load_manifest(write_manifest(text));
  REQUIRE(m.random.at(0).stress.size() == 2);
  const auto drawn = draw_large_cases(m, 11, false, DeviceClass::gpu);
  std::vector<const Case*> stress;
  for (const auto& c : drawn)
    if (c.name.rfind("stress ", 0) == 0) stress.push_back(&c);
  REQUIRE(stress.size() == 2);
  CHECK(stress[0]->params.at("inputs") == "max");
  CHECK(stress[1]->params.at("inputs") == "ones");
  CHECK(stress[1]->params.at("scale") == 4);
  CHECK(stress[1]->name.find("scale=4") != std::string::npos);
  for (const Case* c : stress)
    for (const char* dim : {"rows", "cols"}) {
      const auto size = c->params.at(dim).get<std::int64_t>();
      CHECK(size < 4096);
      CHECK(size > 4096 - 8);
      CHECK(divides_none(size, {8, 16}));
    }
  // Both tasks are timed on a GPU, in the one timing case: the large cases are theirs; a CPU device,
  // with no timing case, draws none.
  for (const auto& c : drawn) CHECK(c.tasks == std::vector<std::string>{"naive", "fast"});
  CHECK(draw_large_cases(m, 11, false, DeviceClass::cpu).empty());
  // Grading's hidden pass draws one hidden large case of its own.
  const auto hidden = draw_large_cases(m, 11, true, DeviceClass::gpu);
  REQUIRE(hidden.size() == 1);
  CHECK(hidden[0].hidden);
  CHECK(hidden[0].name.rfind("hidden large ", 0) == 0);
  CHECK(error_of(text) == "no error");
  std::string with_size = text;
  with_size.replace(with_size.find("{ inputs = \"max\" }"), 18, "{ rows = 5 }");
  CHECK(error_of(with_size).find("cannot set 'rows'") != std::string::npos);
}

TEST_CASE(
    "a timing case's trim takes a seeded part off its size in every run, and the case's name says what was timed") {
  std::string text = kValid;
  text.replace(text.find("timing = true"), 13, "timing = true\ntrim = { rows = 255 }");
  const Manifest m = load_manifest(write_manifest(text));
  std::set<std::int64_t> seen;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const Manifest run = with_random_cases(m, seed, false, DeviceClass::gpu);
    const Case& timing = run.cases.back();
    REQUIRE(timing.timing);
    const auto rows = timing.params.at("rows").get<std::int64_t>();
    CHECK(rows <= 4096);
    CHECK(rows >= 4096 - 255);
    CHECK(timing.params.at("cols") == 4096);
    CHECK(timing.name == fmt::format("big (rows={} this run)", rows));
    CHECK(with_random_cases(m, seed, false, DeviceClass::gpu).cases.back().params.at("rows") == rows);  // reproducible
    seen.insert(rows);
  }
  CHECK(seen.size() > 20);
  std::string not_timing = kValid;
  not_timing.replace(not_timing.find("cols = 3"), 8, "cols = 3\ntrim = { rows = 1 }");
  CHECK(error_of(not_timing).find("only a timing case can have 'trim'") != std::string::npos);
  std::string too_much = kValid;
  too_much.replace(too_much.find("timing = true"), 13, "timing = true\ntrim = { rows = 5000 }");
  CHECK(error_of(too_much).find("'trim.rows' must name an integer size of the case larger than 5000") !=
        std::string::npos);
}

TEST_CASE("a [[random]] block that could not cover what it promises is rejected, naming the fix") {
  const std::string block = "\n[[random]]\ndims = [\"rows\", \"cols\"]\ntiles = [8, 16]\nmax = 100\ncount = 6\n";
  const Manifest ok = load_manifest(write_manifest(kValid + block));
  REQUIRE(ok.random.size() == 1);
  CHECK(ok.random[0].fewest_cases() == 6);
  auto with = [&](const std::string& from, const std::string& to) {
    std::string text = kValid + block;
    text.replace(text.find(from), from.size(), to);
    return error_of(text);
  };
  CHECK(with("count = 6", "count = 5").find("'count' must be at least 6") != std::string::npos);
  CHECK(with("count = 6", "count = 6\nhidden = 2").find("'hidden' must be 0 or at least 6") != std::string::npos);
  CHECK(with("max = 100", "max = 40").find("'max' must be at least 48") != std::string::npos);
  CHECK(with("max = 100", "max = 100\nmin = 8").find("below the smallest tile (8)") != std::string::npos);
  CHECK(with("[8, 16]", "[1, 16]").find("every tile must be at least 2") != std::string::npos);
  CHECK(with("[8, 16]", "[8, 24]\npower_of_two = true").find("must be a power of two") != std::string::npos);
  CHECK(with("count = 6", "count = 6\ntasks = [\"slow\"]").find("task 'slow', which the lab does not have") !=
        std::string::npos);
  CHECK(
      with("count = 6", "count = 6\nvalues = { radius = [0, 1, 2, 3, 4, 5, 6] }").find("'count' must be at least 7") !=
      std::string::npos);
  CHECK(with("dims = [\"rows\", \"cols\"]\n", "").find("missing key 'dims'") != std::string::npos);
}

TEST_CASE("a bonus tier raises a task's threshold for more points, and a tier that lowers it is refused") {
  const std::string text = kValid;
  const std::string line = "threshold = { metric = \"copy_fraction\", gpu = 0.5, opencl_gpu = 0.4 }";
  const auto with = [&](const std::string& tier) {
    return std::string(text).replace(text.find(line), line.size(), line + "\ntier = " + tier);
  };
  const Manifest m = load_manifest(write_manifest(with("{ points = 1.5, gpu = 0.8, opencl_gpu = 0.6 }")));
  const Task& fast = *m.find_task("fast");
  REQUIRE(fast.tier);
  CHECK(fast.tier->points == 1.5);
  CHECK(fast.tier->bounds.metric == "copy_fraction");
  CHECK(fast.tier->bounds.bound("cuda", DeviceClass::gpu) == 0.8);
  CHECK(fast.tier->bounds.bound("opencl", DeviceClass::gpu) == 0.6);
  CHECK_FALSE(fast.tier->bounds.bound("cuda", DeviceClass::cpu));
  CHECK_FALSE(m.find_task("naive")->tier);
  CHECK(error_of(with("{ points = 1, gpu = 0.45 }")).find("must be above the threshold's (0.5)") != std::string::npos);
  CHECK(error_of(with("{ points = 1, cpu = 0.9 }")).find("above the threshold's (none)") != std::string::npos);
  CHECK(error_of(with("{ gpu = 0.9 }")).find("missing key 'points'") != std::string::npos);
  CHECK(error_of(with("{ points = 0, gpu = 0.9 }")).find("must be positive") != std::string::npos);
  CHECK(error_of(with("{ points = 1 }")).find("needs a bound") != std::string::npos);
  CHECK(error_of(with("{ points = 1, tpu = 0.9 }")).find("unknown bound 'tpu' in tier") != std::string::npos);
  const std::string naive_tier =
      std::string(text).replace(text.find("points = 2"), 10, "points = 2\ntier = { points = 1, gpu = 2 }");
  CHECK(error_of(naive_tier).find("give the task a 'threshold' first") != std::string::npos);
}
