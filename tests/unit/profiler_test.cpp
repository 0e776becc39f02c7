// The profiler feedback (grader/cli/gpu_tools/profiler.hpp) without a GPU: ncu's CSV read back, each counter's
// figure and reading from launch figures (those of coalesced, strided, padded and unpadded kernels
// measured on the H100), ncu's failures in words, and where profiling cannot run.
#include <doctest/doctest.h>

#include <cstdlib>

#include "cli_harness.hpp"
#include "gpulab/manifest.hpp"
#include "profiler.hpp"
#include "toolchain.hpp"

using namespace gpulab::cli;
namespace fs = std::filesystem;

namespace {

ProfiledLaunch launch(const std::string& kernel, std::map<std::string, double> metrics) {
  return {kernel, std::move(metrics)};
}

const CounterReading& reading(const KernelProfile& k, const std::string& counter) {
  for (const auto& c : k.counters)
    if (c.counter == counter) return c;
  FAIL("no reading of " << counter);
  static CounterReading none;
  return none;
}

// 2^24 floats copied by 2^19 warp requests of 128 bytes: contiguous, or scattered one word per sector.
std::map<std::string, double> copy_figures(double store_sectors) {
  return {{"gpu__time_duration.sum", 58240},
          {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 524288},
          {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 2097152},
          {"sm__sass_data_bytes_mem_global_op_ld.sum", 67108864},
          {"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", 524288},
          {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", store_sectors},
          {"sm__sass_data_bytes_mem_global_op_st.sum", 67108864}};
}

// A 32x32 tile read column-wise: 2^19 shared loads of 128 bytes, in 1 or 32 wavefronts each (ncu
// counts all but the first as conflicts).
std::map<std::string, double> tile_figures(double load_wavefronts) {
  return {{"gpu__time_duration.sum", 43456},
          {"smsp__sass_inst_executed_op_shared_ld.sum", 524288},
          {"smsp__sass_inst_executed_op_shared_st.sum", 524288},
          {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", load_wavefronts},
          {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", load_wavefronts - 524288},
          {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", 541222},
          {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", 16934}};
}

// A report of Nsight Compute 2025.3 on the H100 (tests/unit/data/profiler/: the columns the
// profiler reads of `ncu --import --csv --page raw --print-units base`).
std::vector<KernelProfile> measured(const std::string& name, const std::vector<std::string>& counters) {
  const auto csv = gpulab::testing::read_file(gpulab::testing::repo_path("tests/unit/data/profiler") / name);
  REQUIRE(!csv.empty());
  return read_profile(parse_ncu_raw_csv(csv), counters);
}

}  // namespace

TEST_CASE("ncu's raw CSV page is read into launches with short kernel names and numeric metrics in base units") {
  const std::string csv =
      "==PROF== Connected to process 618 (/tmp/probe)\n"
      "\"ID\",\"Process ID\",\"Kernel Name\",\"Block Size\",\"device__attribute_display_name\","
      "\"gpu__time_duration.sum\",\"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum\",\"launch__func_cache_config\"\n"
      "\"\",\"\",\"\",\"\",\"\",\"nsecond\",\"sector\",\"\"\n"
      "\"0\",\"618\",\"coalesced(const float *, float *, int)\",\"(256, 1, 1)\",\"NVIDIA H100 80GB HBM3\",\"58240\","
      "\"2,097,152\",\"CachePreferNone\"\n"
      "\"1\",\"618\",\"void tile<0>(const float *, float *, int)\",\"(32, 8, 1)\",\"NVIDIA H100 80GB HBM3\",\"103776\","
      "\"16,777,216\",\"CachePreferNone\"\n";
  const auto launches = parse_ncu_raw_csv(csv);
  REQUIRE(launches.size() == 2);
  CHECK(launches[0].kernel == "coalesced");
  CHECK(launches[1].kernel == "tile<0>");
  CHECK(launches[0].metrics.at("gpu__time_duration.sum") == 58240);
  CHECK(launches[1].metrics.at("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum") == 16777216);
  CHECK_FALSE(launches[0].metrics.count("launch__func_cache_config"));  // words are not figures
  CHECK_FALSE(launches[0].metrics.count("Block Size"));

  CHECK_THROWS_WITH(parse_ncu_raw_csv("==PROF== No kernels were profiled.\n"), doctest::Contains("no CSV rows"));
  CHECK_THROWS_WITH(parse_ncu_raw_csv("\"Metric Name\",\"Metric Value\"\n"), doctest::Contains("--page raw"));
}

TEST_CASE("contiguous stores read as coalesced; stores a stride apart as not coalesced, with what to change") {
  const std::vector<std::string> counters{"global_loads", "global_stores"};
  const auto profile =
      read_profile({launch("coalesced", copy_figures(2097152)), launch("strided", copy_figures(16777216))}, counters);
  REQUIRE(profile.size() == 2);
  const auto& good = reading(profile[0], "global_stores");
  CHECK_FALSE(good.concern);
  CHECK(good.value == "4.0 sectors per request, 100% of their bytes used");
  CHECK(good.reading.find("coalesced") == 0);

  const auto& strided = reading(profile[1], "global_stores");
  CHECK(strided.concern);
  CHECK(strided.value == "32.0 sectors per request, 12% of their bytes used");
  CHECK(strided.reading.find("not coalesced") == 0);
  CHECK(strided.reading.find("threadIdx.x") != std::string::npos);
  CHECK_FALSE(reading(profile[1], "global_loads").concern);  // its loads are contiguous
}

TEST_CASE("an unpadded tile's 32-way bank conflicts are named with the padding that removes them") {
  const auto profile = read_profile(
      {launch("tile<0>", tile_figures(16906256)), launch("tile<1>", tile_figures(549804))}, {"shared_bank_conflicts"});
  const auto& unpadded = reading(profile[0], "shared_bank_conflicts");
  CHECK(unpadded.concern);
  CHECK(unpadded.value == "loads 32.2-way, stores 1.0-way");
  CHECK(unpadded.reading.find("32-way bank conflicts on shared loads") == 0);
  CHECK(unpadded.reading.find("33 words") != std::string::npos);
  const auto& padded = reading(profile[1], "shared_bank_conflicts");
  CHECK_FALSE(padded.concern);
  CHECK(padded.reading.find("no bank conflicts") == 0);

  const auto none = read_profile({launch("copy", copy_figures(2097152))}, {"shared_bank_conflicts"});
  CHECK(reading(none[0], "shared_bank_conflicts").value == "not used");
}

TEST_CASE("launches of one kernel add up: counts summed, percentages weighted by duration, settings from the first") {
  const auto profile = read_profile({launch("step", {{"gpu__time_duration.sum", 1e6},
                                                     {"dram__throughput.avg.pct_of_peak_sustained_elapsed", 80},
                                                     {"dram__bytes_read.sum", 4e6},
                                                     {"dram__bytes_write.sum", 2e6},
                                                     {"launch__registers_per_thread", 30}}),
                                     launch("merge", {{"gpu__time_duration.sum", 5e5}}),
                                     launch("step", {{"gpu__time_duration.sum", 3e6},
                                                     {"dram__throughput.avg.pct_of_peak_sustained_elapsed", 40},
                                                     {"dram__bytes_read.sum", 6e6},
                                                     {"dram__bytes_write.sum", 1e6},
                                                     {"launch__registers_per_thread", 99}})},
                                    {"dram_throughput"});
  REQUIRE(profile.size() == 2);
  CHECK(profile[0].kernel == "step");  // in the order of their first launch
  CHECK(profile[1].kernel == "merge");
  CHECK(profile[0].launches == 2);
  CHECK(profile[0].time_ms == doctest::Approx(4.0));
  // (80 * 1 + 40 * 3) / 4 = 50% of peak; 10 MB read, 3 MB written.
  CHECK(reading(profile[0], "dram_throughput").value == "50% of peak; 10.0 MB read, 3.0 MB written");
}

TEST_CASE("occupancy names what limits it, and a grid smaller than one wave of blocks") {
  std::map<std::string, double> registers{{"sm__warps_active.avg.pct_of_peak_sustained_active", 33},
                                          {"sm__maximum_warps_per_active_cycle_pct", 37.5},
                                          {"launch__registers_per_thread", 80},
                                          {"launch__block_size", 128},
                                          {"launch__waves_per_multiprocessor", 4},
                                          {"launch__occupancy_limit_registers", 6},
                                          {"launch__occupancy_limit_shared_mem", 20},
                                          {"launch__occupancy_limit_warps", 16},
                                          {"launch__occupancy_limit_blocks", 32}};
  auto small = registers;
  small["launch__waves_per_multiprocessor"] = 0.25;
  const auto profile = read_profile({launch("wide", registers), launch("few", small)}, {"occupancy"});
  const auto& limited = reading(profile[0], "occupancy");
  CHECK(limited.value == "33% achieved, 38% possible; 80 registers per thread");
  CHECK(limited.reading.find("6 blocks per SM, limited by registers (80 per thread)") == 0);
  const auto& few = reading(profile[1], "occupancy");
  CHECK(few.concern);
  CHECK(few.reading.find("25% of one wave") != std::string::npos);
}

TEST_CASE("ncu's failures are said in words with what to do: no permission, no kernel launched, another error") {
  CHECK(ncu_failure("==PROF== Connected to process 1\n==ERROR== ERR_NVGPUCTRPERM - The user does not have permission "
                    "to access NVIDIA GPU Performance Counters on the target device 0.\n")
            .find("NVreg_RestrictProfilingToAdminUsers=0") != std::string::npos);
  CHECK(ncu_failure("==PROF== Disconnected from process 800\n==WARNING== No kernels were profiled.\n")
            .find("launched no kernel") != std::string::npos);
  CHECK(ncu_failure("==ERROR== Failed to prepare kernel for profiling\n") ==
        "Nsight Compute failed: Failed to prepare kernel for profiling");
  CHECK(ncu_failure("==PROF== Connected to process 1\n==PROF== Report: /tmp/x.ncu-rep\n").empty());
  CHECK(ncu_failure("==ERROR== cut short") == "Nsight Compute failed: cut short");  // no line end
  CHECK(ncu_failure("==ERROR==") == "");  // not even the marker's space: not ncu's error line
}

TEST_CASE("every lab's profile names known counters, and an unknown one is refused with the list of counters") {
  for (const auto& m : gpulab::load_all_manifests(gpulab::testing::repo_path("labs"))) {
    CAPTURE(m.id);
    CHECK_NOTHROW(require_known_counters(m.profile, m.id));
    for (const auto& metric : ncu_metrics_for(m.profile)) CHECK(metric.find("__") != std::string::npos);
  }
  CHECK_THROWS_WITH(require_known_counters({"coalescing"}, "02-transpose"),
                    doctest::Contains("'coalescing', which is not a profiler counter; the counters are global_loads"));
}

TEST_CASE("profiling needs CUDA and ncu, and says how to get them where they are missing") {
  Toolchain tc;
  CHECK_THROWS_WITH(make_profiler(tc, "opencl"), doctest::Contains("BACKEND=cuda"));

  // ncu next to the toolchain's nvcc is the one taken.
  const fs::path bin = fs::path(GPULAB_SCRATCH) / "profiler-toolkit" / "bin";
  fs::create_directories(bin);
  gpulab::testing::write_file(bin / "nvcc", "");
  tc.config["cuda"]["nvcc"] = (bin / "nvcc").string();
  gpulab::testing::write_file(bin / "ncu", "");
  CHECK(make_profiler(tc, "cuda").ncu == (bin / "ncu").string());
  fs::remove(bin / "ncu");

  // Neither there nor on PATH: only the usual install folders are left, and without them the check says what to do.
  const char* path = std::getenv("PATH");
  const std::string saved = path ? path : "";
  setenv("PATH", bin.string().c_str(), 1);
  const bool installed = fs::exists("/usr/local/cuda/bin/ncu") || fs::exists("/opt/cuda/bin/ncu");
  if (installed)
    CHECK(make_profiler(tc, "cuda").ncu.find("/cuda/bin/ncu") != std::string::npos);
  else
    CHECK_THROWS_WITH(make_profiler(tc, "cuda"), doctest::Contains("install it or add its folder to PATH"));
  setenv("PATH", saved.c_str(), 1);
}

TEST_CASE(
    "on reports measured on the H100, each lab's lesson shows: uncoalesced stores, an unpadded tile, float4 loads") {
  const auto naive = measured("transpose_naive.csv", {"global_loads", "global_stores"});
  REQUIRE(naive.size() == 1);
  CHECK(naive[0].kernel == "transpose_naive_kernel");
  CHECK_FALSE(reading(naive[0], "global_loads").concern);
  CHECK(reading(naive[0], "global_stores").reading.find("not coalesced") == 0);

  const auto unpadded = measured("transpose_tile_unpadded.csv", {"shared_bank_conflicts", "global_stores"});
  CHECK(reading(unpadded[0], "shared_bank_conflicts").reading.find("32-way bank conflicts on shared loads") == 0);
  CHECK_FALSE(reading(unpadded[0], "global_stores").concern);

  // The fast matmul's 16-byte shared loads need 3 wavefronts each by themselves: not 5-way conflicts.
  const auto fast = measured("matmul_fast.csv", {"shared_bank_conflicts", "occupancy", "fp32_throughput"});
  const auto& shared = reading(fast[0], "shared_bank_conflicts");
  CHECK(shared.value == "loads 1.7-way, stores 1.5-way");
  CHECK_FALSE(shared.concern);
  CHECK(reading(fast[0], "occupancy").reading.find("1 block per SM, limited by registers") == 0);

  // 16 launches of four kernels, in the order they first ran.
  const auto bitonic = measured("bitonic_fast.csv", {"global_loads"});
  int launches = 0;
  for (const auto& k : bitonic) launches += k.launches;
  CHECK(launches == 16);
  CHECK(bitonic.front().kernel == "bitonic_chunk_sort_fused_kernel");
  CHECK(bitonic.size() == 6);
}
