// CSV as the grader reads it (Nsight Compute's reports, an instructor's due dates) and writes it (the
// gradebook): RFC 4180 quoting, fields in double quotes where needed and "" for a quote inside.
#pragma once
#include <string>
#include <vector>

namespace gpulab::cli {

// The fields of one line (no line breaks inside fields; a trailing \r is dropped).
std::vector<std::string> csv_fields(const std::string& line);

// One field for a spreadsheet: quoted when it holds a comma, a quote or a line break, and with a
// leading ' when it would start a formula (= + - @) without being a number.
std::string csv_cell(const std::string& value);

}  // namespace gpulab::cli
