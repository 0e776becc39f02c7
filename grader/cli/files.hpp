// Whole-file reads and writes shared by the gpulab command, and running a shell command for its output.
#pragma once
#include <filesystem>
#include <string>

namespace gpulab::cli {

// The file's bytes, or "" when it cannot be read.
std::string read_text(const std::filesystem::path& path);
// The file's bytes; throws "cannot read PATH" when it cannot be read.
std::string read_text_or_throw(const std::filesystem::path& path);
// Writes via a temporary file and a rename, so a reader never sees half a file; throws when the
// disk refuses.
void write_text_atomically(const std::string& text, const std::filesystem::path& path);

// What a shell command line printed (stdout and stderr together) and its exit status (0: success;
// -1: it could not be started).
struct CommandOutput {
  int status = -1;
  std::string output;
};
CommandOutput run_command(const std::string& shell_command);

}  // namespace gpulab::cli
