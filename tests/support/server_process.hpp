// A `gpulab serve` for the end-to-end tests (server_test.cpp, slurm_test.cpp).
#pragma once
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "cli_harness.hpp"

namespace gpulab::testing {

// A `gpulab serve` process on a free loopback port; killed (SIGKILL) when it goes, unless stopped.
class ServerProcess {
 public:
  explicit ServerProcess(const fs::path& dir, std::vector<std::string> more = {}) : dir_(dir) {
    std::vector<std::string> args{GPULAB_CLI, "serve",       "--dir",     dir_.string(),
                                  "--listen", "127.0.0.1:0", "--backend", "opencl"};
    args.insert(args.end(), more.begin(), more.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    log_ = dir_.parent_path() / ("serve-" + std::to_string(++starts_) + ".log");
    const fs::path& log = log_;
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::setpgid(0, 0);
      std::freopen(log.c_str(), "w", stdout);
      ::dup2(::fileno(stdout), 2);  // one stream: the messages in the order they came
      ::execv(GPULAB_CLI, argv.data());
      ::_exit(127);
    }
    // It prints its port once it listens.
    for (int i = 0; i < 600 && port_ == 0 && ::waitpid(pid_, nullptr, WNOHANG) == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      const std::string text = read_file(log);
      if (const auto at = text.find("listening on http://127.0.0.1:"); at != std::string::npos)
        port_ = std::stoi(text.substr(at + 30));
    }
    INFO(read_file(log));
    REQUIRE(port_ > 0);
  }
  ~ServerProcess() { kill(SIGKILL); }
  void kill(int signal) {
    if (pid_ <= 0) return;
    ::kill(-pid_, signal);  // the server and the grading it runs
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  const fs::path& log() const { return log_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  fs::path dir_, log_;
  pid_t pid_ = -1;
  int port_ = 0;
  static inline int starts_ = 0;
};

}  // namespace gpulab::testing
