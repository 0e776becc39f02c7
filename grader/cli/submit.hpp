// gpulab submit: sends one lab's student files to the course server (gpulab serve) with the student's
// token, follows the queue, and prints the official report, exiting as `gpulab check` does (0: every
// required task passed; 1: some failed; 2: nothing was graded: a refused upload, a server error, a
// submission the grader could not grade). With `status`, lists the student's submissions instead.
#pragma once
#include <filesystem>
#include <string>

namespace gpulab::cli {

struct SubmitOptions {
  std::string server, token;  // empty: from the file `.gpulab-submit` at the repository's root
  std::string lab;
  std::filesystem::path source;  // the folder of lab folders (or a clone's root); empty: labs/
  bool status = false;
  double poll_s = 2;
};

// The file a course hands out beside the token: lines `server = URL` and `token = TOKEN`.
inline constexpr const char* kSubmitSettingsFile = ".gpulab-submit";

int submit(SubmitOptions o);

}  // namespace gpulab::cli
