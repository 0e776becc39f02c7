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
  t.gbps = 1000;
  t.ratio = 0.3;
  t.threshold = 0.6;
  t.max_points = 7;
  CaseResult c;
  c.name = "8192x8192";
  c.passed = true;
  c.timing = TimingSummary{0.5, 0.4, 0.9, 15};
  c.bytes = 5e8;
  t.cases.push_back(c);

  const nlohmann::json j = t;
  CHECK(j.at("status") == "too_slow");
  CHECK(j.at("cases")[0].at("gbps").get<double>() == doctest::Approx(1000));
  const auto back = j.get<TaskResult>();
  CHECK(back.status == Status::too_slow);
  CHECK(back.ratio == 0.3);
  CHECK(back.threshold == 0.6);
  CHECK(back.cases.at(0).timing->samples == 15);
  CHECK_FALSE(nlohmann::json(TaskResult{}).contains("ratio"));
}

TEST_CASE("every status has a name that reads back as the same status") {
  for (Status s : {Status::passed, Status::wrong_result, Status::too_slow, Status::not_implemented,
                   Status::compile_error, Status::kernel_fault, Status::timeout, Status::crashed, Status::error,
                   Status::not_run}) {
    CHECK(status_from_string(to_string(s)) == s);
    CHECK(std::string(describe(s)).find('_') == std::string::npos);
  }
  CHECK_THROWS(status_from_string("bogus"));
}

TEST_CASE("bandwidth is bytes over the median time") {
  CaseResult c;
  c.bytes = 2e9;
  CHECK_FALSE(c.gbps());
  c.timing = TimingSummary{2.0, 1.0, 3.0, 10};  // 2 GB in 2 ms
  CHECK(*c.gbps() == doctest::Approx(1000));
}
