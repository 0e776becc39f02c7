#include "source_scan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "barrier_check.hpp"
#include "files.hpp"
#include "gpulab/text.hpp"
#include "source_text.hpp"

namespace gpulab::cli {

namespace fs = std::filesystem;

namespace {

// The text with comments (and, with `blank_strings`, string and character literals) blanked out,
// newlines kept so line numbers stay right, lower-cased.
std::string code_only(const std::string& source, bool blank_strings = false) {
  return lower_case(blank_comments(source, blank_strings ? Literals::blank : Literals::keep));
}

// Calls each line of `text` with its number.
template <typename F>
void for_each_line(const std::string& text, F&& f) {
  int line = 1;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    f(line, std::string_view(text.data() + start, end - start));
    ++line;
    start = end + 1;
  }
}

}  // namespace

std::vector<ForbiddenUse> find_forbidden(const std::string& source, const std::vector<std::string>& patterns,
                                         bool whole_words) {
  // Library names count in strings too (#include <cub/...>); a call named in a message does not.
  const std::string text = code_only(source, whole_words);
  std::vector<std::string> lowered;
  for (const auto& p : patterns) lowered.push_back(lower_case(p));
  std::vector<ForbiddenUse> out;
  for_each_line(text, [&](int line, std::string_view row) {
    for (std::size_t i = 0; i < patterns.size(); ++i) {
      const std::string& p = lowered[i];
      if (p.empty()) continue;
      for (std::size_t at = row.find(p); at != std::string_view::npos; at = row.find(p, at + 1)) {
        const bool starts = !is_identifier_char(p.front()) || at == 0 || !is_identifier_char(row[at - 1]);
        const std::size_t after = at + p.size();
        const bool ends =
            !whole_words || !is_identifier_char(p.back()) || after >= row.size() || !is_identifier_char(row[after]);
        if (starts && ends) {
          out.push_back({line, patterns[i]});
          break;
        }
      }
    }
  });
  return out;
}

const std::vector<std::string>& host_calls_forbidden_everywhere() {
  static const std::vector<std::string> calls{
      // files
      "fopen", "fopen64", "freopen", "fdopen", "open", "openat", "creat", "fstream", "ofstream", "ifstream", "filebuf",
      "std::filesystem", "unlink", "unlinkat", "rename", "mkdir", "rmdir", "ftruncate", "chmod", "chown", "symlink",
      "opendir", "mmap", "write", "pwrite", "pwrite64", "writev", "pwritev", "dup", "dup2", "dup3", "fileno", "open64",
      "symlinkat", "linkat", "renameat", "renameat2", "mkfifo", "mknod", "truncate", "sendfile", "basic_ofstream",
      "basic_ifstream", "basic_fstream", "basic_filebuf",
      // processes, threads, signals, dynamic loading, raw system calls
      "fork", "vfork", "clone", "system", "popen", "execl", "execlp", "execle", "execv", "execvp", "execvpe", "execve",
      "posix_spawn", "posix_spawnp", "kill", "ptrace", "prctl", "setrlimit", "syscall", "dlopen", "dlsym",
      "std::thread", "std::jthread", "std::async", "pthread_create",
      // network
      "socket", "connect", "getaddrinfo", "gethostbyname", "sendto", "curl_easy_init"};
  return calls;
}

std::vector<ForbiddenUse> find_escaping_includes(const std::string& source) {
  std::vector<ForbiddenUse> out;
  for_each_line(code_only(source), [&](int line, std::string_view row) {
    const auto hash = row.find_first_not_of(" \t");
    if (hash == std::string_view::npos || row[hash] != '#') return;
    const auto directive = row.find_first_not_of(" \t", hash + 1);
    if (directive == std::string_view::npos) return;
    if (row.substr(directive, 5) == "embed") {
      out.push_back({line, "#embed (files are not part of a lab)"});
      return;
    }
    if (row.substr(directive, 7) != "include") return;
    const auto open = row.find_first_not_of(" \t", directive + 7);
    if (open == std::string_view::npos || (row[open] != '<' && row[open] != '"')) {
      out.push_back({line, "#include of a macro (name the header)"});
      return;
    }
    const auto path = row.substr(open + 1);
    if (path.substr(0, 1) == "/" || path.find("..") != std::string_view::npos)
      out.push_back({line, "#include of a path outside the lab"});
  });
  return out;
}

// The text scans, each with file:line: the lab's forbidden libraries, the host calls no lab may make,
// includes that reach for files outside the lab, and inline assembly in a host-only file.
std::optional<ScanRefusal> scan_sources(const Manifest& manifest, const std::vector<std::string>& files,
                                        const fs::path& student_dir) {
  for (const auto& f : files) {
    const std::string text = read_text(student_dir / f), where = (student_dir / f).string();
    struct Scan {
      std::vector<ForbiddenUse> uses;
      std::string why;
    };
    const bool host_only = fs::path(f).extension() == ".cpp";
    const Scan scans[] = {
        {find_forbidden(text, manifest.forbidden),
         "which this lab forbids: the point is to write the kernels yourself"},
        {find_forbidden(text, host_calls_forbidden_everywhere(), true),
         "which no lab may call: lab code computes on the device and touches no files, processes, threads or network"},
        {find_escaping_includes(text), "include only the lab's headers and the harness's (gpulab/...) by name"},
        {host_only ? find_forbidden(text, {"asm", "__asm", "__asm__"}, true) : std::vector<ForbiddenUse>{},
         "inline assembly, which host code may not contain: write C++ and OpenCL C"}};
    for (const auto& scan : scans) {
      if (scan.uses.empty()) continue;
      std::string log;
      for (const auto& u : scan.uses) log += fmt::format("{}:{}: forbidden: {}\n", where, u.line, u.what);
      return ScanRefusal{
          fmt::format("{}:{} uses {}, {}", where, scan.uses.front().line, scan.uses.front().what, scan.why), log};
    }
  }
  return std::nullopt;
}

std::vector<SourceWarning> find_source_warnings(const Manifest& manifest, const std::vector<std::string>& files,
                                                const fs::path& student_dir) {
  std::vector<SourceWarning> out;
  for (const auto& f : files) {
    const auto extension = fs::path(f).extension();
    if (extension != ".cu" && extension != ".cl") continue;
    const std::string shown = manifest.id.empty() ? f : manifest.id + "/" + f;
    try {
      for (const auto& finding : find_divergent_barriers(read_text(student_dir / f)))
        out.push_back({shown, finding.line,
                       finding.proven ? describe(finding)
                                      : describe(finding) + " (a warning: the check cannot prove that the " +
                                            (extension == ".cl" ? "work-items of a work-group" : "threads of a block") +
                                            " disagree here, so it does not grade it)",
                       finding.kernel, finding.proven});
    } catch (const std::exception&) {
      // A warning is advice: a file the check cannot read is the compiler's to report.
    }
  }
  return out;
}

std::vector<std::string> warning_lines(const std::vector<SourceWarning>& warnings) {
  std::vector<std::string> out;
  for (const auto& w : warnings) out.push_back(fmt::format("{}:{}: {}", w.file, w.line, w.message));
  return out;
}

}  // namespace gpulab::cli
