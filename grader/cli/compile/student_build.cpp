#include "student_build.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "allowlist.hpp"
#include "files.hpp"
#include "gpulab/text.hpp"

namespace gpulab::cli {

namespace fs = std::filesystem;

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

}  // namespace

std::string trim_compiler_output(const std::string& output, const std::string& strip_prefix, std::size_t max_lines) {
  std::istringstream in(output);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) { lines.push_back(replace_all(line, strip_prefix)); }
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

std::string compile_failure_message(const std::string& file, const BuildCommandOutput& c) {
  if (c.stopped_by.empty()) return fmt::format("{} does not compile", file);
  // Not a verdict on the code's correctness: the compiler never finished, and what stopped it says what to fix.
  const bool output = c.stopped_by.find("output limit") != std::string::npos;
  return fmt::format("{} could not be compiled: the compiler was stopped {}{}", file, c.stopped_by,
                     output ? " — fix the first errors below: thousands of messages usually come from one mistake "
                              "repeated (a missing ';' or '}', a macro or template used in many places)"
                            : " — something in the file makes the compiler work without end (templates or constexpr "
                              "code that recurse, a huge array or unrolled loop)");
}

namespace {

BuildResult refusal(std::string message, std::string log) {
  BuildResult r;
  r.rejected = true;
  r.message = std::move(message);
  r.log = std::move(log);
  return r;
}

// What the allowlist says about one compiled file: the headers the compiler included, the symbols
// the object references, and system call instructions in its host code. Adds the file's contract
// functions (the only symbols the student library exports) to `exports`.
std::optional<BuildResult> check_compiled(const Toolchain& toolchain, const Manifest& manifest,
                                          const std::string& backend, const fs::path& shown, const fs::path& object,
                                          const fs::path& depfile, const CommandRunner& execute,
                                          std::vector<std::string>& exports) {
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
    for (const auto& h : headers)
      log += fmt::format("{} includes {} (matches {})\n", shown.string(), h.header, h.pattern);
    return refusal(
        fmt::format("{} includes {}, a header no lab file may include: the point is to write the kernels "
                    "yourself (the refused headers are in grader/allowlist/headers.txt and the lab's lab.toml)",
                    shown.string(), headers.front().header),
        log);
  }
  const BuildCommandOutput nm = execute("nm -P " + shell_quote(object.string()));
  if (nm.status != 0) throw std::runtime_error(fmt::format("nm could not read {}: {}", object.string(), nm.output));
  const ObjectSymbols symbols = parse_nm(nm.output);
  auto allowlist = SymbolAllowlist::load(lists / (backend + ".txt"));
  allowlist.add(manifest.allow);
  if (const auto refused = refused_references(symbols, allowlist); !refused.empty()) {
    std::vector<std::string> readable;
    for (const auto& name : refused) readable.push_back(demangle(name));
    return refusal(
        fmt::format("{} refers to {}, which a lab file may not use: lab code launches kernels on the "
                    "device buffers it is given, copies nothing to the host and touches no files, "
                    "processes, clocks or network (the allowed calls are listed in grader/allowlist/{}.txt)",
                    shown.string(), fmt::join(readable, ", "), backend),
        fmt::format("symbols of {} outside the allowlist: {}", shown.filename().string(), fmt::join(refused, " ")));
  }
  const BuildCommandOutput disassembly = execute("objdump -d --no-show-raw-insn " + shell_quote(object.string()));
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

std::optional<BuildResult> link_failure(const BuildCommandOutput& c, std::string message, const std::string& strip) {
  if (c.status == 0) return std::nullopt;
  BuildResult r;
  r.message = c.stopped_by.empty() ? std::move(message) : fmt::format("the linker was stopped {}", c.stopped_by);
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
  std::string command =
      fmt::format("{} -shared -o {} -Wl,--version-script={} -Wl,-z,defs", cfg["cxx"].get<std::string>(),
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
    if (auto failed = link_failure(execute(command),
                                   fmt::format("the {} files of {} do not link on their own: they may "
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
    if (auto failed =
            link_failure(execute(command),
                         fmt::format("the {} files of {} do not link with the harness", backend, manifest.id), strip))
      return failed;
    write_stamp(runner, command);
  }
  return std::nullopt;
}

// Compiles the student's .cu and .cpp files (kernels in .cl are built by the runner at run time),
// holds each object to the allowlist, and links the runner.
BuildResult compile_and_link(const Toolchain& toolchain, const Manifest& manifest, const std::string& backend,
                             const std::vector<std::string>& files, const fs::path& student_dir,
                             const fs::path& work_dir, const CommandRunner& execute) {
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
    const std::string command =
        fmt::format("{}{} -MD -MF {} -c {} -o {}", compiler, join_quoted(cfg["backends"][backend]["include"]),
                    shell_quote(depfile.string()), shell_quote(source.string()), shell_quote(object.string()));
    std::vector<fs::path> inputs = harness_headers;
    inputs.push_back(source);
    inputs.push_back(toolchain_file);
    if (!up_to_date(object, inputs, command) || !fs::exists(depfile)) {
      fs::remove(object);
      const BuildCommandOutput c = execute(command);
      if (c.status != 0) {
        result.message = compile_failure_message((student_dir / f).string(), c);
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
    result.message =
        fmt::format("the harness has no driver for {} ({}): rebuild it after adding the lab", manifest.id, backend);
    return result;
  }

  std::vector<std::string> missing;
  for (const auto& f : files->second)
    if (!fs::exists(student_dir / f)) missing.push_back((student_dir / f).string());
  if (!missing.empty()) {
    result.message =
        fmt::format("missing file{}: {} (restore it from the course repository, e.g. with git checkout -- <file>)",
                    missing.size() > 1 ? "s" : "", fmt::join(missing, ", "));
    return result;
  }
  if (auto refused = scan_sources(manifest, files->second, student_dir)) return refusal(refused->message, refused->log);
  const auto warnings = find_source_warnings(manifest, files->second, student_dir);
  result = compile_and_link(toolchain, manifest, backend, files->second, student_dir, work_dir, execute);
  result.warnings = warnings;
  return result;
}

}  // namespace gpulab::cli
