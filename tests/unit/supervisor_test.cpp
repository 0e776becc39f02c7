// Which tasks a run selects (supervisor): every task by default, the requested ones, and a
// requested name that is no task of the selected labs refused with the names there are.
#include <doctest/doctest.h>

#include <stdexcept>

#include "supervisor.hpp"

using namespace gpulab;

namespace {

Manifest made_up_lab(const std::string& id, const std::vector<std::string>& tasks) {
  Manifest m;
  m.id = id;
  m.name = id.substr(id.find('-') + 1);
  for (const auto& name : tasks) {
    Task t;
    t.name = name;
    t.function = m.name + "_" + name;
    m.tasks.push_back(t);
  }
  return m;
}

}  // namespace

TEST_CASE("a run selects every task by default, or those requested, in the manifest's order") {
  const Manifest m = made_up_lab("05-saxpy", {"naive", "tiled", "fast"});
  CHECK(cli::select_tasks(m, {}) == std::vector<std::string>{"naive", "tiled", "fast"});
  CHECK(cli::select_tasks(m, {"fast", "naive"}) == std::vector<std::string>{"naive", "fast"});
}

TEST_CASE("a requested task that no selected lab has is an error that lists the tasks there are") {
  const std::vector<Manifest> one{made_up_lab("05-saxpy", {"naive", "optimized"})};
  CHECK_NOTHROW(cli::require_known_tasks(one, {"optimized"}));
  CHECK_THROWS_WITH_AS(cli::require_known_tasks(one, {"optimised"}),
                       "TASK=optimised is not a task of 05-saxpy; the tasks are 05-saxpy: naive, optimized",
                       std::invalid_argument);
  const std::vector<Manifest> two{made_up_lab("05-saxpy", {"naive"}), made_up_lab("06-scan", {"block", "any-n"})};
  CHECK_NOTHROW(cli::require_known_tasks(two, {"any-n", "naive"}));  // each in one of the labs
  CHECK_THROWS_WITH_AS(cli::require_known_tasks(two, {"naive", "fast"}),
                       "TASK=fast is not a task of any selected lab; the tasks are 05-saxpy: naive; 06-scan: block, "
                       "any-n",
                       std::invalid_argument);
}
