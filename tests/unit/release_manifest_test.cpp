// The student release's surgery on lab.toml text: hidden [[cases]] blocks go, everything else stays.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "release.hpp"

using gpulab::cli::remove_hidden_case_blocks;

namespace {
const char* kManifest = R"(# A lab.
name = "x"

[[tasks]]
name = "t"
function = "f"

# Visible shapes.
[[cases]]
name = "a"
n = 1

[[cases]]  # a comment on the header
name = "b"
n = [1,
     2]

# Hidden cases: instructor grading only.
[[cases]]
name = "secret 1"
n = 41
hidden = true

[[cases]]
name = "secret 2"
hidden = true
# This comment is about the timing case below.

[[cases]]
name = "timed"
n = 4096
timing = true
)";
}  // namespace

TEST_CASE("hidden case blocks are removed with the comment above them, and the rest of the text stays as it was") {
  const std::string released = remove_hidden_case_blocks(kManifest, {false, false, true, true, false});
  CHECK(released == R"(# A lab.
name = "x"

[[tasks]]
name = "t"
function = "f"

# Visible shapes.
[[cases]]
name = "a"
n = 1

[[cases]]  # a comment on the header
name = "b"
n = [1,
     2]

# This comment is about the timing case below.

[[cases]]
name = "timed"
n = 4096
timing = true
)");
}

TEST_CASE("hidden cases at the end of the file leave no trailing blank line, and no hidden case changes nothing") {
  const std::string text = "name = \"x\"\n\n[[cases]]\nname = \"a\"\n\n[[cases]]\nname = \"h\"\nhidden = true\n";
  CHECK(remove_hidden_case_blocks(text, {false, true}) == "name = \"x\"\n\n[[cases]]\nname = \"a\"\n");
  CHECK(remove_hidden_case_blocks(kManifest, {false, false, false, false, false}) == kManifest);
}

TEST_CASE("cases written other than as one [[cases]] block each are refused, since their hidden ones cannot be cut out") {
  CHECK_THROWS_WITH(remove_hidden_case_blocks("cases = [{ name = \"a\", hidden = true }]\n", {true}),
                    doctest::Contains("write each case as a [[cases]] block of its own"));
}
