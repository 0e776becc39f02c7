#include "student_build.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

#include "allowlist.hpp"
#include "barrier_check.hpp"
#include "files.hpp"
#include "gpulab/text.hpp"

namespace gpulab::cli {

namespace fs = std::filesystem;

Toolchain Toolchain::load(const fs::path& build_dir) {
  const fs::path file = build_dir / "toolchain.json";
  std::ifstream in(file);
  if (!in) throw std::runtime_error(fmt::format("{} is missing: build the harness first (make check does)", file.string()));
  Toolchain t;
  t.build_dir = build_dir;
  in >> t.config;
  t.repo = t.config.at("repo").get<std::string>();
  return t;
}

bool Toolchain::has_backend(const std::string& backend) const {
  return config.contains("backends") && config["backends"].contains(backend);
}

namespace {

std::string join_quoted(const nlohmann::json& list) {
  std::string out;
  for (const auto& item : list) out += " " + shell_quote(item.get<std::string>());
  return out;
}

fs::file_time_type mtime_or_min(const fs::path& p) {
  std::error_code ec;
  auto t = fs::last_write_time(p, ec);
  return ec ? fs::file_time_type::min() : t;
}

// Rebuilds `output` unless it is newer than every input and was made by the same command.
bool up_to_date(const fs::path& output, const std::vector<fs::path>& inputs, const std::string& command) {
  const fs::path stamp = output.string() + ".cmd";
  if (!fs::exists(output) || read_text(stamp) != command) return false;
  const auto built = fs::last_write_time(output);
  for (const auto& in : inputs)
    if (mtime_or_min(in) > built) return false;
  return true;
}

void write_stamp(const fs::path& output, const std::string& command) {
  std::ofstream(output.string() + ".cmd") << command;
}

std::string link_hint(const std::string& log) {
  if (log.find("undefined reference") == std::string::npos) return {};
  return "\nhint: the grader calls each function of the lab with the exact signature in the skeleton: "
         "did you rename a function or change its parameters?";
}

// The text with comments (and, with `blank_strings`, string and character literals) blanked out,
// newlines kept so line numbers stay right, lower-cased.
std::string code_only(const std::string& source, bool blank_strings = false) {
  std::string out = source;
  enum { code, line_comment, block_comment, quoted } state = code;
  char quote = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const char ch = out[i], next = i + 1 < out.size() ? out[i + 1] : '\0';
    switch (state) {
      case code:
        if (ch == '/' && next == '/') {
          state = line_comment;
        } else if (ch == '/' && next == '*') {
          state = block_comment;
        } else if (ch == '"' && i > 0 && out[i - 1] == 'R') {
          // A raw string R"delim( ... )delim": no escapes, may span lines.
          const auto open = out.find('(', i);
          const std::string end = ")" + (open == std::string::npos ? std::string() : out.substr(i + 1, open - i - 1)) + "\"";
          const auto close = open == std::string::npos ? std::string::npos : out.find(end, open);
          const std::size_t stop = close == std::string::npos ? out.size() : close + end.size();
          if (blank_strings)
            for (std::size_t k = i + 1; k + 1 < stop; ++k)
              if (out[k] != '\n') out[k] = ' ';
          i = stop - 1;
          continue;
        } else if (ch == '"' || (ch == '\'' && !(i > 0 && std::isxdigit(static_cast<unsigned char>(out[i - 1]))))) {
          state = quoted, quote = ch;  // a ' after a digit is a digit separator (1'000), not a character
        }
        break;
      case quoted:
        if (ch == '\\') {
          if (blank_strings && i + 1 < out.size() && out[i + 1] != '\n') out[i] = out[i + 1] = ' ';
          ++i;
        } else if (ch == quote || ch == '\n') {
          state = code;
        } else if (blank_strings) {
          out[i] = ' ';
        }
        continue;
      case line_comment:
        if (ch == '\n') state = code;
        break;
      case block_comment:
        if (ch == '*' && next == '/') {
          out[i] = out[i + 1] = ' ';
          ++i;
          state = code;
          continue;
        }
        break;
    }
    if ((state == line_comment || state == block_comment) && out[i] != '\n') out[i] = ' ';
  }
  return lower_case(std::move(out));
}

}  // namespace

namespace {

bool identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

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
        const bool starts = !identifier_char(p.front()) || at == 0 || !identifier_char(row[at - 1]);
        const std::size_t after = at + p.size();
        const bool ends = !whole_words || !identifier_char(p.back()) || after >= row.size() || !identifier_char(row[after]);
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

std::string trim_compiler_output(const std::string& output, const std::string& strip_prefix, std::size_t max_lines) {
  std::istringstream in(output);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!strip_prefix.empty())
      for (std::size_t at; (at = line.find(strip_prefix)) != std::string::npos;) line.erase(at, strip_prefix.size());
    lines.push_back(line);
  }
  // Start at the first error, so warnings before it do not push it off the screen.
  std::size_t first = 0;
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (lines[i].find("error") != std::string::npos || lines[i].find("undefined reference") != std::string::npos ||
        lines[i].find("cannot find") != std::string::npos) {
      first = i > 0 && lines[i - 1].find("In function") != std::string::npos ? i - 1 : i;
      break;
    }
  std::string out;
  for (std::size_t i = first; i < lines.size() && i < first + max_lines; ++i) out += lines[i] + "\n";
  if (lines.size() > first + max_lines) out += fmt::format("… ({} more lines)\n", lines.size() - first - max_lines);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

namespace {

BuildResult refusal(std::string message, std::string log) {
  BuildResult r;
  r.rejected = true;
  r.message = std::move(message);
  r.log = std::move(log);
  return r;
}

// The text scans, each with file:line: the lab's forbidden libraries, the host calls no lab may make,
// includes that reach for files outside the lab, and inline assembly in a host-only file.
std::optional<BuildResult> scan_sources(const Manifest& manifest, const std::vector<std::string>& files,
                                        const fs::path& student_dir) {
  for (const auto& f : files) {
    const std::string text = read_text(student_dir / f), where = (student_dir / f).string();
    struct Scan {
      std::vector<ForbiddenUse> uses;
      std::string why;
    };
    const bool host_only = fs::path(f).extension() == ".cpp";
    const Scan scans[] = {
        {find_forbidden(text, manifest.forbidden), "which this lab forbids: the point is to write the kernels yourself"},
        {find_forbidden(text, host_calls_forbidden_everywhere(), true),
         "which no lab may call: lab code computes on the device and touches no files, processes, threads or network"},
        {find_escaping_includes(text), "include only the lab's headers and the harness's (gpulab/...) by name"},
        {host_only ? find_forbidden(text, {"asm", "__asm", "__asm__"}, true) : std::vector<ForbiddenUse>{},
         "inline assembly, which host code may not contain: write C++ and OpenCL C"}};
    for (const auto& scan : scans) {
      if (scan.uses.empty()) continue;
      std::string log;
      for (const auto& u : scan.uses) log += fmt::format("{}:{}: forbidden: {}\n", where, u.line, u.what);
      return refusal(fmt::format("{}:{} uses {}, {}", where, scan.uses.front().line, scan.uses.front().what, scan.why), log);
    }
  }
  return std::nullopt;
}

// What the allowlist says about one compiled file: the headers the compiler included, the symbols
// the object references, and system call instructions in its host code. Adds the file's contract
// functions (the only symbols the student library exports) to `exports`.
std::optional<BuildResult> check_compiled(const Toolchain& toolchain, const Manifest& manifest, const std::string& backend,
                                          const fs::path& shown, const fs::path& object, const fs::path& depfile,
                                          const CommandRunner& execute, std::vector<std::string>& exports) {
  const fs::path lists = toolchain.repo / "grader" / "allowlist";
  auto header_patterns = load_header_patterns(lists / "headers.txt");
  header_patterns.insert(header_patterns.end(), manifest.forbidden_headers.begin(), manifest.forbidden_headers.end());
  // The lab's own folder is the student's (its path may hold any name); what it includes from elsewhere counts.
  const std::string own_folder = fs::absolute(shown).parent_path().lexically_normal().string() + "/";
  std::vector<std::string> included;
  for (auto& h : included_headers(read_text(depfile), fs::absolute(shown).string()))
    if (fs::path(h).lexically_normal().string().rfind(own_folder, 0) != 0) included.push_back(std::move(h));
  const auto headers = refused_headers(included, header_patterns, toolchain.repo / "common" / "include");
  if (!headers.empty()) {
    std::string log;
    for (const auto& h : headers) log += fmt::format("{} includes {} (matches {})\n", shown.string(), h.header, h.pattern);
    return refusal(fmt::format("{} includes {}, a header no lab file may include: the point is to write the kernels "
                               "yourself (the refused headers are in grader/allowlist/headers.txt and the lab's lab.toml)",
                               shown.string(), headers.front().header),
                   log);
  }
  const CommandOutput nm = execute("nm -P " + shell_quote(object.string()));
  if (nm.status != 0) throw std::runtime_error(fmt::format("nm could not read {}: {}", object.string(), nm.output));
  const ObjectSymbols symbols = parse_nm(nm.output);
  auto allowlist = SymbolAllowlist::load(lists / (backend + ".txt"));
  allowlist.add(manifest.allow);
  if (const auto refused = refused_references(symbols, allowlist); !refused.empty()) {
    std::vector<std::string> readable;
    for (const auto& name : refused) readable.push_back(demangle(name));
    return refusal(fmt::format("{} refers to {}, which a lab file may not use: lab code launches kernels on the "
                               "device buffers it is given, copies nothing to the host and touches no files, "
                               "processes, clocks or network (the allowed calls are listed in grader/allowlist/{}.txt)",
                               shown.string(), fmt::join(readable, ", "), backend),
                   fmt::format("symbols of {} outside the allowlist: {}", shown.filename().string(), fmt::join(refused, " ")));
  }
  const CommandOutput disassembly = execute("objdump -d --no-show-raw-insn " + shell_quote(object.string()));
  if (disassembly.status != 0)
    throw std::runtime_error(fmt::format("objdump could not read {}: {}", object.string(), disassembly.output));
  if (const auto calls = system_call_instructions(disassembly.output); !calls.empty())
    return refusal(fmt::format("{} contains the instruction '{}' in its host code, which only inline assembly puts "
                               "there: host code may not contain inline assembly",
                               shown.string(), calls.front()),
                   fmt::format("{}: {}", shown.filename().string(), fmt::join(calls, "; ")));
  std::vector<std::string> functions;
  for (const auto& t : manifest.tasks) functions.push_back(t.function);
  for (auto& s : contract_symbols(symbols, functions)) exports.push_back(std::move(s));
  return std::nullopt;
}

std::optional<BuildResult> link_failure(const CommandOutput& c, std::string message, const std::string& strip) {
  if (c.status == 0) return std::nullopt;
  BuildResult r;
  r.message = std::move(message);
  r.log = trim_compiler_output(c.output, strip) + link_hint(c.output);
  return r;
}

// Links the student's objects into a shared library that exports only the contract functions
// (everything else local, so no student definition can replace one of the harness, the C++ runtime
// or the device runtime) and resolves nothing but the device runtime and the C/C++ libraries
// (-z defs: a reference to the harness does not link); then the runner, from the harness and it.
std::optional<BuildResult> link_runner(const Toolchain& toolchain, const Manifest& manifest, const std::string& backend,
                                       const std::vector<fs::path>& objects, const std::vector<std::string>& exports,
                                       const fs::path& work_dir, const CommandRunner& execute) {
  const auto& cfg = toolchain.config;
  const auto& backend_cfg = cfg["backends"][backend];
  const std::string strip = toolchain.repo.string() + "/";
  const fs::path toolchain_file = toolchain.build_dir / "toolchain.json";
  const fs::path script = work_dir / "student.map", library = fs::absolute(work_dir / "libstudent.so");
  // Rewritten only when it changes: a newer script would relink both the library and the runner on
  // every check, half a second of a re-check with nothing changed.
  if (const std::string wanted = version_script(exports); !fs::exists(script) || read_text(script) != wanted)
    write_text_atomically(wanted, script);
  std::string command = fmt::format("{} -shared -o {} -Wl,--version-script={} -Wl,-z,defs", cfg["cxx"].get<std::string>(),
                                    shell_quote(library.string()), shell_quote(script.string()));
  std::vector<fs::path> inputs{toolchain_file, script};
  for (const auto& o : objects) {
    command += " " + shell_quote(o.string());
    inputs.push_back(o);
  }
  // Guards check the arguments of calls the allowlist lets through (a copy's direction, a buffer's
  // flags), unless the lab allows the call outright (hello copies to and from the host).
  if (backend_cfg.contains("guards"))
    for (const auto& [symbol, archive] : backend_cfg["guards"].items()) {
      if (std::find(manifest.allow.begin(), manifest.allow.end(), symbol) != manifest.allow.end()) continue;
      command += " -Wl,--wrap=" + symbol + " " + shell_quote(archive.get<std::string>());
      inputs.emplace_back(archive.get<std::string>());
    }
  command += join_quoted(backend_cfg["student_link"]);
  if (!up_to_date(library, inputs, command)) {
    fs::remove(library);
    if (auto failed = link_failure(execute(command), fmt::format("the {} files of {} do not link on their own: they may "
                                                                 "use only the device runtime and the C/C++ libraries",
                                                                 backend, manifest.id),
                                   strip))
      return failed;
    write_stamp(library, command);
  }

  const fs::path runner = work_dir / "runner";
  command = cfg["cxx"].get<std::string>() + " -o " + shell_quote(runner.string()) + " -Wl,--start-group";
  inputs = {toolchain_file, library};
  for (const auto& lib : cfg["labs"][manifest.name + "/" + backend]) {
    command += " " + shell_quote(lib.get<std::string>());
    inputs.emplace_back(lib.get<std::string>());
  }
  // The library by its absolute path (no soname): no search path can put another in its place.
  command += " -Wl,--end-group " + shell_quote(library.string()) + join_quoted(backend_cfg["link"]);
  if (!up_to_date(runner, inputs, command)) {
    fs::remove(runner);
    if (auto failed = link_failure(execute(command), fmt::format("the {} files of {} do not link with the harness", backend, manifest.id),
                                   strip))
      return failed;
    write_stamp(runner, command);
  }
  return std::nullopt;
}

// Compiles the student's .cu and .cpp files (kernels in .cl are built by the runner at run time),
// holds each object to the allowlist, and links the runner.
BuildResult compile_and_link(const Toolchain& toolchain, const Manifest& manifest, const std::string& backend,
                             const std::vector<std::string>& files, const fs::path& student_dir, const fs::path& work_dir,
                             const CommandRunner& execute) {
  BuildResult result;
  const auto& cfg = toolchain.config;
  fs::create_directories(work_dir);
  const std::string strip = toolchain.repo.string() + "/";
  const fs::path toolchain_file = toolchain.build_dir / "toolchain.json";
  std::vector<fs::path> harness_headers;
  for (const auto& h : fs::recursive_directory_iterator(toolchain.repo / "common" / "include"))
    if (h.is_regular_file()) harness_headers.push_back(h.path());

  std::vector<fs::path> objects;
  std::vector<std::string> exports;
  for (const auto& f : files) {
    const fs::path source = fs::absolute(student_dir / f);
    std::string compiler;
    if (source.extension() == ".cu")
      compiler = cfg["cuda"]["nvcc"].get<std::string>() + join_quoted(cfg["cuda"]["flags"]);
    else if (source.extension() == ".cpp")
      compiler = cfg["cxx"].get<std::string>() + join_quoted(cfg["cxx_flags"]);
    else
      continue;  // kernels (.cl) are built by the runner at run time
    const fs::path object = work_dir / (source.filename().string() + ".o");
    const fs::path depfile = work_dir / (source.filename().string() + ".d");
    // -MD: the headers the compiler actually included, as a by-product of the one compilation.
    const std::string command = fmt::format("{}{} -MD -MF {} -c {} -o {}", compiler, join_quoted(cfg["backends"][backend]["include"]),
                                            shell_quote(depfile.string()), shell_quote(source.string()), shell_quote(object.string()));
    std::vector<fs::path> inputs = harness_headers;
    inputs.push_back(source);
    inputs.push_back(toolchain_file);
    if (!up_to_date(object, inputs, command) || !fs::exists(depfile)) {
      fs::remove(object);
      const CommandOutput c = execute(command);
      if (c.status != 0) {
        result.message = fmt::format("{} does not compile", (student_dir / f).string());
        result.log = trim_compiler_output(c.output, strip);
        return result;
      }
      write_stamp(object, command);
    }
    if (auto refused = check_compiled(toolchain, manifest, backend, student_dir / f, object, depfile, execute, exports))
      return *refused;
    objects.push_back(object);
  }
  if (auto failed = link_runner(toolchain, manifest, backend, objects, exports, work_dir, execute)) return *failed;
  result.ok = true;
  result.runner = work_dir / "runner";
  return result;
}

}  // namespace

BuildResult build_lab(const Toolchain& toolchain, const Manifest& manifest, const std::string& backend,
                      const fs::path& student_dir, const fs::path& work_dir, const CommandRunner& run) {
  BuildResult result;
  const CommandRunner execute = run ? run : CommandRunner(run_command);
  const auto& cfg = toolchain.config;
  if (!toolchain.has_backend(backend)) {
    result.message = fmt::format("this build has no {} backend (is its SDK installed?)", backend);
    return result;
  }
  const auto files = manifest.files.find(backend);
  if (files == manifest.files.end()) {
    result.message = fmt::format("lab {} has no {} version", manifest.id, backend);
    return result;
  }
  if (!cfg["labs"].contains(manifest.name + "/" + backend)) {
    result.message = fmt::format("the harness has no driver for {} ({}): rebuild it after adding the lab", manifest.id, backend);
    return result;
  }

  std::vector<std::string> missing;
  for (const auto& f : files->second)
    if (!fs::exists(student_dir / f)) missing.push_back((student_dir / f).string());
  if (!missing.empty()) {
    result.message = fmt::format("missing file{}: {} (restore it from the course repository, e.g. with git checkout -- <file>)",
                                 missing.size() > 1 ? "s" : "", fmt::join(missing, ", "));
    return result;
  }
  if (auto refused = scan_sources(manifest, files->second, student_dir)) return *refused;
  const auto warnings = find_source_warnings(manifest, files->second, student_dir);
  result = compile_and_link(toolchain, manifest, backend, files->second, student_dir, work_dir, execute);
  result.warnings = warnings;
  return result;
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
        out.push_back({shown, finding.line, describe(finding)});
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
