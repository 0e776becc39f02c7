#include "contract.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

namespace gpulab {
namespace {

// What a backend's signatures may name besides the built-in types: CUDA's vector and texture types
// (uchar4, float4, cudaTextureObject_t), OpenCL's cl_mem and the harness's gpulab::OpenCLLab.
const char* backend_include(const std::string& backend) {
  if (backend == "cuda") return "<cuda_runtime.h>";
  if (backend == "opencl") return "\"gpulab/student/opencl.hpp\"";
  throw ManifestError(fmt::format("no contract for backend '{}': use cuda or opencl", backend));
}

// A string literal for #line: the path with its backslashes and quotes escaped.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out + '"';
}

// Each function once, in the order the tasks name them (two tasks may share a function).
std::vector<const Task*> functions_of(const Manifest& m, const std::string& signature) {
  std::vector<const Task*> out;
  std::set<std::string> seen;
  for (const auto& t : m.tasks)
    if (t.signature == signature && seen.insert(t.function).second) out.push_back(&t);
  return out;
}

// A function named by two tasks with different signatures cannot be declared twice.
void require_one_signature_per_function(const Manifest& m) {
  for (const auto& a : m.tasks)
    for (const auto& b : m.tasks)
      if (a.function == b.function && a.signature != b.signature)
        throw ManifestError(
            fmt::format("{}:{}: tasks '{}' and '{}' name function '{}' with different signatures "
                        "('{}', '{}'): one function has one signature",
                        m.path.string(), b.function_line, a.name, b.name, a.function, a.signature, b.signature));
}

}  // namespace

std::string contract_header(const Manifest& m, const std::string& backend, const std::string& header) {
  const std::string include = backend_include(backend);
  if (m.signatures.empty())
    throw ManifestError(
        fmt::format("{}: no [signatures]: declare the student functions' types there, e.g. "
                    "[signatures.{}] with {} = \"void(const float* in, float* out, int n)\"",
                    m.path.string(), m.name, backend));
  require_one_signature_per_function(m);
  const std::string manifest = quoted(std::filesystem::absolute(m.path).lexically_normal().string());
  std::ostringstream out;
  out << fmt::format(
      "// The {} lab's contract for {}, made from {} by gpulab-contract: do not edit this\n"
      "// file; edit [signatures] and the tasks' `function` there.\n"
      "#pragma once\n#include <map>\n#include <string>\n\n#include {}\n\n",
      m.name, backend, m.path.filename().string(), include);
  for (const auto& s : m.signatures) {
    const auto type = s.types.find(backend);
    if (type == s.types.end())
      throw ManifestError(fmt::format("{}: [signatures.{}] has no {} type", m.path.string(), s.name, backend));
    out << fmt::format(
        "namespace gpulab::contract {{\n#line {} {}\nusing {} = {};\n}}  // namespace gpulab::contract\n",
        s.lines.at(backend), manifest, s.name, type->second);
    // The declarations the student's files define: `using` a function type declares a function.
    for (const Task* t : functions_of(m, s.name))
      out << fmt::format("#line {} {}\ngpulab::contract::{} {};\n", t->function_line, manifest, s.name, t->function);
  }
  const std::string so_far = out.str();
  out << fmt::format("#line {} {}\n", std::count(so_far.begin(), so_far.end(), '\n') + 2, quoted(header));
  out << "\nnamespace gpulab::contract {\n";
  for (const auto& s : m.signatures) {
    out << fmt::format(
        "// The functions of signature {} by the names lab.toml gives them.\n"
        "inline const std::map<std::string, {}*>& {}_functions() {{\n"
        "  static const std::map<std::string, {}*> functions{{\n",
        s.name, s.name, s.name, s.name);
    for (const Task* t : functions_of(m, s.name))
      out << fmt::format("      {{\"{}\", ::{}}},\n", t->function, t->function);
    out << "  };\n  return functions;\n}\n";
  }
  out << "}  // namespace gpulab::contract\n";
  return out.str();
}

void write_if_changed(const std::filesystem::path& path, const std::string& text) {
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::ostringstream old;
      old << in.rdbuf();
      if (old.str() == text) return;
    }
  }
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.flush()) throw std::runtime_error("could not write " + path.string());
}

}  // namespace gpulab
