// `gpulab check` with nothing changed (grader/cli/run/check_cache.hpp): what the key of a lab's check
// depends on, which results are kept, and a kept lab found again with when and with which seed it ran.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "check_cache.hpp"
#include "cli_harness.hpp"

using namespace gpulab;
using namespace gpulab::cli;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("gpulab-check-cache-{}-{}", name, ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// A toolchain of the repository's manifests and allowlists, built nowhere: grader_version reads its
// toolchain.json and no harness library.
Toolchain a_toolchain(const fs::path& build) {
  Toolchain tc;
  tc.repo = GPULAB_REPO;
  tc.build_dir = build;
  tc.config = {{"labs", nlohmann::json::object()}};
  testing::write_file(build / "toolchain.json", "{}\n");
  return tc;
}

DeviceInfo a_device(const std::string& name = "NVIDIA H100 80GB HBM3") {
  return {"cuda", 0, name, "CUDA 13.0", "compute capability 9.0", DeviceClass::gpu, "0000:19:00.0", ""};
}

LabRun a_result(Status status) {
  LabRun lab;
  lab.id = "02-transpose";
  lab.name = "transpose";
  lab.backend = "cuda";
  TaskResult t;
  t.task = "naive";
  t.status = status;
  t.message = status == Status::passed ? "" : "case 1x1: wrong";
  lab.tasks.push_back(t);
  return lab;
}

}  // namespace

TEST_CASE("a lab's check key changes with its files, the device, the tasks, an explicit seed and the time limit") {
  const fs::path dir = fresh_dir("key");
  const Toolchain tc = a_toolchain(dir / "build");
  const Manifest lab = load_manifest(fs::path(GPULAB_REPO) / "labs" / "02-transpose" / "lab.toml");
  fs::create_directories(dir / "src" / "02-transpose");
  fs::copy(fs::path(GPULAB_REPO) / "labs" / "02-transpose", dir / "src" / "02-transpose", fs::copy_options::recursive);
  const CheckSelection plain{"cuda", dir / "src", {"naive", "optimized"}, 0, 0};
  const std::string key = check_key(tc, lab, plain, a_device());
  CHECK(key.size() == 64);
  CHECK(check_key(tc, lab, plain, a_device()) == key);  // nothing changed
  CHECK(check_key(tc, lab, plain, a_device("NVIDIA H200")) != key);
  CheckSelection other = plain;
  other.tasks = {"naive"};
  CHECK(check_key(tc, lab, other, a_device()) != key);
  other = plain;
  other.explicit_seed = 12345;
  CHECK(check_key(tc, lab, other, a_device()) != key);
  other = plain;
  other.timeout = 20;
  CHECK(check_key(tc, lab, other, a_device()) != key);
  // An edit of a student file, even a comment, is a change; restoring the file restores the key.
  const fs::path student_file = dir / "src" / "02-transpose" / "transpose.cu";
  const std::string before = testing::read_file(student_file);
  testing::write_file(student_file, before + "// an edit\n");
  CHECK(check_key(tc, lab, plain, a_device()) != key);
  testing::write_file(student_file, before);
  CHECK(check_key(tc, lab, plain, a_device()) == key);
  fs::remove_all(dir);
}

TEST_CASE("results kept after a check are found again under its key, saying when they ran and with which seed") {
  const fs::path dir = fresh_dir("keep");
  const CheckCache cache(dir);
  const LabRun ran = a_result(Status::wrong_result);
  cache.keep("key-a", ran, 4242, "2026-11-29T01:53:11Z");
  const auto kept = cache.find("02-transpose", "key-a");
  REQUIRE(kept.has_value());
  CHECK(kept->seed == 4242);
  REQUIRE(kept->lab.tasks.size() == 1);
  CHECK(kept->lab.tasks[0].status == Status::wrong_result);
  CHECK(kept->lab.tasks[0].message == "case 1x1: wrong");
  CHECK(kept->lab.reused.find("nothing changed since its check at 2026-11-29T01:53:11Z (seed 4242)") !=
        std::string::npos);
  CHECK(kept->lab.reused.find("`make check FRESH=1` runs it again on new random inputs") != std::string::npos);
  CHECK_FALSE(cache.find("02-transpose", "key-b").has_value());  // another key: run it
  CHECK_FALSE(cache.find("03-bitonic", "key-a").has_value());    // another lab: nothing kept
  // A damaged file is a miss, not an error.
  testing::write_file(dir / "02-transpose.json", "{ not json");
  CHECK_FALSE(cache.find("02-transpose", "key-a").has_value());
  fs::remove_all(dir);
}

TEST_CASE("a timeout, an API error or a grader failure is not kept, and forgets what was kept for the lab") {
  CHECK(worth_keeping(a_result(Status::passed)));
  CHECK(worth_keeping(a_result(Status::too_slow)));
  CHECK(worth_keeping(a_result(Status::compile_error)));
  CHECK_FALSE(worth_keeping(a_result(Status::timeout)));
  CHECK_FALSE(worth_keeping(a_result(Status::error)));
  LabRun failed = a_result(Status::passed);
  failed.grader_failure = "the runner could not open the device";
  CHECK_FALSE(worth_keeping(failed));

  const fs::path dir = fresh_dir("forget");
  const CheckCache cache(dir);
  cache.keep("key", a_result(Status::passed), 1, "2026-11-29T01:00:00Z");
  REQUIRE(cache.find("02-transpose", "key").has_value());
  cache.keep("key", a_result(Status::timeout), 2, "2026-11-29T01:05:00Z");
  CHECK_FALSE(cache.find("02-transpose", "key").has_value());
  fs::remove_all(dir);
}
