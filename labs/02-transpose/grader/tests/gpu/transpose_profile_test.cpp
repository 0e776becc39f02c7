// `gpulab check --profile` on the H100 with the transpose lab, whose lesson the counters must show:
// the naive kernel's stores are not coalesced, the tiled kernel's loads and stores are and its
// padded tile has no bank conflicts, and the same tile without its padding has 32-way conflicts.
// Part of gpulab_gpu_tests (skipped, exit 77, without a CUDA device).
#include <doctest/doctest.h>

#include "cli_harness.hpp"
#include "gpu_args.hpp"

using namespace gpulab::testing;

namespace {

// The reading of one counter of the first profiled kernel of `task`.
nlohmann::json counter(const CliRun& run, const std::string& task, const std::string& name) {
  for (const auto& t : run.report.at("labs").at(0).at("profile"))
    if (t.at("task") == task) {
      REQUIRE_MESSAGE(!t.at("kernels").empty(), t.dump());
      for (const auto& c : t.at("kernels").at(0).at("counters"))
        if (c.at("counter") == name) return c;
    }
  FAIL("no counter " << name << " for task " << task);
  return {};
}

}  // namespace

TEST_CASE("on a CUDA GPU, the profile shows the naive transpose's stores uncoalesced and the tiled kernel clean") {
  const auto run = run_check(repo_path("solutions"), gpu_args("cuda") + " --lab transpose --profile");
  INFO(run.output);
  CHECK(run.exit_code == 0);  // profiling never changes the grade
  CHECK(counter(run, "naive", "global_loads").at("concern") == false);
  const auto naive_stores = counter(run, "naive", "global_stores");
  CHECK(naive_stores.at("concern") == true);
  CHECK(naive_stores.at("reading").get<std::string>().find("not coalesced") != std::string::npos);
  CHECK(counter(run, "optimized", "global_stores").at("concern") == false);
  const auto shared = counter(run, "optimized", "shared_bank_conflicts");
  CHECK(shared.at("reading").get<std::string>().find("no bank conflicts") != std::string::npos);
  CHECK(run.output.find("profile (Nsight Compute") != std::string::npos);
  // The case named is the one profiled: the GPU's timing case, not the CPU device's.
  for (const auto& t : run.report.at("labs").at(0).at("profile")) CHECK(t.at("case") == "8192x8192");
}

TEST_CASE("on a CUDA GPU, the profile finds the 32-way bank conflicts of a transpose tile without padding") {
  SourceTree tree("profile-unpadded");
  tree.replace("02-transpose/transpose.cu", "__shared__ float tile[kTile][kTile + 1];",
               "__shared__ float tile[kTile][kTile];");
  const auto run = run_check(tree.root(), gpu_args("cuda") + " --lab transpose --task optimized --profile");
  INFO(run.output);
  const auto shared = counter(run, "optimized", "shared_bank_conflicts");
  CHECK(shared.at("concern") == true);
  const std::string reading = shared.at("reading");
  REQUIRE(reading.find("-way bank conflicts on shared loads") != std::string::npos);
  CHECK(std::stoi(reading) >= 24);  // "32-way ...": a column of the tile in one bank
}
