// Whole-file reads and writes shared by the gpulab command.
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

}  // namespace gpulab::cli
