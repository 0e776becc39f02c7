// Calibrations measured once and reused (issue #15): gpulab check's cache, its trust rule, what the
// supervisor sends a runner and takes from it, and how the report says when they were measured.
// Runners here are shell scripts that write prepared events: no device is needed.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "calibration_cache.hpp"
#include "files.hpp"
#include "report.hpp"
#include "supervisor.hpp"

using namespace gpulab;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("gpulab-calibration-{}-{}", name, ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

DeviceInfo pocl() {
  return {"opencl", 0, "pthread-cpu", "Portable Computing Language", "OpenCL 3.0 PoCL 6.0", DeviceClass::cpu, "", ""};
}

// A lab timed on a CPU device: the cache keys on its timing case. Which one does not matter: the
// fake runners below answer for it.
Manifest a_lab() {
  for (auto& lab : load_all_manifests(fs::path(GPULAB_REPO) / "labs"))
    for (const Case* c : lab.cases_for(DeviceClass::cpu))
      if (c->timing) return lab;
  throw std::runtime_error("no lab has a timing case on a CPU device");
}

// The name of the lab's timing case on a CPU device, read from its manifest.
std::string cpu_timing_case(const Manifest& lab) {
  for (const Case* c : lab.cases_for(DeviceClass::cpu))
    if (c->timing) return c->name;
  return "";
}

Calibration measured(double at, double copy = 40.0) {
  Calibration c;
  c.unit = "GB/s";
  c.rates["copy"] = copy;
  c.copy_gbps = copy;
  c.measured_at = at;
  return c;
}

// What `f` printed on stderr.
std::string captured_stderr(const std::function<void()>& f) {
  std::fflush(stderr);
  const int saved = ::dup(2);
  std::FILE* tmp = std::tmpfile();
  ::dup2(::fileno(tmp), 2);
  f();
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  std::rewind(tmp);
  std::string out;
  for (int ch; (ch = std::fgetc(tmp)) != EOF;) out += static_cast<char>(ch);
  std::fclose(tmp);
  return out;
}

// A runner that keeps the line it reads on stdin in stdin.json and appends events.jsonl to its
// progress file, as a real runner would have written them.
struct FakeRunner {
  fs::path dir;
  explicit FakeRunner(const std::string& name) : dir(fresh_dir(name)) {
    const fs::path script = dir / "runner.sh";
    std::ofstream(script) << "#!/bin/sh\n"
                             "while [ $# -gt 0 ]; do [ \"$1\" = --progress ] && p=\"$2\"; shift; done\n"
                             "printf '%s' \"$GLIBC_TUNABLES\" > '"
                          << (dir / "tunables.txt").string()
                          << "'\n"
                             "read -r line; printf '%s\\n' \"$line\" > '"
                          << (dir / "stdin.json").string()
                          << "'\n"
                             "cat '"
                          << (dir / "events.jsonl").string() << "' >> \"$p\"\n";
    fs::permissions(script, fs::perms::owner_all);
  }
  // Events of a clean run of every task of `m`; `calibration_at` places the calibration event
  // among them (0: after the device event; 1: after the first task began; -1: none).
  void write_events(const Manifest& m, const json& calibration, int calibration_at = 0, int calibrations = 1) {
    std::ofstream out(dir / "events.jsonl");
    const DeviceInfo d = pocl();
    out << json{{"event", "device"},      {"backend", d.backend}, {"index", d.index}, {"name", d.name},
                {"platform", d.platform}, {"details", d.details}, {"class", "cpu"},   {"at_s", 0.01}}
               .dump()
        << "\n";
    json event = calibration;
    event["event"] = "calibration";
    event["took_s"] = 0.5;
    if (calibration_at == 0)
      for (int i = 0; i < calibrations; ++i) out << event.dump() << "\n";
    for (std::size_t i = 0; i < m.tasks.size(); ++i) {
      out << json{{"event", "task_begin"}, {"task", m.tasks[i].name}}.dump() << "\n";
      if (calibration_at == 1 && i == 0) out << event.dump() << "\n";
      TaskResult r;
      r.task = m.tasks[i].name;
      r.cases_complete = true;
      out << json{{"event", "task_end"}, {"result", r}}.dump() << "\n";
    }
  }
  cli::RunRequest request(const Manifest& m) const {
    cli::RunRequest req;
    req.runner = dir / "runner.sh";
    req.manifest = &m;
    req.student_dir = dir;
    req.backend = "opencl";
    req.seed = 7;
    req.timeout_s = 20;
    req.work_dir = dir / "work";
    return req;
  }
  json stdin_seen() const { return json::parse(cli::read_text(dir / "stdin.json")); }
  std::string tunables_seen() const { return cli::read_text(dir / "tunables.txt"); }
};

}  // namespace

TEST_CASE("a cached calibration is used within its lifetime, and says it came from the cache") {
  const cli::CalibrationCache cache(fresh_dir("hit"));
  const json key = cli::calibration_cache_key(pocl(), "0.1.0+abc", a_lab());
  cache.save(key, measured(1000.0));
  const auto found = cache.find(key, 1000.0 + 599);
  REQUIRE(found);
  CHECK(found->rates.at("copy") == 40.0);
  CHECK(found->copy_gbps == 40.0);
  CHECK(found->measured_at == 1000.0);
  CHECK(found->origin == "cache");
  CHECK(key["timing_case"] == cpu_timing_case(a_lab()));
  CHECK(!cpu_timing_case(a_lab()).empty());
}

TEST_CASE("a cached calibration older than its lifetime, or from the future, is measured again") {
  const cli::CalibrationCache cache(fresh_dir("expired"), 600);
  const json key = cli::calibration_cache_key(pocl(), "0.1.0+abc", a_lab());
  cache.save(key, measured(1000.0));
  CHECK_FALSE(cache.find(key, 1000.0 + 601));
  CHECK_FALSE(cache.find(key, 1000.0 - 3600));  // the clock was set back
}

TEST_CASE("a calibration cached for another device, driver or grader version is not used") {
  const cli::CalibrationCache cache(fresh_dir("keys"));
  const Manifest m = a_lab();
  cache.save(cli::calibration_cache_key(pocl(), "0.1.0+abc", m), measured(1000.0));
  DeviceInfo other = pocl();
  other.name = "another CPU";
  DeviceInfo newer_driver = pocl();
  newer_driver.details = "OpenCL 3.0 PoCL 6.1";
  CHECK_FALSE(cache.find(cli::calibration_cache_key(other, "0.1.0+abc", m), 1001.0));
  CHECK_FALSE(cache.find(cli::calibration_cache_key(newer_driver, "0.1.0+abc", m), 1001.0));
  CHECK_FALSE(cache.find(cli::calibration_cache_key(pocl(), "0.1.0+def", m), 1001.0));
  CHECK(cache.find(cli::calibration_cache_key(pocl(), "0.1.0+abc", m), 1001.0));
}

TEST_CASE("a corrupt cache file is ignored with a message, and the next measurement replaces it") {
  const cli::CalibrationCache cache(fresh_dir("corrupt"));
  const json key = cli::calibration_cache_key(pocl(), "0.1.0+abc", a_lab());
  for (const std::string& bad : std::vector<std::string>{
           "{ not json", R"({"no key": 1})", json{{"key", key}}.dump(),
           json{{"key", key}, {"calibration", {{"unit", "GB/s"}, {"rates", {{"copy", -1}}}}}}.dump(),
           json{{"key", key}, {"calibration", {{"unit", "GB/s"}, {"rates", {{"copy", 40}}}}}}.dump()}) {
    cli::write_text_atomically(bad, cache.file_for(key));
    std::optional<Calibration> found;
    const std::string said = captured_stderr([&] { found = cache.find(key, 1001.0); });
    CHECK_FALSE(found);
    INFO(bad, " said: ", said);
    CHECK(said.find("ignoring the calibration cache file") != std::string::npos);
  }
  cache.save(key, measured(1000.0));
  CHECK(cache.find(key, 1001.0));
}

TEST_CASE("a calibration reads back only with a known unit, known rates and positive finite numbers") {
  const Calibration c = calibration_from_json(calibration_to_json(measured(1000.0, 41.5)));
  CHECK(c.rates.at("copy") == 41.5);
  CHECK(c.measured_at == 1000.0);
  CHECK_THROWS(calibration_from_json(json{{"unit", "furlongs"}, {"rates", json::object()}}));
  CHECK_THROWS(calibration_from_json(json{{"unit", "GB/s"}, {"rates", {{"warp_speed", 1.0}}}}));
  CHECK_THROWS(calibration_from_json(json{{"unit", "GB/s"}, {"rates", {{"copy", 0.0}}}}));
  CHECK_THROWS(calibration_from_json(json{{"unit", "GB/s"}, {"rates", {{"copy", "fast"}}}}));
}

TEST_CASE("a runner's calibration is cached only from a clean run in one process, once, before any task") {
  const Manifest m = a_lab();
  FakeRunner runner("trust");
  const json event = calibration_to_json(measured(1000.0));

  runner.write_events(m, event);
  const cli::RunRequest req = runner.request(m);
  const cli::LabRun clean = cli::supervise(req);
  CHECK(clean.calibration.rates.at("copy") == 40.0);
  CHECK(clean.phases.calibration_s == doctest::Approx(0.5));
  CHECK(cli::why_not_cacheable(clean, req, pocl()) == "");
  DeviceInfo other = pocl();
  other.index = 1;
  CHECK(cli::why_not_cacheable(clean, req, other) == "the runner reported another device");

  runner.write_events(m, event, 1);
  CHECK(cli::why_not_cacheable(cli::supervise(req), req, pocl()) == "a calibration event after a task began");
  runner.write_events(m, event, 0, 2);
  CHECK(cli::why_not_cacheable(cli::supervise(req), req, pocl()) == "two calibration events from one runner");
  json forged = event;
  forged["rates"]["copy"] = -5;
  runner.write_events(m, forged);
  const cli::LabRun malformed = cli::supervise(req);
  CHECK(malformed.calibration_doubt.find("malformed") != std::string::npos);
  CHECK(cli::why_not_cacheable(malformed, req, pocl()) != "");
}

TEST_CASE("a runner given a calibration gets it with its seed, and the lab reports it whatever the runner says") {
  const Manifest m = a_lab();
  FakeRunner runner("given");
  runner.write_events(m, calibration_to_json(measured(2000.0, 999.0)));  // a runner that claims other rates
  cli::RunRequest req = runner.request(m);
  Calibration given = measured(1000.0, 40.0);
  given.origin = "batch";
  req.calibration = given;
  const cli::LabRun lab = cli::supervise(req);
  const json seen = runner.stdin_seen();
  CHECK(seen["seed"] == 7);
  CHECK(seen["calibration"]["rates"]["copy"] == 40.0);
  CHECK(lab.calibration.rates.at("copy") == 40.0);
  CHECK(lab.calibration.origin == "batch");
  CHECK(cli::why_not_cacheable(lab, req, pocl()) == "the run was given its calibration");
}

TEST_CASE("a calibrate-only run asks the runner for its calibration alone and returns it") {
  const Manifest m = a_lab();
  FakeRunner runner("only");
  runner.write_events(m, calibration_to_json(measured(1000.0, 42.0)));
  std::string why;
  const auto c = cli::measure_calibration(runner.request(m), why);
  REQUIRE(c);
  CHECK(c->rates.at("copy") == 42.0);
  CHECK(runner.stdin_seen()["cases"] == "calibrate");
}

TEST_CASE("the report says when the calibration was measured, and whether it came from the cache") {
  cli::RunSummary run;
  cli::LabRun lab;
  lab.id = "08-smooth";
  lab.backend = "opencl";
  lab.calibration = measured(unix_seconds_now() - 190);
  lab.calibration.origin = "cache";
  run.labs.push_back(lab);
  CHECK(cli::render_report(run, false).find("device copy 40.00 GB/s, cached, measured 3 min ago]") !=
        std::string::npos);
  run.labs[0].calibration = measured(unix_seconds_now() - 25.5);
  run.labs[0].calibration.origin = "cache";
  CHECK(cli::render_report(run, false).find("cached, measured 25 s ago]") != std::string::npos);
  run.labs[0].calibration = measured(unix_seconds_now());
  CHECK(cli::render_report(run, false).find("measured now]") != std::string::npos);
  CHECK(cli::to_json(run)["labs"][0]["calibration"].contains("measured_at"));
}

TEST_CASE(
    "the runner starts with glibc's malloc backing large blocks with huge pages, for the GiBs of a GPU's large cases") {
  const Manifest m = a_lab();
  FakeRunner runner("tunables");
  runner.write_events(m, calibration_to_json(measured(1000.0)));
  cli::supervise(runner.request(m));
  CHECK(runner.tunables_seen().find("glibc.malloc.hugetlb=1") != std::string::npos);
}
