// The one lexer of C, C++, CUDA and OpenCL source text that the grader's static checks share: the
// barrier check, the scan for forbidden names, the mutation audit and the similarity report all ask
// it where the code is, so a name in a comment or a message never counts as code in one of them and
// as code in another.
#pragma once
#include <cstddef>
#include <string>

namespace gpulab::cli {

// What becomes of the contents of string and character literals (their quotes always stay).
enum class Literals { keep, blank };

// `source` with comments turned into spaces and, with Literals::blank, the contents of string and
// character literals too (raw strings R"d(...)d" included); newlines stay, so offsets and line numbers
// are the source's. A ' between digits (1'000) is a digit separator, not a literal.
std::string blank_comments(std::string source, Literals literals);

// Spaces over [from, to) of `text`, newlines kept.
void blank_range(std::string& text, std::size_t from, std::size_t to);

// Whether `c` may be part of an identifier (letters, digits, _): where a word starts and ends.
bool is_identifier_char(char c);

}  // namespace gpulab::cli
