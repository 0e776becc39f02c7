#include "files.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace gpulab::cli {

namespace fs = std::filesystem;

namespace {
std::string read_all(std::ifstream& in) {
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return read_all(in);
}

std::string read_text_or_throw(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("cannot read {}", path.string()));
  return read_all(in);
}

void write_text_atomically(const std::string& text, const fs::path& path) {
  fs::create_directories(path.parent_path());
  const fs::path temporary = path.string() + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary);
    out << text;
    out.flush();
    if (!out) throw std::runtime_error(fmt::format("cannot write {} (disk full?)", temporary.string()));
  }
  fs::rename(temporary, path);
}

}  // namespace gpulab::cli
