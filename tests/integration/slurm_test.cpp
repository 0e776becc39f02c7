// `gpulab grade --slurm` through a real Slurm: a single-node cluster (munged, slurmctld and slurmd of
// Debian's slurm-wlm, on this machine, with a generated slurm.conf and ports of their own) grades small
// batches of the hello lab on OpenCL (PoCL). main() starts the cluster once and exits 77 (skipped),
// saying why, when it cannot: Slurm not installed, not root (slurmd runs jobs as their users), or the
// daemons would not come up.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "batch.hpp"
#include "cli_harness.hpp"
#include "server_process.hpp"

extern char** environ;

using namespace gpulab::testing;
using nlohmann::json;

namespace {

// A TCP port nobody listens on now (the kernel's choice), for the daemons of this run alone.
int free_port() {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(s);
  return ntohs(a.sin_port);
}

std::string shell(const std::string& command) {
  std::string output;
  run_command(command, output);
  return output;
}

// munged, slurmctld and slurmd in a folder of their own; stopped (with every job) when it goes.
class SlurmCluster {
 public:
  std::string why_not;  // "" when it runs

  SlurmCluster() {
    for (const char* tool : {"munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "sinfo"})
      if (shell(fmt::format("command -v {} || ls /usr/sbin/{}", tool, tool)).find(tool) == std::string::npos) {
        why_not =
            fmt::format("{} is not installed (Debian: apt-get install slurmctld slurmd slurm-client munge)", tool);
        return;
      }
    if (::geteuid() != 0) {
      why_not = "the single-node cluster needs root: slurmd starts each job as its user";
      return;
    }
    char tmpl[] = "/tmp/gpulab-slurm-XXXXXX";  // short: munged's socket path must fit a sockaddr_un
    dir_ = ::mkdtemp(tmpl);
    write_config();
    ::setenv("SLURM_CONF", (dir_ / "slurm.conf").c_str(), 1);
    start({"/usr/sbin/munged", "-F", "-f", "--socket=" + (dir_ / "munge.sock").string(),
           "--key-file=" + (dir_ / "munge.key").string(), "--log-file=" + (dir_ / "munged.log").string(),
           "--pid-file=" + (dir_ / "munged.pid").string(), "--seed-file=" + (dir_ / "munged.seed").string()});
    start({"/usr/sbin/slurmctld", "-D", "-i", "-f", (dir_ / "slurm.conf").string()});
    start({"/usr/sbin/slurmd", "-D", "-N", "localhost", "-f", (dir_ / "slurm.conf").string()});
    for (int i = 0; i < 60; ++i) {
      if (shell("sinfo -h -o %T -n localhost").find("idle") != std::string::npos) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    why_not = fmt::format("the daemons did not bring the node up in 30 s: sinfo says '{}'; slurmctld.log ends: {}",
                          shell("sinfo -h -o %T -n localhost"),
                          shell(fmt::format("tail -n 3 '{}'", (dir_ / "slurmctld.log").string())));
  }

  ~SlurmCluster() {
    if (why_not.empty()) shell("scancel --quiet --user=root");
    for (auto it = pids_.rbegin(); it != pids_.rend(); ++it) ::kill(*it, SIGTERM);
    for (pid_t p : pids_) ::waitpid(p, nullptr, 0);
    if (!dir_.empty()) fs::remove_all(dir_);
  }

 private:
  fs::path dir_;
  std::vector<pid_t> pids_;

  void write_config() {
    shell(
        fmt::format("head -c 1024 /dev/urandom > '{0}/munge.key' && chmod 600 '{0}/munge.key' && mkdir -p "
                    "'{0}/state' '{0}/spool'",
                    dir_.string()));
    const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
    write_file(dir_ / "slurm.conf", fmt::format(R"(ClusterName=gpulabtest
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={0}/munge.sock
SlurmctldPort={1}
SlurmdPort={2}
StateSaveLocation={0}/state
SlurmdSpoolDir={0}/spool
SlurmctldPidFile={0}/slurmctld.pid
SlurmdPidFile={0}/slurmd.pid
SlurmctldLogFile={0}/slurmctld.log
SlurmdLogFile={0}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=localhost NodeAddr=127.0.0.1 CPUs={3} RealMemory=1000 State=UNKNOWN
PartitionName=grading Nodes=localhost Default=YES MaxTime=INFINITE State=UP
)",
                                                dir_.string(), free_port(), free_port(), cpus));
  }

  void start(const std::vector<std::string>& argv) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    ::posix_spawn_file_actions_init(&actions);
    const std::string log = (dir_ / (fs::path(argv[0]).filename().string() + ".out")).string();
    ::posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::posix_spawn_file_actions_adddup2(&actions, 1, 2);
    pid_t pid = 0;
    if (::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ) == 0) pids_.push_back(pid);
    ::posix_spawn_file_actions_destroy(&actions);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
};

// The newest submission's record (OUT/slurm/<id>/submission.json).
json newest_submission(const fs::path& out) {
  fs::path newest;
  for (const auto& e : fs::directory_iterator(out / "slurm"))
    if (fs::exists(e.path() / "submission.json") && e.path() > newest) newest = e.path();
  return json::parse(read_file(newest / "submission.json"));
}

// Waits until the job has left the queue (the finishing job: the whole submission has ended).
bool wait_for_job(const std::string& id, int seconds) {
  for (int i = 0; i < seconds * 2; ++i) {
    if (shell(fmt::format("squeue -h -j {} -o %i", id)).find(id) == std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  return false;
}

std::string slurm_grade(const Batch& batch, const std::string& args) {
  std::string output;
  const int code = batch.grade("--lab hello --backend opencl --slurm " + args, output);
  INFO(output);
  CHECK(code == 0);
  return output;
}

}  // namespace

TEST_CASE(
    "a batch submitted with --slurm is graded by the array's tasks into one OUT, and the job after them "
    "writes the gradebook") {
  Batch batch("slurm-batch");
  for (const char* s : {"alice", "carol", "erin"}) batch.add_folder(s, "solutions", "00-hello");
  batch.add_folder("bob", "labs", "00-hello");  // the skeleton: not implemented, zero points
  slurm_grade(batch, "--array-chunk 2");
  const json submission = newest_submission(batch.out);
  CHECK(submission["tasks"] == 2);
  REQUIRE(wait_for_job(submission["finish_job"], 300));

  const std::string array = submission["array_job"];
  for (const char* s : {"alice", "bob", "carol", "erin"}) {
    const json r = batch.result(s);
    INFO(s << ": " << r.dump());
    CHECK(r["slurm_job"].get<std::string>().starts_with(array + "_"));
    CHECK(!r["node"].get<std::string>().empty());
    CHECK(r["score"] == (std::string(s) == "bob" ? 0.0 : 2.0));
  }
  const std::string gradebook = read_file(batch.out / "grades.csv");
  for (const char* s : {"alice,", "bob,", "carol,", "erin,"}) CHECK(gradebook.find(s) != std::string::npos);
  const json record = json::parse(read_file(batch.out / "batch.json"));
  CHECK(record["slurm"]["array_job"] == array);
  CHECK(record["slurm"]["tasks"].size() == 2);
  for (const auto& [task, state] : record["slurm"]["tasks"].items()) CHECK(state == "done");
  CHECK(!fs::exists(batch.out / ".scratch" / fmt::format("slurm-{}_0", array)));

  std::string status;
  batch.grade("--lab hello --slurm --status", status);
  INFO(status);
  CHECK(status.find("4 graded") != std::string::npos);
  CHECK(status.find("tasks done: " + array + "_0, " + array + "_1") != std::string::npos);
  CHECK(status.find("(written)") != std::string::npos);
  // Nothing changed: a second submission queues nothing.
  CHECK(slurm_grade(batch, "").find("nothing to submit") != std::string::npos);
}

TEST_CASE(
    "an array task cancelled while it grades leaves no half-written result, and the next submission grades "
    "only its student, none twice") {
  Batch batch("slurm-cancel");
  for (const char* s : {"ann", "ben", "cat"}) batch.add_folder(s, "solutions", "00-hello");
  slurm_grade(batch, "--array-chunk 1 --max-running 1");
  const json first = newest_submission(batch.out);
  const std::string array = first["array_job"];
  // Task 0 (ann) is cancelled once it has started grading.
  const fs::path status_file = batch.out / "slurm" / "tasks" / (array + "_0.json");
  for (int i = 0; i < 240 && !fs::exists(status_file); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(250));
  REQUIRE(fs::exists(status_file));
  shell(fmt::format("scancel {}_0", array));
  REQUIRE(wait_for_job(first["finish_job"], 300));

  const json ann = batch.result("ann");  // complete JSON: written atomically, or not at all
  CHECK(ann["grader_error"] == true);
  CHECK(ann["error"].get<std::string>().find(array + "_0 ended before grading it") != std::string::npos);
  const json ben = batch.result("ben"), cat = batch.result("cat");
  CHECK(ben["score"] == 2.0);
  CHECK(cat["score"] == 2.0);
  CHECK(read_file(batch.out / "grades.csv").find("ann,") != std::string::npos);

  std::string status;
  batch.grade("--lab hello --slurm --status", status);
  INFO(status);
  CHECK(status.find("ended unfinished") != std::string::npos);
  CHECK(status.find(array + "_0") != std::string::npos);

  slurm_grade(batch, "--array-chunk 1");
  const json second = newest_submission(batch.out);
  CHECK(second["students"] == 1);
  REQUIRE(wait_for_job(second["finish_job"], 300));
  CHECK(batch.result("ann")["score"] == 2.0);
  CHECK(batch.result("ann")["slurm_job"] == second["array_job"].get<std::string>() + "_0");
  // The others keep the record of the first submission: graded once.
  CHECK(batch.result("ben")["graded_at"] == ben["graded_at"]);
  CHECK(batch.result("cat")["slurm_job"] == cat["slurm_job"]);
}

TEST_CASE(
    "a course server with --slurm grades each submission as a Slurm job, and queues again one whose job was "
    "cancelled") {
  const fs::path root = fs::path(GPULAB_SCRATCH) / "slurm-server";
  fs::remove_all(root);
  write_file(root / "roster.csv", "id,name,email\nalice,Alice,alice@example.org\n");
  const std::string cli = std::string("'") + GPULAB_CLI + "'";
  shell(cli + " roster --dir '" + (root / "server").string() + "' --import '" + (root / "roster.csv").string() + "'");
  const std::string tokens = read_file(root / "server" / "tokens.csv");
  const std::string token = tokens.substr(tokens.find("alice,") + 6, 64);
  // Each job starts 4 s after it is queued: time to cancel the first one before it runs.
  ServerProcess server(root / "server", {"--slurm", "--grade-arg=--sbatch-arg=--begin=now+4"});
  std::string output;
  int code = -1;
  std::thread student([&] {
    code = run_command(cli + " submit --server " + server.url() + " --token " + token +
                           " --lab hello --poll 0.3 --source '" + repo_path("solutions").string() + "'",
                       output);
  });
  std::string cancelled;
  for (int i = 0; i < 600 && cancelled.empty(); ++i) {
    cancelled = shell("squeue -h -n gpulab-grade -o %i");
    cancelled.erase(cancelled.find_last_not_of(" \n") + 1);
    if (cancelled.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!cancelled.empty()) shell("scancel " + cancelled);
  student.join();
  INFO(output);
  INFO(read_file(server.log()));
  CHECK_FALSE(cancelled.empty());
  CHECK(code == 0);
  CHECK(output.find("PASSED: 1 of 1 tasks passed, 2 of 2 points") != std::string::npos);
  CHECK(read_file(server.log()).find("its Slurm job ended without a result") != std::string::npos);
}

int main(int argc, char** argv) {
  SlurmCluster cluster;
  if (!cluster.why_not.empty()) {
    fmt::print("skipped: {}\n", cluster.why_not);
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
