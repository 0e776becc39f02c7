// Small text helpers used across the grader, each written once.
#pragma once
#include <algorithm>
#include <cctype>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

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

// The lines of `text`, without their newlines (a last line without one counts too).
inline std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// `text` as a number when all of it is one ("2.5", "1e6"); empty for "", words or trailing characters.
inline std::optional<double> parse_double(const std::string& text) {
  if (text.empty()) return std::nullopt;
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {}
  return std::nullopt;
}

// `s` safe as HTML text and as a quoted attribute value: & < > " ' escaped.
inline std::string html_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  return out;
}

namespace text_detail {

// The length of the UTF-8 sequence that starts at text[at], or 0 when it is not a valid one
// (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF, cut short).
inline std::size_t utf8_length(const std::string& text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return i < text.size() ? static_cast<unsigned char>(text[i]) : 0u; };
  const unsigned c = byte(at);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned low = 0x80, high = 0xBF;  // the range of the second byte
  if (c >= 0xC2 && c <= 0xDF)
    n = 2;
  else if (c >= 0xE0 && c <= 0xEF)
    n = 3, low = c == 0xE0 ? 0xA0 : 0x80, high = c == 0xED ? 0x9F : 0xBF;
  else if (c >= 0xF0 && c <= 0xF4)
    n = 4, low = c == 0xF0 ? 0x90 : 0x80, high = c == 0xF4 ? 0x8F : 0xBF;
  else
    return 0;
  if (byte(at + 1) < low || byte(at + 1) > high) return 0;
  for (std::size_t i = 2; i < n; ++i)
    if (byte(at + i) < 0x80 || byte(at + i) > 0xBF) return 0;
  return n;
}

// Where an escape sequence ends, given the character that introduced it (the byte after ESC, or a
// C1 control less 0x40) and the position after that: CSI's parameters and final byte, a control
// string (OSC, DCS, SOS, PM, APC) up to its terminator (BEL, ESC \ or the C1 ST), or an ESC
// sequence's intermediate bytes and final byte.
inline std::size_t escape_end(const std::string& text, char introducer, std::size_t at) {
  const auto in = [&](std::size_t i, char low, char high) {
    return i < text.size() && text[i] >= low && text[i] <= high;
  };
  if (introducer == '[') {
    while (in(at, 0x20, 0x3F)) ++at;  // parameters and intermediates
    return in(at, 0x40, 0x7E) ? at + 1 : at;
  }
  if (introducer == ']' || introducer == 'P' || introducer == 'X' || introducer == '^' || introducer == '_') {
    for (; at < text.size(); ++at) {
      if (text[at] == '\a') return at + 1;
      if (text.compare(at, 2, "\x1b\\") == 0 || text.compare(at, 2, "\xC2\x9C") == 0) return at + 2;
    }
    return at;
  }
  if (introducer < 0x20 || introducer > 0x2F) return at;  // a two-byte sequence, already passed
  while (in(at, 0x20, 0x2F)) ++at;
  return in(at, 0x30, 0x7E) ? at + 1 : at;
}

}  // namespace text_detail

// `text` safe to show on a terminal, in a file a student reads or in a page: escape sequences
// (ESC and the C1 controls, with what they introduce) and the other control characters removed,
// but newlines and tabs; a carriage return becomes a newline (alone, it would let a line overwrite
// the one before), and a byte that is not valid UTF-8 becomes U+FFFD.
inline std::string printable(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[at]);
    if (c == '\x1b') {
      const bool introduced = at + 1 < text.size() && text[at + 1] >= 0x20 && text[at + 1] <= 0x7E;
      at = introduced ? text_detail::escape_end(text, text[at + 1], at + 2) : at + 1;
    } else if (c == '\r') {
      out += '\n';
      at += text.compare(at, 2, "\r\n") == 0 ? 2 : 1;
    } else if (c < 0x20 || c == 0x7F) {
      if (c == '\n' || c == '\t') out += static_cast<char>(c);
      ++at;
    } else if (const std::size_t n = text_detail::utf8_length(text, at); n == 0) {
      out += "\xEF\xBF\xBD";
      ++at;
    } else if (n == 2 && c == 0xC2 && static_cast<unsigned char>(text[at + 1]) < 0xA0) {
      // A C1 control (U+0080 to U+009F): CSI, OSC and the like introduce sequences as ESC does.
      at = text_detail::escape_end(text, static_cast<char>(static_cast<unsigned char>(text[at + 1]) - 0x40), at + 2);
    } else {
      out.append(text, at, n);
      at += n;
    }
  }
  return out;
}

}  // namespace gpulab
