// SHA-256 of texts and files (OpenSSL's EVP): the identity of a submission, a grader build or a
// lab's files, and the file name of a cached calibration.
#pragma once
#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>

namespace gpulab::cli {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  Sha256& update(const void* data, std::size_t size);
  Sha256& update(const std::string& text) { return update(text.data(), text.size()); }
  Sha256& update_file(const std::filesystem::path& file);  // throws when it cannot be read
  std::string hex();                                       // finishes the digest

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gpulab::cli
