#include "allowlist.hpp"

#include <cxxabi.h>
#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>

#include "files.hpp"

namespace gpulab::cli {

namespace fs = std::filesystem;

namespace {

std::string trimmed(std::string line) {
  if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
  const auto first = line.find_first_not_of(" \t\r");
  if (first == std::string::npos) return {};
  const auto last = line.find_last_not_of(" \t\r");
  return line.substr(first, last - first + 1);
}

// The meaningful lines of a list file: comments and blanks dropped.
std::vector<std::string> list_lines(const fs::path& file) {
  if (!fs::is_regular_file(file))
    throw std::runtime_error(
        fmt::format("the allowlist {} is missing: restore it from the course repository", file.string()));
  std::istringstream in(read_text(file));
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    if (auto entry = trimmed(line); !entry.empty()) out.push_back(std::move(entry));
  return out;
}

}  // namespace

SymbolAllowlist SymbolAllowlist::load(const fs::path& file) {
  SymbolAllowlist list;
  for (const auto& entry : list_lines(file)) {
    if (entry.rfind("include ", 0) == 0) {
      list.add(load(file.parent_path() / trimmed(entry.substr(8))).patterns_);
      continue;
    }
    list.patterns_.push_back(entry);
  }
  return list;
}

void SymbolAllowlist::add(const std::vector<std::string>& patterns) {
  patterns_.insert(patterns_.end(), patterns.begin(), patterns.end());
}

bool SymbolAllowlist::allows(const std::string& mangled_name) const {
  return std::any_of(patterns_.begin(), patterns_.end(),
                     [&](const std::string& p) { return ::fnmatch(p.c_str(), mangled_name.c_str(), 0) == 0; });
}

ObjectSymbols parse_nm(const std::string& nm_posix_output) {
  ObjectSymbols symbols;
  std::istringstream in(nm_posix_output);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string name, type, value;
    if (!(fields >> name >> type) || type.size() != 1) continue;
    const bool has_value = static_cast<bool>(fields >> value);
    if (const auto at = name.find('@'); at != std::string::npos) name.resize(at);  // fork@GLIBC_2.2.5
    const char t = type[0];
    if (t == 'U' || ((t == 'w' || t == 'v') && !has_value))
      symbols.referenced.push_back(name);
    else if (std::string_view("TDBRGSCiu").find(t) != std::string_view::npos)
      symbols.defined_global.push_back(name);
  }
  return symbols;
}

std::vector<std::string> refused_references(const ObjectSymbols& symbols, const SymbolAllowlist& allowlist) {
  std::vector<std::string> refused;
  std::set<std::string> seen;
  for (const auto& name : symbols.referenced)
    if (!allowlist.allows(name) && seen.insert(name).second) refused.push_back(name);
  return refused;
}

std::string demangle(const std::string& mangled_name) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> readable(
      abi::__cxa_demangle(mangled_name.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && readable ? std::string(readable.get()) : mangled_name;
}

std::vector<std::string> contract_symbols(const ObjectSymbols& symbols, const std::vector<std::string>& functions) {
  std::vector<std::string> out;
  for (const auto& name : symbols.defined_global) {
    const std::string readable = demangle(name);
    for (const auto& f : functions)
      if (readable.rfind(f + "(", 0) == 0) {
        out.push_back(name);
        break;
      }
  }
  return out;
}

std::string version_script(const std::vector<std::string>& symbols) {
  std::string script = "{\n  global:\n";
  for (const auto& s : symbols) script += "    " + s + ";\n";
  return script + "  local: *;\n};\n";
}

std::vector<std::string> included_headers(const std::string& depfile_text, const std::string& source) {
  // Make syntax: "target: dep dep \<newline> dep"; spaces in names are escaped as "\ ".
  std::vector<std::string> out;
  std::string current;
  bool after_colon = false;
  auto finish = [&] {
    if (!current.empty() && after_colon && current != source && fs::path(current) != fs::path(source))
      out.push_back(current);
    current.clear();
  };
  for (std::size_t i = 0; i < depfile_text.size(); ++i) {
    const char c = depfile_text[i];
    if (c == '\\' && i + 1 < depfile_text.size() && (depfile_text[i + 1] == ' ' || depfile_text[i + 1] == '#')) {
      current += depfile_text[++i];
    } else if (c == '\\' && i + 1 < depfile_text.size() &&
               (depfile_text[i + 1] == '\n' || depfile_text[i + 1] == '\r')) {
      finish();
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      finish();
    } else if (c == ':' && !after_colon &&
               (i + 1 == depfile_text.size() || std::isspace(static_cast<unsigned char>(depfile_text[i + 1])))) {
      current.clear();  // the target
      after_colon = true;
    } else {
      current += c;
    }
  }
  finish();
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<RefusedHeader> refused_headers(const std::vector<std::string>& headers,
                                           const std::vector<std::string>& patterns, const fs::path& harness_include) {
  std::vector<RefusedHeader> out;
  const std::string harness = (harness_include / "gpulab").lexically_normal().string() + "/";
  for (const auto& header : headers) {
    const std::string path = fs::path(header).lexically_normal().string();
    if (path.rfind(harness, 0) == 0) {
      const std::string inside = path.substr(harness.size());
      if (inside.rfind("student/", 0) != 0 && inside != "errors.hpp")
        out.push_back({header, "gpulab/" + inside + " (the harness's own header)"});
      continue;
    }
    for (const auto& p : patterns) {
      bool hit = false;
      for (auto at = path.find(p); at != std::string::npos && !hit; at = path.find(p, at + 1))
        hit = at == 0 || path[at - 1] == '/';
      if (hit) {
        out.push_back({header, p});
        break;
      }
    }
  }
  return out;
}

std::vector<std::string> load_header_patterns(const fs::path& file) { return list_lines(file); }

std::vector<std::string> system_call_instructions(const std::string& objdump_output) {
  std::vector<std::string> out;
  std::istringstream in(objdump_output);
  for (std::string line; std::getline(in, line);) {
    // "  1f:	0f 05                	syscall" - the mnemonic is the third tab-separated field.
    const auto tab = line.rfind('\t');
    if (tab == std::string::npos || line.find(':') == std::string::npos) continue;
    std::istringstream fields(line.substr(tab + 1));
    std::string mnemonic;
    fields >> mnemonic;
    if (mnemonic == "syscall" || mnemonic == "sysenter" || mnemonic == "int" || mnemonic == "sysexit" ||
        mnemonic == "sysret")
      out.push_back(trimmed(line.substr(tab + 1)));
  }
  return out;
}

}  // namespace gpulab::cli
