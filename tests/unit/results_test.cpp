#include <doctest/doctest.h>

#include "gpulab/results.hpp"

using namespace gpulab;

TEST_CASE("task results survive the trip through JSON") {
  TaskResult t;
  t.task = "optimized";
  t.function = "transpose_optimized";
  t.status = Status::too_slow;
  t.message = "slow";
  t.cases_passed = 3;
  t.cases_total = 3;
  t.time_ms = 0.5;
  t.rate = 1000;
  t.metric = "copy_fraction";
  t.ratios = {{"copy_fraction", 0.3}};
  t.ratio = 0.3;
  t.threshold = 0.6;
  t.max_points = 7;
  CaseResult c;
  c.name = "8192x8192";
  c.passed = true;
  c.timing = TimingSummary{0.5, 0.4, 0.9, 15};
  c.work = 5e8;
  c.seconds = 1.25;
  t.cases.push_back(c);

  const nlohmann::json j = t;
  CHECK(j.at("status") == "too_slow");
  CHECK(j.at("cases")[0].at("rate").get<double>() == doctest::Approx(1000));
  const auto back = j.get<TaskResult>();
  CHECK(back.status == Status::too_slow);
  CHECK(back.ratio == 0.3);
  CHECK(back.ratios.at("copy_fraction") == 0.3);
  CHECK(back.metric == "copy_fraction");
  CHECK(back.threshold == 0.6);
  CHECK(back.cases.at(0).timing->samples == 15);
  CHECK(back.cases.at(0).seconds == 1.25);
  CHECK_FALSE(nlohmann::json(TaskResult{}).contains("ratio"));
}

TEST_CASE("every status has a name that reads back as the same status") {
  for (Status s :
       {Status::passed, Status::wrong_result, Status::too_slow, Status::not_implemented, Status::compile_error,
        Status::kernel_fault, Status::timeout, Status::crashed, Status::error, Status::not_run, Status::rejected}) {
    CHECK(status_from_string(to_string(s)) == s);
    CHECK(std::string(describe(s)).find('_') == std::string::npos);
  }
  CHECK_THROWS(status_from_string("bogus"));
}

TEST_CASE("a rate is the work over the median time") {
  CaseResult c;
  c.work = 2e9;
  CHECK_FALSE(c.rate());
  c.timing = TimingSummary{2.0, 1.0, 3.0, 10};  // 2 GB in 2 ms
  CHECK(*c.rate() == doctest::Approx(1000));
}

#include "gpulab/metrics.hpp"

TEST_CASE("ratios are computed for every calibration the run measured, and only for those") {
  Calibration cal;
  cal.rates = {{"copy", 2000.0}, {"naive", 500.0}};
  const auto r = ratios_of(1000.0, cal);
  CHECK(r.size() == 2);
  CHECK(r.at("copy_fraction") == doctest::Approx(0.5));
  CHECK(r.at("naive_speedup") == doctest::Approx(2.0));
  CHECK(format_ratio(*find_metric("copy_fraction"), 0.5) == "50%");
  CHECK(format_ratio(*find_metric("naive_speedup"), 2.0) == "2.00×");
  CHECK(find_metric("bogus") == nullptr);
}

TEST_CASE("the library column is named after the library that was measured") {
  Calibration cal;
  cal.library = "cuBLAS SGEMM";
  CHECK(column_label(*find_metric("library_fraction"), cal) == "% cuBLAS");
  CHECK(column_label(*find_metric("copy_fraction"), cal) == "% copy");
}

TEST_CASE("a ratio near its bound shows the decimals that tell the two apart") {
  const Metric& copy = *find_metric("copy_fraction");
  CHECK(format_ratio(copy, 0.0496, 0.05) == "4.96%");
  CHECK(format_ratio(copy, 0.05, 0.0496) == "5.00%");
  CHECK(format_ratio(copy, 0.047, 0.05) == "4.7%");
  CHECK(format_ratio(copy, 0.30, 0.75) == "30%");  // far from it: as usual
  const Metric& naive = *find_metric("naive_speedup");
  CHECK(format_ratio(naive, 1.1196, 1.12) == "1.1196×");  // the same at 2 and 3 decimals
  CHECK(format_ratio(naive, 1.0, 1.12) == "1.00×");
  Calibration cal;
  CHECK(describe_ratio(copy, 0.0496, cal, 0.05) == "4.96% of the device's copy bandwidth");
}

TEST_CASE("a ratio is described in words a student understands") {
  Calibration cal;
  cal.library = "cuBLAS SGEMM";
  CHECK(describe_ratio(*find_metric("copy_fraction"), 0.45, cal) == "45% of the device's copy bandwidth");
  CHECK(describe_ratio(*find_metric("library_fraction"), 0.5, cal) == "50% of cuBLAS SGEMM");
  CHECK(describe_ratio(*find_metric("naive_speedup"), 1.24, cal) == "1.24× the speed of the harness's naive kernel");
}

TEST_CASE("a calibration names its columns and rates in report order, with the library and the work it counts") {
  Calibration cal;
  cal.unit = "GFLOP/s";
  cal.library = "cuBLAS SGEMM";
  cal.work = "2·m·n·k flops";
  cal.rates = {{"naive", 500.0}, {"library", 50000.0}, {"copy", 3000.0}};
  const auto labels = calibration_labels(cal);
  std::vector<std::string> metrics, columns, units, rates, names;
  for (const auto& c : labels.at("columns")) {
    metrics.push_back(c.at("metric"));
    columns.push_back(c.at("label"));
    units.push_back(c.at("unit"));
  }
  for (const auto& r : labels.at("calibrations")) {
    rates.push_back(r.at("rate"));
    names.push_back(r.at("label"));
  }
  CHECK(metrics == std::vector<std::string>{"copy_fraction", "library_fraction", "naive_speedup"});
  CHECK(columns == std::vector<std::string>{"% copy", "% cuBLAS", "× naive"});
  CHECK(units == std::vector<std::string>{"%", "%", "×"});
  CHECK(rates == std::vector<std::string>{"copy", "library", "naive"});
  CHECK(names == std::vector<std::string>{"device copy", "cuBLAS SGEMM", "naive kernel"});
  // The work survives the trip a cached or reported calibration takes.
  CHECK(calibration_from_json(calibration_to_json(cal)).work == "2·m·n·k flops");
}

#include "gpulab/device.hpp"

TEST_CASE("the FP32 peak estimate counts every lane of every multiprocessor at the peak clock") {
  // H100 SXM: 132 SMs of 128 FP32 lanes at 1980 MHz, 2 flops per fused multiply-add.
  CHECK(*nvidia_peak_gflops(9, 0, 132, 1980) == doctest::Approx(66908.16));
  CHECK(*nvidia_fp32_lanes(8, 0) == 64);   // A100
  CHECK(*nvidia_fp32_lanes(8, 6) == 128);  // GA10x
  CHECK_FALSE(nvidia_fp32_lanes(6, 1));    // not in the table: no guess
  CHECK_FALSE(nvidia_peak_gflops(9, 0, 0, 1980));
}

TEST_CASE(
    "a buffer violation and an impossible speed are statuses of their own, with their finding, borderline and "
    "interleaved baseline kept in JSON") {
  TaskResult t;
  t.task = "tiled";
  t.status = Status::impossible_speed;
  t.finding = "faster_than_device";
  t.borderline = true;
  CaseResult c;
  c.name = "4096x4096x4096";
  c.finding = "faster_than_device";
  c.baseline_rate = 5300;
  c.borderline = true;
  t.cases.push_back(c);
  const nlohmann::json j = t;
  CHECK(j.at("status") == "impossible_speed");
  CHECK(j.at("finding") == "faster_than_device");
  const auto back = j.get<TaskResult>();
  CHECK(back.status == Status::impossible_speed);
  CHECK(back.finding == "faster_than_device");
  CHECK(back.borderline);
  REQUIRE(back.cases.size() == 1);
  CHECK(back.cases[0].finding == "faster_than_device");
  CHECK(back.cases[0].baseline_rate == doctest::Approx(5300));
  CHECK(back.cases[0].borderline);
  CHECK(status_from_string("buffer_violation") == Status::buffer_violation);
  CHECK(std::string(describe(Status::buffer_violation)) == "buffer violation");
  CHECK(std::string(describe(Status::impossible_speed)) == "impossible speed");
  // An ordinary result carries no finding and is not borderline.
  const nlohmann::json plain = TaskResult{};
  CHECK(!plain.contains("finding"));
  CHECK(!plain.contains("borderline"));
}

TEST_CASE("a task's JSON carries its status and metric in words, and whether its failure was a hidden case's") {
  TaskResult t;
  t.status = Status::not_implemented;
  t.metric = "naive_speedup";
  t.failed_in_hidden_case = true;
  const nlohmann::json j = t;
  CHECK(j.at("status_label") == "not implemented");
  CHECK(j.at("metric_label") == "multiple of the speed of the harness's naive kernel");
  CHECK(j.at("metric_unit") == "×");
  CHECK(j.at("hidden_case") == true);
  CHECK(j.get<TaskResult>().failed_in_hidden_case);
  CHECK_FALSE(nlohmann::json(TaskResult{}).contains("hidden_case"));
  CHECK_FALSE(nlohmann::json(TaskResult{}).contains("metric_label"));
}
