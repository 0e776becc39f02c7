// The small text helpers (gpulab/text.hpp).
#include <doctest/doctest.h>

#include "gpulab/text.hpp"

using namespace gpulab;

TEST_CASE("replace_all replaces or removes every occurrence, left to right, and never loops on its own output") {
  CHECK(replace_all("/scratch/x/a.cu and /scratch/x/b.cu", "/scratch/x/") == "a.cu and b.cu");
  CHECK(replace_all("257x3 failed; 257x3 again", "257x3", "hidden case 1") ==
        "hidden case 1 failed; hidden case 1 again");
  CHECK(replace_all("aaa", "a", "aa") == "aaaaaa");
  CHECK(replace_all("text", "", "x") == "text");
}

TEST_CASE("lower_case lowers ASCII letters only, and shell_quote makes one word of anything") {
  CHECK(lower_case("CuBLAS_Sgemm-2") == "cublas_sgemm-2");
  CHECK(shell_quote("it's") == "'it'\\''s'");
}

TEST_CASE("printable removes escape sequences and control characters but keeps newlines, tabs and UTF-8 text") {
  // Colours, a cursor move, a screen clear and a title (OSC, ended by BEL or by ST).
  CHECK(printable("\x1b[1;31merror\x1b[0m: x\x1b[2J\x1b[H") == "error: x");
  CHECK(printable("a\x1b]0;pwned\x07"
                  "b\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\c") == "ablinkc");
  CHECK(printable("\x1b"
                  "c\x1b(Bplain\x1b") == "plain");  // a reset, a character set, an ESC at the end
  // The C1 controls as UTF-8, CSI (U+009B) with its parameters; NUL, BEL, backspace and DEL.
  CHECK(printable("x\xC2\x9B"
                  "31my\xC2\x85z") == "xyz");
  CHECK(printable(std::string("a\0b\x07\x08\x7f"
                              "c",
                              7)) == "abc");
  CHECK(printable("one\r\ntwo\rthree\tfour\n") == "one\ntwo\nthree\tfour\n");
  CHECK(printable("naïve — 41×59 ✓ 😀") == "naïve — 41×59 ✓ 😀");
  // Bytes that are not UTF-8 (a lone C1 byte, a cut sequence, an overlong '/') become U+FFFD.
  CHECK(printable("a\x9b"
                  "b\xE2\x82"
                  "c\xC0\xAF") ==
        "a\xEF\xBF\xBD"
        "b\xEF\xBF\xBD\xEF\xBF\xBD"
        "c\xEF\xBF\xBD\xEF\xBF\xBD");
}
