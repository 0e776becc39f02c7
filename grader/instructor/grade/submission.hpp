// One student's submission, as the batch grader sees it: a folder or an archive (.zip, .tar.gz)
// unpacked safely, then only the files the lab manifests list, taken into a scratch folder laid
// out like labs/. Anything hostile in an archive (paths that escape, links that point outside,
// special files, bombs) refuses the whole submission with a message that names the entry.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/manifest.hpp"
#include "sha256.hpp"

namespace gpulab::cli {

// The submission cannot be graded at all; the message says which entry and why.
class SubmissionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct UnpackLimits {
  std::uint64_t archive_bytes = 256ull << 20;  // the archive file itself
  std::uint64_t total_bytes = 64ull << 20;     // everything it unpacks to
  std::uint64_t file_bytes = 16ull << 20;      // one file
  std::size_t entries = 10000;
};

// What a submission holds: relative paths ('/'-separated) of its regular files, and the entries that
// cannot be used (a link to outside the folder, a FIFO) with the reason.
struct SubmissionFiles {
  std::filesystem::path root;  // the folder the paths are relative to
  std::vector<std::string> files;
  std::map<std::string, std::string> unusable;
};

// True for the names batch grading accepts as archives.
bool is_archive(const std::filesystem::path& entry);
// The student's name for a submission entry: the folder or archive name without its extension, in
// Unicode NFC; ASCII punctuation but "-_.@+", control and format characters, bytes that are not UTF-8
// and a leading dot are escaped as =XX ("zoë.tar" -> "zoë", "Bob Smith" stays, "a#b" -> "a=23b"):
// two different names (after NFC) never give the same student name, and every name is safe in a path,
// a URL, a CSV cell and a shell word in quotes.
std::string student_name(const std::filesystem::path& entry);

// The entries of a submissions folder, one per student, as (student name, path), by name; names starting
// with a dot are ignored. Throws when `dir` is not a folder. Entries that are the same student
// ("zoë.tar" beside "zoë/") are refused together and the others go on: with `conflicts`, that student's
// first entry is listed and conflicts[name] says why it is refused (naming every entry); without, the
// student is left out with that message on stderr.
std::vector<std::pair<std::string, std::filesystem::path>> submission_entries(
    const std::filesystem::path& dir, std::map<std::string, std::string>* conflicts = nullptr);

// A folder is read in place (symbolic links are followed only inside it); an archive is unpacked into
// `scratch` under the limits, after every entry has been checked.
SubmissionFiles open_submission(const std::filesystem::path& entry, const std::filesystem::path& scratch,
                                const UnpackLimits& limits = {});

struct LabFiles {
  std::vector<std::string> taken;  // the manifest's files found, copied to the lab folder
  std::vector<std::string>
      missing;  // "missing labs/02-transpose/transpose.cu (found Transpose.cu, expected transpose.cu)"
  std::vector<std::string> near_misses;  // those lines of `missing` that name a file found under another name or folder
  bool complete() const { return missing.empty(); }
};

// Copies the lab's files for `backend` from the submission into `lab_dir` (created). Files are looked
// up as labs/<id>/<file>, <id>/<file>, or <file> at the top, under one wrapping folder or none.
LabFiles take_lab_files(const SubmissionFiles& submission, const Manifest& manifest, const std::string& backend,
                        const std::filesystem::path& lab_dir);

// "found Transpose.cu, expected transpose.cu": names in `files` close to `expected` (same name in another
// case or folder, or at most two edits away), best first.
std::vector<std::string> near_misses(const std::vector<std::string>& files, const std::string& expected_path);

}  // namespace gpulab::cli
