#include "submission.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <fstream>
#include <set>

#include "files.hpp"
#include "gpulab/text.hpp"

namespace gpulab::cli {

namespace fs = std::filesystem;

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The entry's path as clean components, or an error when it is absolute or climbs out with "..".
std::vector<std::string> safe_components(std::string name, const std::string& archive) {
  std::replace(name.begin(), name.end(), '\\', '/');  // zips made on Windows
  if (name.empty() || name.front() == '/' || (name.size() > 1 && name[1] == ':'))
    throw SubmissionError(
        fmt::format("{}: entry {} has an absolute path; archives must hold relative paths "
                    "(zip the folder from inside it)",
                    archive, name));
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= name.size()) {
    const auto end = std::min(name.find('/', start), name.size());
    const std::string part = name.substr(start, end - start);
    if (part == "..")
      throw SubmissionError(
          fmt::format("{}: entry {} escapes the submission folder (\"..\"): refused, nothing of "
                      "this archive was graded; make the archive again from the course folder",
                      archive, name));
    if (!part.empty() && part != ".") parts.push_back(part);
    start = end + 1;
  }
  return parts;
}

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "/") + p;
  return out;
}

// Where a link at `at` pointing to `target` lands, relative to the top; empty when it leaves the top.
std::string resolve_inside(const std::vector<std::string>& at, const std::string& target) {
  if (target.empty() || target.front() == '/') return {};
  std::vector<std::string> parts(at.begin(), at.end() - 1);
  std::size_t start = 0;
  while (start <= target.size()) {
    const auto end = std::min(target.find('/', start), target.size());
    const std::string part = target.substr(start, end - start);
    if (part == "..") {
      if (parts.empty()) return {};
      parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    start = end + 1;
  }
  return joined(parts);
}

// What archivers and file browsers add beside the files: macOS resource forks and folder settings.
bool is_system_junk(const std::vector<std::string>& parts) {
  for (const auto& p : parts)
    if (p == "__MACOSX" || p == ".DS_Store" || p.rfind("._", 0) == 0 || p == "Thumbs.db") return true;
  return false;
}

struct ArchiveReader {
  archive* a = archive_read_new();
  ~ArchiveReader() { archive_read_free(a); }
};

// One archive unpacked into `scratch`: every entry is checked before it is written, and what it
// unpacks to is counted against the limits as it is written.
class Unpacker {
 public:
  // Refuses an archive over the size limit or in a format it does not read.
  Unpacker(const fs::path& file, const fs::path& scratch, const UnpackLimits& limits)
      : name_(file.filename().string()), scratch_(scratch), limits_(limits) {
    std::error_code ec;
    const auto size = fs::file_size(file, ec);
    if (ec) throw SubmissionError(fmt::format("{}: cannot read the archive ({})", name_, ec.message()));
    if (size > limits.archive_bytes)
      throw SubmissionError(fmt::format("{}: the archive is {} MiB, over the limit of {} MiB", name_, size >> 20,
                                        limits.archive_bytes >> 20));
    archive_read_support_filter_gzip(reader_.a);
    archive_read_support_format_zip(reader_.a);
    archive_read_support_format_tar(reader_.a);
    archive_read_support_format_gnutar(reader_.a);
    if (archive_read_open_filename(reader_.a, file.c_str(), 1 << 16) != ARCHIVE_OK)
      throw SubmissionError(
          fmt::format("{}: not a readable .zip or .tar.gz archive ({})", name_,
                      archive_error_string(reader_.a) ? archive_error_string(reader_.a) : "unknown format"));
  }

  SubmissionFiles unpack() {
    out_.root = scratch_;
    fs::create_directories(scratch_);
    for (archive_entry* entry = nullptr; next_entry(entry);) take_entry(entry);
    copy_links();
    if (out_.files.empty() && out_.unusable.empty())
      throw SubmissionError(
          fmt::format("{}: the archive is empty; it must hold the lab folders (e.g. "
                      "labs/02-transpose/transpose.cu)",
                      name_));
    return std::move(out_);
  }

 private:
  struct Link {
    std::vector<std::string> at;
    std::string target;  // resolved, relative to the top
  };

  // False at the end of the archive; throws when it is damaged or holds too many entries.
  bool next_entry(archive_entry*& entry) {
    const int r = archive_read_next_header(reader_.a, &entry);
    if (r == ARCHIVE_EOF) return false;
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
      throw SubmissionError(fmt::format("{}: the archive is damaged ({})", name_, archive_error_string(reader_.a)));
    if (++entries_ > limits_.entries)
      throw SubmissionError(
          fmt::format("{}: more than {} entries; submit only the course folder", name_, limits_.entries));
    return true;
  }

  void take_entry(archive_entry* entry) {
    const char* raw = archive_entry_pathname(entry);
    const std::string path = raw ? raw : "";
    const auto parts = safe_components(path, name_);
    if (parts.empty() || is_system_junk(parts)) return;
    const auto type = archive_entry_filetype(entry);
    if (archive_entry_hardlink(entry) || type == AE_IFLNK) {
      links_.push_back(link_inside(entry, parts, path));
      return;
    }
    if (type == AE_IFDIR) {
      fs::create_directories(scratch_ / joined(parts));
      return;
    }
    if (type != AE_IFREG)
      throw SubmissionError(
          fmt::format("{}: entry {} is a special file (device, FIFO or socket): refused; submit "
                      "regular files only",
                      name_, path));
    write_file(parts, path);
    out_.files.push_back(joined(parts));
  }

  // A link entry, refused when it points outside the submission.
  Link link_inside(archive_entry* entry, const std::vector<std::string>& parts, const std::string& path) const {
    const char* hardlink = archive_entry_hardlink(entry);
    const std::string target = hardlink ? hardlink : (archive_entry_symlink(entry) ? archive_entry_symlink(entry) : "");
    // A hard link names its target from the top of the archive, a symbolic link from its own folder.
    const std::string inside = hardlink ? joined(safe_components(target, name_)) : resolve_inside(parts, target);
    if (inside.empty())
      throw SubmissionError(
          fmt::format("{}: entry {} is a {} to {}, outside the submission: refused, nothing of "
                      "this archive was graded; submit the files themselves",
                      name_, path, hardlink ? "hard link" : "symbolic link", target));
    return {parts, inside};
  }

  // The current entry's data, written to its place under the scratch folder within the limits.
  void write_file(const std::vector<std::string>& parts, const std::string& path) {
    const fs::path dest = scratch_ / joined(parts);
    fs::create_directories(dest.parent_path());
    const FileDescriptor file(::open(dest.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (!file.valid())
      throw SubmissionError(fmt::format("{}: cannot unpack {} ({})", name_, path, std::strerror(errno)));
    std::uint64_t written = 0;
    for (;;) {
      const la_ssize_t n = archive_read_data(reader_.a, buffer_.data(), buffer_.size());
      if (n == 0) break;
      if (n < 0)
        throw SubmissionError(
            fmt::format("{}: entry {} is damaged ({})", name_, path, archive_error_string(reader_.a)));
      written += static_cast<std::uint64_t>(n);
      total_ += static_cast<std::uint64_t>(n);
      if (written > limits_.file_bytes || total_ > limits_.total_bytes)
        throw SubmissionError(fmt::format(
            "{}: unpacks to more than {} (at entry {}): refused as a possible zip bomb; submit only the lab files",
            name_,
            written > limits_.file_bytes ? fmt::format("{} MiB in one file", limits_.file_bytes >> 20)
                                         : fmt::format("{} MiB in all", limits_.total_bytes >> 20),
            path));
      if (::write(file.get(), buffer_.data(), static_cast<std::size_t>(n)) != n)
        throw SubmissionError(fmt::format("{}: cannot unpack {} (disk full?)", name_, path));
    }
  }

  // Links inside the archive become copies of what they point to.
  void copy_links() {
    const std::set<std::string> present(out_.files.begin(), out_.files.end());
    for (const auto& link : links_) {
      if (!present.count(link.target)) {
        out_.unusable[joined(link.at)] = fmt::format("a link to {}, which is not a file of the archive", link.target);
        continue;
      }
      // A copy counts towards the limits like any file: links must not multiply a small archive.
      total_ += fs::file_size(scratch_ / link.target);
      if (total_ > limits_.total_bytes)
        throw SubmissionError(
            fmt::format("{}: unpacks to more than {} MiB in all, counting its links (at entry {}): "
                        "refused; submit only the lab files",
                        name_, limits_.total_bytes >> 20, joined(link.at)));
      const fs::path dest = scratch_ / joined(link.at);
      fs::create_directories(dest.parent_path());
      fs::copy_file(scratch_ / link.target, dest, fs::copy_options::overwrite_existing);
      out_.files.push_back(joined(link.at));
    }
  }

  std::string name_;  // the archive's file name, for messages
  fs::path scratch_;
  const UnpackLimits& limits_;
  ArchiveReader reader_;
  SubmissionFiles out_;
  std::vector<Link> links_;
  std::uint64_t total_ = 0;  // bytes unpacked so far, copies of links included
  std::size_t entries_ = 0;
  static constexpr std::size_t kChunkBytes = std::size_t{1} << 16;
  std::array<char, kChunkBytes> buffer_;
};

SubmissionFiles unpack_archive(const fs::path& file, const fs::path& scratch, const UnpackLimits& limits) {
  return Unpacker(file, scratch, limits).unpack();
}

SubmissionFiles read_folder(const fs::path& folder, const UnpackLimits& limits) {
  SubmissionFiles out;
  out.root = folder;
  const fs::path top = fs::canonical(folder);
  std::error_code ec;
  std::size_t entries = 0;
  for (auto it = fs::recursive_directory_iterator(folder, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const std::string name = it->path().filename().string();
    if (name == "__MACOSX" || name == ".DS_Store" || name.rfind("._", 0) == 0) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_directory(ec) && !it->is_symlink(ec) && (name == ".git" || name == "build")) {
      it.disable_recursion_pending();  // a clone's history and build outputs are never graded
      // Of a build folder, only the student's make check history is read (it informs, never grades).
      const fs::path history = it->path() / "history.jsonl";
      if (name == "build" && fs::is_regular_file(fs::symlink_status(history, ec)))
        out.files.push_back(history.lexically_relative(folder).generic_string());
      continue;
    }
    if (++entries > limits.entries * 10) break;
    const std::string rel = it->path().lexically_relative(folder).generic_string();  // the link itself, not its target
    const auto status = it->symlink_status(ec);
    if (fs::is_symlink(status)) {
      const fs::path target = fs::weakly_canonical(it->path(), ec);
      const auto rel_target = target.lexically_relative(top);
      if (ec || rel_target.empty() || *rel_target.begin() == "..")
        out.unusable[rel] = fmt::format("a symbolic link to {}, outside the submission; submit the file itself",
                                        fs::read_symlink(it->path(), ec).string());
      else if (fs::is_regular_file(target))
        out.files.push_back(rel);
      continue;
    }
    if (fs::is_regular_file(status))
      out.files.push_back(rel);
    else if (!fs::is_directory(status))
      out.unusable[rel] = "a special file (device, FIFO or socket), not a regular file";
  }
  return out;
}

// Drops one wrapping folder as long as every path starts with the same one that is not a lab's.
std::string common_wrapper(const SubmissionFiles& s, const std::set<std::string>& lab_folders) {
  std::string prefix;
  for (;;) {
    std::string first;
    bool same = true, any = false;
    auto check = [&](const std::string& path) {
      if (path.compare(0, prefix.size(), prefix) != 0) return;
      const std::string rest = path.substr(prefix.size());
      const auto slash = rest.find('/');
      if (slash == std::string::npos) {
        same = false;
        return;
      }
      const std::string head = rest.substr(0, slash);
      if (!any)
        first = head, any = true;
      else if (head != first)
        same = false;
    };
    for (const auto& f : s.files) check(f);
    for (const auto& [f, why] : s.unusable) check(f);
    if (!any || !same || first == "labs" || lab_folders.count(first)) return prefix;
    prefix += first + "/";
  }
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string file_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The name in Unicode's composed form (NFC); invalid UTF-8 is left as it is (escaped_name escapes it).
std::string nfc(const std::string& name) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* normalizer = icu::Normalizer2::getNFCInstance(status);
  int32_t offset = 0;
  for (UChar32 c = 0; offset < static_cast<int32_t>(name.size());) {
    U8_NEXT(name.data(), offset, static_cast<int32_t>(name.size()), c);
    if (c < 0) return name;
  }
  if (U_FAILURE(status)) return name;
  std::string out;
  normalizer->normalize(icu::UnicodeString::fromUTF8(name), status).toUTF8String(out);
  return U_FAILURE(status) ? name : out;
}

// A character that must not stand as it is in a folder name, URL, shell word, CSV cell or log line:
// ASCII punctuation but "-_.@+" (path separators, '=' the escape itself, '#', '?', quotes, '<'...),
// and control, format (bidirectional overrides), separator, private and unassigned characters.
bool needs_escape(UChar32 c) {
  if (c < 0x80) return !(std::isalnum(c) || c == ' ' || c == '-' || c == '_' || c == '.' || c == '@' || c == '+');
  const auto type = u_charType(c);
  return type == U_CONTROL_CHAR || type == U_FORMAT_CHAR || type == U_LINE_SEPARATOR || type == U_PARAGRAPH_SEPARATOR ||
         type == U_UNASSIGNED || type == U_SURROGATE || type == U_PRIVATE_USE_CHAR;
}

// Escapes (=XX per byte, as quoted-printable does) what needs_escape names, bytes that are not UTF-8,
// and a leading dot (a hidden file); every other character, spaces and accents included, stays.
std::string escaped_name(const std::string& name) {
  std::string out;
  int32_t offset = 0;
  const auto size = static_cast<int32_t>(name.size());
  while (offset < size) {
    const int32_t start = offset;
    UChar32 c = 0;
    U8_NEXT(name.data(), offset, size, c);
    const bool escape = c < 0 || needs_escape(c) || (start == 0 && c == '.');
    for (int32_t i = start; i < offset; ++i)
      out += escape ? fmt::format("={:02X}", static_cast<unsigned char>(name[i])) : std::string(1, name[i]);
  }
  return out;
}

}  // namespace

bool is_archive(const fs::path& entry) {
  const std::string name = lower_case(entry.filename().string());
  return ends_with(name, ".zip") || ends_with(name, ".tar.gz") || ends_with(name, ".tgz") || ends_with(name, ".tar");
}

std::string student_name(const fs::path& entry) {
  std::string name = entry.filename().string();
  for (const char* ext : {".tar.gz", ".tgz", ".zip", ".tar"})
    if (ends_with(lower_case(name), ext)) {
      name.resize(name.size() - std::strlen(ext));
      break;
    }
  // Names are the keys of a class, folder names and CSV cells: Unicode stays as the student wrote it
  // (in NFC, so a name typed on Linux and the same name unpacked on macOS are one key); anything that is
  // not a plain character of a file name is escaped reversibly, so two different names never collide.
  name = escaped_name(nfc(name));
  if (name.empty()) name = "_";
  return name;
}

std::vector<std::pair<std::string, fs::path>> submission_entries(const fs::path& dir,
                                                                 std::map<std::string, std::string>* conflicts) {
  if (!fs::is_directory(dir))
    throw std::invalid_argument(
        fmt::format("SUBMISSIONS={} is not a folder: it must hold one folder or archive per student", dir.string()));
  std::map<std::string, std::vector<fs::path>> by_name;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string file = e.path().filename().string();
    if (file.empty() || file.front() == '.') continue;
    by_name[student_name(e.path())].push_back(e.path());
  }
  std::vector<std::pair<std::string, fs::path>> entries;
  for (auto& [name, paths] : by_name) {
    std::sort(paths.begin(), paths.end());
    if (paths.size() > 1) {
      std::vector<std::string> files;
      for (const auto& p : paths) files.push_back(p.filename().string());
      const std::string why = fmt::format(
          "{} are {} the student {}: refused, none of them was graded; keep one of them (or rename one) and grade "
          "again",
          fmt::join(files, " and "), files.size() == 2 ? "both" : "all", name);
      if (!conflicts) {
        fmt::print(stderr, "gpulab: {}\n", why);
        continue;
      }
      (*conflicts)[name] = why;
    }
    entries.emplace_back(name, paths.front());
  }
  return entries;
}

SubmissionFiles open_submission(const fs::path& entry, const fs::path& scratch, const UnpackLimits& limits) {
  const auto status = fs::symlink_status(entry);
  if (fs::is_directory(status)) return read_folder(entry, limits);
  if (fs::is_regular_file(status) && is_archive(entry)) return unpack_archive(entry, scratch, limits);
  if (fs::is_symlink(status))
    throw SubmissionError(
        fmt::format("{}: a symbolic link, not a folder or an archive: refused", entry.filename().string()));
  throw SubmissionError(
      fmt::format("{}: not a folder, .zip or .tar.gz archive; each entry of the submissions folder is "
                  "one student",
                  entry.filename().string()));
}

std::vector<std::string> near_misses(const std::vector<std::string>& files, const std::string& expected_path) {
  const std::string expected = file_name(expected_path);
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const auto& f : files) {
    if (f == expected_path) continue;
    const std::string name = file_name(f);
    std::size_t score;
    if (name == expected)
      score = 0;  // right name, wrong folder
    else if (lower_case(name) == lower_case(expected))
      score = 1;
    else if (const auto d = edit_distance(lower_case(name), lower_case(expected)); d <= 2 && expected.size() > 3)
      score = 1 + d;
    else
      continue;
    scored.push_back({score, f});
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (std::size_t i = 0; i < scored.size() && i < 3; ++i) out.push_back(scored[i].second);
  return out;
}

LabFiles take_lab_files(const SubmissionFiles& s, const Manifest& m, const std::string& backend,
                        const fs::path& lab_dir) {
  LabFiles out;
  const auto files = m.files.find(backend);
  if (files == m.files.end()) return out;
  const std::string prefix = common_wrapper(s, {m.id});
  const std::set<std::string> present(s.files.begin(), s.files.end());
  fs::create_directories(lab_dir);
  for (const auto& f : files->second) {
    const std::vector<std::string> candidates{prefix + "labs/" + m.id + "/" + f, prefix + m.id + "/" + f, prefix + f};
    std::string found;
    for (const auto& c : candidates) {
      if (auto u = s.unusable.find(c); u != s.unusable.end()) {
        out.missing.push_back(fmt::format("{} is {}", c, u->second));
        found = "-";
        break;
      }
      if (present.count(c)) {
        found = c;
        break;
      }
    }
    if (found == "-") continue;
    if (found.empty()) {
      const std::string expected = "labs/" + m.id + "/" + f;
      std::vector<std::string> relative;
      for (const auto& p : s.files)
        relative.push_back(p.compare(0, prefix.size(), prefix) == 0 ? p.substr(prefix.size()) : p);
      const auto close = near_misses(relative, expected);
      if (close.empty()) {
        out.missing.push_back(fmt::format("missing {}", expected));
        continue;
      }
      if (file_name(close.front()) == f) {
        out.missing.push_back(
            fmt::format("missing {} (found it at {}: it must be in labs/{}/)", expected, close.front(), m.id));
      } else {
        // In the right folder the name alone shows the slip: "found Transpose.cu, expected transpose.cu".
        const bool same_folder = fs::path(close.front()).parent_path() == fs::path(expected).parent_path();
        out.missing.push_back(fmt::format("missing {} (found {}, expected {})", expected,
                                          same_folder ? file_name(close.front()) : close.front(), f));
      }
      out.near_misses.push_back(out.missing.back());
      continue;
    }
    fs::copy_file(fs::canonical(s.root / found), lab_dir / f, fs::copy_options::overwrite_existing);
    ::chmod((lab_dir / f).c_str(), 0644);
    out.taken.push_back(f);
  }
  return out;
}

}  // namespace gpulab::cli
