// The one lexer the static checks share (source_text.hpp): where the code is, for the barrier check,
// the forbidden-name scan, the mutation audit and the similarity report alike.
#include <doctest/doctest.h>

#include <string>

#include "source_text.hpp"

using namespace gpulab::cli;

TEST_CASE("comments become spaces, newlines and offsets stay, and literals are kept or emptied as asked") {
  const std::string source = "a // b\nc /* d\ne */ f \"// g\" '/'\n";
  CHECK(blank_comments(source, Literals::keep) == "a     \nc     \n     f \"// g\" '/'\n");
  CHECK(blank_comments(source, Literals::blank) == "a     \nc     \n     f \"    \" ' '\n");
  CHECK(blank_comments(source, Literals::blank).size() == source.size());
}

TEST_CASE("a comment marker inside a literal is not a comment, and a quote in a comment opens no literal") {
  CHECK(blank_comments("s = \"/* no */\"; x", Literals::keep) == "s = \"/* no */\"; x");
  CHECK(blank_comments("// it's\n__syncthreads();", Literals::blank) == "       \n__syncthreads();");
  CHECK(blank_comments("\"a\\\"b // c\" d", Literals::blank) == "\"         \" d");
}

TEST_CASE("a raw string ends only at its own delimiter, across lines") {
  const std::string source = "k = R\"cl(__kernel void f() { // x\n barrier(1); })cl\"; y";
  CHECK(blank_comments(source, Literals::keep) == source);
  const std::string blanked = blank_comments(source, Literals::blank);
  CHECK(blanked.find("barrier") == std::string::npos);
  CHECK(blanked.find('\n') == source.find('\n'));
  CHECK(blanked.substr(blanked.size() - 4) == "\"; y");
}

TEST_CASE("a quote between digits separates them, and one after an identifier opens a character") {
  CHECK(blank_comments("n = 1'000'000; // big", Literals::blank) == "n = 1'000'000;       ");
  CHECK(blank_comments("m = 0xFF'FF;", Literals::blank) == "m = 0xFF'FF;");
  CHECK(blank_comments("c = u8'x'; d", Literals::blank) == "c = u8' '; d");
}

TEST_CASE("an unterminated comment or literal runs to the end of the text or line, never beyond") {
  CHECK(blank_comments("x /* open", Literals::keep) == "x        ");
  CHECK(blank_comments("\"open\nnext", Literals::blank) == "\"    \nnext");
}
