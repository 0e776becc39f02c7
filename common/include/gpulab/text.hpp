// Small text helpers used across the grader, each written once.
#pragma once
#include <algorithm>
#include <cctype>
#include <string>

namespace gpulab {

// `s` with its ASCII letters in lower case.
inline std::string lower_case(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// `s` as one word for a POSIX shell: in single quotes, each ' written as '\''.
inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// `text` with every occurrence of `from` replaced by `to` (removed when `to` is empty), left to right.
inline std::string replace_all(std::string text, const std::string& from, const std::string& to = "") {
  for (std::size_t at = 0; !from.empty() && (at = text.find(from, at)) != std::string::npos; at += to.size())
    text.replace(at, from.size(), to);
  return text;
}

}  // namespace gpulab
