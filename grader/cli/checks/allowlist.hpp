// The allowlist a compiled student file is checked against: which symbols it may reference (one
// reviewed file per backend under grader/allowlist/), which headers it may not include, and what
// its host code may not contain. Works on the compiled objects (nm, objdump, the compiler's
// dependency output), so names assembled by macros, line splices and casts are seen as they are.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace gpulab::cli {

// Globs (fnmatch) on mangled names, read from a file: one per line, '#' comments, `include other.txt`.
class SymbolAllowlist {
 public:
  static SymbolAllowlist load(const std::filesystem::path& file);
  SymbolAllowlist() = default;
  explicit SymbolAllowlist(std::vector<std::string> patterns) : patterns_(std::move(patterns)) {}
  bool allows(const std::string& mangled_name) const;
  void add(const std::vector<std::string>& patterns);

 private:
  std::vector<std::string> patterns_;
};

// The symbols of one object, from `nm -P` (POSIX format, mangled names).
struct ObjectSymbols {
  std::vector<std::string> referenced;      // undefined (U), weak undefined (w, v without a value)
  std::vector<std::string> defined_global;  // strong global definitions (T, D, B, R, ...)
};
ObjectSymbols parse_nm(const std::string& nm_posix_output);

// The referenced symbols the allowlist does not allow, in nm's order, each once.
std::vector<std::string> refused_references(const ObjectSymbols& symbols, const SymbolAllowlist& allowlist);

// The readable form of a mangled name (the name itself when it is not C++).
std::string demangle(const std::string& mangled_name);

// The contract functions among an object's global definitions: those whose demangled name is one of
// `functions` followed by its parameter list. These are all the student's library exports.
std::vector<std::string> contract_symbols(const ObjectSymbols& symbols, const std::vector<std::string>& functions);

// The linker version script that exports `symbols` and makes everything else local.
std::string version_script(const std::vector<std::string>& symbols);

// Every header in a make-style dependency file (-MD -MF), the target and the source itself left out.
std::vector<std::string> included_headers(const std::string& depfile_text, const std::string& source);

struct RefusedHeader {
  std::string header;   // the path the compiler included
  std::string pattern;  // what it matched
};
// Headers matching one of `patterns` at the start of a path component, and harness headers (under
// `harness_include`/gpulab/) other than the student API (gpulab/student/*, gpulab/errors.hpp).
std::vector<RefusedHeader> refused_headers(const std::vector<std::string>& headers,
                                           const std::vector<std::string>& patterns,
                                           const std::filesystem::path& harness_include);

// Header patterns from a file: one per line, '#' comments.
std::vector<std::string> load_header_patterns(const std::filesystem::path& file);

// Instructions that enter the kernel (syscall, sysenter, int) in `objdump -d` output: only inline
// assembly puts them into compiled host code.
std::vector<std::string> system_call_instructions(const std::string& objdump_output);

}  // namespace gpulab::cli
