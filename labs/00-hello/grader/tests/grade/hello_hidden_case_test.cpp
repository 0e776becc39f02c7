// Hidden cases in batch grading, shown on this lab's kernel: a kernel wrong only for the length of one
// hidden case (257 characters) loses the task, and what the student sees names neither. Part of
// gpulab_grade_tests.
#include <doctest/doctest.h>

#include <regex>

#include "batch.hpp"

using namespace gpulab::testing;
using nlohmann::json;

TEST_CASE("a kernel wrong only on a hidden case loses the task, and its feedback names neither the case nor its size") {
  Batch b("grade-hidden-failure");
  b.add_folder("sly", "solutions", "00-hello");
  const fs::path kernel = b.submissions / "sly" / "labs" / "00-hello" / "hello.cl";
  std::string text = read_file(kernel);
  const std::string bounds = "if (i < n)";
  REQUIRE(text.find(bounds) != std::string::npos);
  text.replace(text.find(bounds), bounds.size(), "if (i < n && n != 257)");  // 257 characters: a hidden case
  write_file(kernel, text);
  std::string output;
  REQUIRE(b.grade("--lab hello --backend opencl", output) == 0);
  INFO(output);
  const json r = b.result("sly");
  CHECK(statuses(r)["hello"] == "wrong_result");
  CHECK(r["score"] == 0.0);
  const json* hello = nullptr;
  for (const auto& t : r["labs"][0]["tasks"]) hello = &t;
  REQUIRE(hello);
  CHECK(hello->value("hidden_case", false));  // the instructor's record says which kind
  // Every case ran: the visible ones passed in one process, the hidden ones in another.
  CHECK((*hello)["cases_passed"].get<int>() + 1 == (*hello)["cases_total"].get<int>());
  for (const char* file : {"results.json", "feedback.txt", "feedback.html"}) {
    const std::string seen = read_file(b.out / "students" / "sly" / file);
    CAPTURE(file);
    // 257 as a number of its own: a random seed or a time may hold the digits (seed 540257815).
    CHECK_FALSE(std::regex_search(seen, std::regex("(^|[^0-9])257([^0-9]|$)")));
    CHECK(seen.find("does not publish") != std::string::npos);
  }
}
