// Test support for the barrier check's tests: its findings as text, for a failing test's message.
#pragma once
#include <fmt/format.h>

#include <string>
#include <vector>

#include "barrier_check.hpp"
#include "cli_harness.hpp"

namespace gpulab::testing {

inline std::string all_findings(const std::vector<cli::BarrierFinding>& findings) {
  std::string out;
  for (const auto& f : findings) out += fmt::format("{}: {}\n", f.line, cli::describe(f));
  return out;
}

}  // namespace gpulab::testing
