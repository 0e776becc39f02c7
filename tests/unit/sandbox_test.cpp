// What the sandbox says when it cannot do its work (sandbox.hpp): why a command could not start, which
// limit stopped one, and what its users cannot reach.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "files.hpp"
#include "sandbox.hpp"

using namespace gpulab;
using namespace gpulab::cli;
namespace fs = std::filesystem;

namespace {

// A folder of its own under the tests' scratch folder, removed when the test ends.
struct Folder {
  fs::path path;
  explicit Folder(const std::string& name) : path(fs::path(GPULAB_SCRATCH) / "sandbox-unit" / name) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Folder() {
    std::error_code ec;
    fs::permissions(path, fs::perms::owner_all, ec);
    fs::remove_all(path, ec);
  }
};

}  // namespace

TEST_CASE("a command whose sandbox user cannot enter its scratch folder does not start, and says why") {
  if (::geteuid() != 0) {
    MESSAGE("not root: no sandbox user to switch to; skipped");
    return;
  }
  const Folder root("private-scratch");
  const fs::path scratch = root.path / "private" / "box";
  fs::create_directories(scratch);
  fs::permissions(root.path / "private", fs::perms::owner_all);  // 0700, owned by root: a private home
  const Isolation plain;                                         // no bubblewrap: the user switch alone
  SandboxSpec spec;
  spec.isolation = &plain;
  spec.scratch = scratch;
  spec.user = 62999;
  const fs::path log = root.path / "log.txt";
  const ChildExit e = run_isolated({"/bin/true"}, log, Limits{}, spec);
  CHECK(e.exited_with(ExitStatus::cannot_start));
  const std::string said = read_text(log);
  CHECK(said.find("cannot enter the scratch folder " + scratch.string() + " as user 62999 (Permission denied)") !=
        std::string::npos);
  CHECK(sandbox_complaint(said).find("Permission denied") != std::string::npos);
}

TEST_CASE("a sandbox's complaint is one line of what it said, or says that it gave no reason") {
  CHECK(sandbox_complaint("bwrap: Can't mkdir /x: Permission denied\n") == "bwrap: Can't mkdir /x: Permission denied");
  CHECK(sandbox_complaint("first\nsecond\n") == "first second");
  CHECK(sandbox_complaint(" \n\t\n") == "it gave no reason");
  CHECK(sandbox_complaint("\x1b[31mred\x1b[0m") == "red");
}

TEST_CASE("the limit that stopped a command is named; a command that ended by itself has none") {
  Limits limits;
  limits.wall_s = 300;
  limits.output_bytes = 16 << 20;
  limits.memory_bytes = 8ull << 30;
  ChildExit e;
  e.status = 1 << 8;  // exit status 1
  CHECK(limit_that_stopped(e, 1000, limits).empty());
  // A compiler whose output file is full: it may die of SIGXFSZ, or exit with an error writing.
  CHECK(limit_that_stopped(e, 16 << 20, limits) == "when its messages reached 16 MiB, the output limit per file");
  e.status = SIGXFSZ, e.signal = SIGXFSZ;
  CHECK(limit_that_stopped(e, 100, limits) == "when its messages reached 16 MiB, the output limit per file");
  e.killed_for = KillReason::timeout;
  CHECK(limit_that_stopped(e, 100, limits) == "after 300 s, the time limit");
  e.killed_for = KillReason::memory;
  CHECK(limit_that_stopped(e, 100, limits) == "when it used more than 8.0 GiB of memory, the memory limit");
}

TEST_CASE("what a sandbox user cannot reach is found with the folder that stops it, its mode, owner and the fix") {
  if (::geteuid() != 0) {
    MESSAGE("not root: no sandbox user to ask as; skipped");
    return;
  }
  const Folder root("needs");
  fs::permissions(root.path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                 fs::perms::others_read | fs::perms::others_exec);
  fs::create_directories(root.path / "private" / "out");
  fs::permissions(root.path / "private", fs::perms::owner_all);
  std::ofstream(root.path / "secret.a") << "x";
  fs::permissions(root.path / "secret.a", fs::perms::owner_read | fs::perms::owner_write);
  std::ofstream(root.path / "open.a") << "x";
  fs::permissions(root.path / "open.a", fs::perms::owner_read | fs::perms::others_read);

  CHECK(access_denied(root.path / "open.a", kProbeUser, R_OK).empty());
  CHECK(access_denied(root.path / "private" / "out", kProbeUser, X_OK) == "Permission denied");
  const SandboxNeed open{root.path / "open.a", R_OK, "the harness library", "", {}, {}};
  CHECK_FALSE(first_unmet_need({open}, kProbeUser));

  const SandboxNeed scratch{root.path / "private" / "out" / "probe", R_OK | X_OK, "the scratch folder",
                            "give --out a folder outside it",        {},          root.path / "private" / "out"};
  const auto blocked = first_unmet_need({open, scratch}, kProbeUser);
  REQUIRE(blocked);
  CHECK(blocked->blocked_at == root.path / "private");
  CHECK(blocked->mode == 0700);
  CHECK(blocked->owner == "root");
  CHECK(describe(*blocked) ==
        fmt::format("the sandbox users (uids without an account, one per job, such as {}) cannot reach the scratch "
                    "folder {} (Permission denied): {} is mode 0700, owner root. Nothing was graded. Fix: let other "
                    "users pass through {} without listing it: chmod o+x '{}'; or give --out a folder outside it",
                    kProbeUser, (root.path / "private" / "out").string(), (root.path / "private").string(),
                    (root.path / "private").string(), (root.path / "private").string()));

  const auto unreadable =
      first_unmet_need({{root.path / "secret.a", R_OK, "the harness library", "", {}, {}}}, kProbeUser);
  REQUIRE(unreadable);
  CHECK(unreadable->blocked_at == root.path / "secret.a");
  CHECK(unreadable->mode == 0600);
  CHECK(describe(*unreadable)
            .find("Fix: let other users read it: chmod -R o+rX '" + (root.path / "secret.a").string() + "'") !=
        std::string::npos);
}

TEST_CASE("a folder the grader made private by its umask is blamed on the umask") {
  AccessProblem p;
  p.need = {"/srv/out/.scratch/local/probe",  R_OK | X_OK, "the scratch folder",
            "give --out a folder outside it", {},          "/srv/out/.scratch/local"};
  p.blocked_at = "/srv/out";
  p.mode = 0700;
  p.owner = "root";
  p.reason = "Permission denied";
  p.umask = "0077";
  p.uid = kProbeUser;
  CHECK(describe(p).find("Fix: run gpulab with umask 022 (it is 0077 now, so the folders it makes are private); or "
                         "let other users pass through /srv/out") != std::string::npos);
}
