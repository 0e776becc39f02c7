// Exceptions shared by the harness and student code. No dependencies beyond the standard library,
// because student translation units (compiled by nvcc or the C++ compiler) include this header.
#pragma once
#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace gpulab {

// Thrown by a skeleton function whose TODO is still open: the grader reports "not implemented"
// with the file and line instead of a wrong result.
class NotImplemented : public std::logic_error {
 public:
  NotImplemented(std::string file, int line, const std::string& todo)
      : std::logic_error(todo), file_(std::move(file)), line_(line) {}
  const std::string& file() const { return file_; }
  int line() const { return line_; }

 private:
  std::string file_;
  int line_;
};

// A failed CUDA or OpenCL call. `what()` says what was being done and what the API answered.
class ApiError : public std::runtime_error {
 public:
  ApiError(std::string api, int code, std::string code_name, const std::string& message)
      : std::runtime_error(message), api_(std::move(api)), code_(code), code_name_(std::move(code_name)) {}
  const std::string& api() const { return api_; }
  int code() const { return code_; }
  const std::string& code_name() const { return code_name_; }

 private:
  std::string api_;
  int code_;
  std::string code_name_;
};

// A kernel wrote outside a buffer that student code allocated itself (cudaMalloc, clCreateBuffer):
// the harness puts guard zones around those too (grader/allowlist/*_guards.cpp) and checks them
// when the buffer is freed. The runner reports it as a buffer violation.
class BufferOverrun : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What changed in the guard zones around a `size`-byte buffer (`front` and `back`, each filled with
// `pattern` before): "1 byte after its end (offset 6)"; empty when both are intact.
inline std::string guard_damage(const unsigned char* front, const unsigned char* back, std::size_t guard,
                                std::size_t size, unsigned char pattern) {
  std::size_t first = guard, last = 0, count = 0;
  for (std::size_t i = 0; i < guard; ++i)
    if (front[i] != pattern) first = std::min(first, i), ++count;
  std::string out;
  if (count > 0) out = std::to_string(guard - first) + " byte(s) before its start";
  count = 0;
  for (std::size_t i = 0; i < guard; ++i)
    if (back[i] != pattern) last = i, ++count;
  if (count > 0)
    out += (out.empty() ? "" : " and ") + std::to_string(last + 1) + " byte(s) after its end (up to offset " +
           std::to_string(size + last) + " of a " + std::to_string(size) + "-byte buffer)";
  return out;
}

}  // namespace gpulab

// Marks an open TODO in a skeleton. Delete the line once you have written the code above it.
#define GPULAB_NOT_IMPLEMENTED(todo) throw ::gpulab::NotImplemented(__FILE__, __LINE__, todo)
