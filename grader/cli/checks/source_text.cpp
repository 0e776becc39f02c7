#include "source_text.hpp"

#include <algorithm>
#include <cctype>

namespace gpulab::cli {

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

namespace {

// A ' inside a number (1'000) separates digits; anywhere else it opens a character literal.
bool digit_separator(const std::string& s, std::size_t quote) {
  std::size_t k = quote;
  while (k > 0 && is_identifier_char(s[k - 1])) --k;
  return k < quote && std::isdigit(static_cast<unsigned char>(s[k]));
}

// The end of the literal that opens at `i` (past its closing quote, or at the end of its line or text),
// blanking its contents when asked.
std::size_t skip_literal(std::string& s, std::size_t i, Literals literals) {
  const char quote = s[i];
  if (quote == '"' && i > 0 && s[i - 1] == 'R') {  // R"delim( ... )delim": no escapes, may span lines
    const std::size_t open = s.find('(', i);
    const std::string close = open == std::string::npos ? "\"" : ")" + s.substr(i + 1, open - i - 1) + "\"";
    const std::size_t at = s.find(close, i + 1);
    const std::size_t end = at == std::string::npos ? s.size() : at + close.size();
    if (literals == Literals::blank) blank_range(s, i + 1, end - 1);
    return end;
  }
  std::size_t k = i + 1;
  while (k < s.size() && s[k] != quote && s[k] != '\n') k += s[k] == '\\' ? 2 : 1;
  k = std::min(k, s.size());
  if (literals == Literals::blank) blank_range(s, i + 1, k);
  return k < s.size() && s[k] == quote ? k + 1 : k;
}

}  // namespace

void blank_range(std::string& text, std::size_t from, std::size_t to) {
  for (std::size_t k = from; k < to && k < text.size(); ++k)
    if (text[k] != '\n') text[k] = ' ';
}

std::string blank_comments(std::string s, Literals literals) {
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i], next = i + 1 < s.size() ? s[i + 1] : '\0';
    if (c == '/' && next == '/') {
      const std::size_t end = std::min(s.find('\n', i), s.size());
      blank_range(s, i, end);
      i = end;
    } else if (c == '/' && next == '*') {
      const std::size_t close = s.find("*/", i + 2);
      const std::size_t end = close == std::string::npos ? s.size() : close + 2;
      blank_range(s, i, end);
      i = end;
    } else if (c == '"' || (c == '\'' && !digit_separator(s, i))) {
      i = skip_literal(s, i, literals);
    } else {
      ++i;
    }
  }
  return s;
}

}  // namespace gpulab::cli
