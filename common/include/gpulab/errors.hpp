// Exceptions shared by the harness and student code. No dependencies beyond the standard library,
// because student translation units (compiled by nvcc or the C++ compiler) include this header.
#pragma once
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

}  // namespace gpulab

// Marks an open TODO in a skeleton. Delete the line once you have written the code above it.
#define GPULAB_NOT_IMPLEMENTED(todo) throw ::gpulab::NotImplemented(__FILE__, __LINE__, todo)
