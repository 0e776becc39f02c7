#include "release.hpp"

#include <sys/wait.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <future>
#include <map>
#include <regex>
#include <set>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "files.hpp"
#include "gpulab/manifest.hpp"
#include "gpulab/text.hpp"
#include "kernel_embedding.hpp"

namespace fs = std::filesystem;

namespace gpulab::cli {
namespace {

// Instructor material outside those folders: the instructor guide (its threat model lists what
// grading does not stop) and the docs' CUDA measurement tools, whose chunked multi-stream pipeline
// is the answer to the streams lab's overlap task, with the scripts that only they need. The
// chapters show what these tools measured (docs/measured/), not their code.
const std::set<std::string> kInstructorFiles = {
    "docs/instructors.md",
    "scripts/docs/streams_timeline.cu",
    "scripts/docs/streams_timeline.py",
    "scripts/docs/streams-timeline.sh",
    "scripts/docs/host_device.cu",
    "scripts/docs/host-device.sh",
};

// What students never receive: the reference solutions, the answers to the docs' questions, the
// fixtures of the tests that are near-solutions (weaker kernels, hostile submissions, a lab's
// planted submissions), and the instructor material above.
bool left_out(const fs::path& relative) {
  if (kInstructorFiles.count(relative.generic_string()) > 0) return true;
  const std::vector<fs::path> parts(relative.begin(), relative.end());
  if (parts.empty()) return false;
  if (parts[0] == "solutions") return true;
  if (parts.size() < 2) return false;
  if ((parts[0] == "tests" && parts[1] == "fixtures") || (parts[0] == "docs" && parts[1] == "answers")) return true;
  // labs/<lab>/grader/tests/planted/...
  return parts.size() > 5 && parts[0] == "labs" && parts[2] == "grader" && parts[3] == "tests" && parts[4] == "planted";
}

// A file of a lab's own grader folder, labs/<lab>/grader/<file>, whose name ends with `ending`.
bool is_lab_grader_file(const fs::path& relative, std::string_view ending) {
  const std::vector<fs::path> parts(relative.begin(), relative.end());
  return parts.size() == 4 && parts[0] == "labs" && parts[2] == "grader" && parts[3].string().ends_with(ending);
}

// A harness CUDA kernel file of a lab, labs/<lab>/grader/<name>_cuda.cu: shipped compiled, never as source.
bool is_harness_cuda_kernel(const fs::path& relative) { return is_lab_grader_file(relative, "_cuda.cu"); }

// A harness OpenCL kernel file of a lab, labs/<lab>/grader/<kernel>.cl: shipped encoded, never as source.
bool is_harness_opencl_kernel(const fs::path& relative) { return is_lab_grader_file(relative, ".cl"); }

// Runs a git command in `repo` and returns what it printed; throws, naming the command and the
// fix, when git cannot start or fails.
std::string git_output(const fs::path& repo, const std::string& arguments) {
  const auto [status, output] = run_command("git -C " + shell_quote(repo.string()) + " " + arguments + " 2>&1");
  if (status == -1) throw std::runtime_error("cannot start git to read the repository: install git");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(
        fmt::format("`git {}` failed in {} ({}): the release is made of the last commit, so "
                    "git must work there (commit the course first, or fix the checkout)",
                    arguments, repo.string(), output.substr(0, 300)));
  return output;
}

// The last commit of a git checkout, unpacked into `into`; the tracked files whose working-tree
// version differs from it go into the summary, which says they were not released.
void unpack_last_commit(const fs::path& repo, const fs::path& into, ReleaseSummary& summary) {
  summary.commit = git_output(repo, "rev-parse --short HEAD");
  summary.commit.erase(summary.commit.find_last_not_of(" \n") + 1);
  git_output(repo, "archive --format=tar HEAD | tar -x -C " + shell_quote(into.string()));
  const std::string changed = git_output(repo, "status --porcelain --untracked-files=no");
  std::size_t begin = 0;
  for (std::size_t end; (end = changed.find('\n', begin)) != std::string::npos; begin = end + 1)
    if (end - begin > 3) summary.uncommitted.push_back(changed.substr(begin + 3, end - begin - 3));
}

// The files under `root` (paths relative to it). A plain folder skips build/ and dot folders; a
// commit's files are taken as they are.
std::vector<fs::path> files_under(const fs::path& root, bool skip_build_and_dot_folders) {
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const std::string name = it->path().filename().string();
    if (skip_build_and_dot_folders && it->is_directory() && !it->is_symlink() &&
        (name.starts_with('.') || (it.depth() == 0 && name == "build"))) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() || it->is_symlink()) files.push_back(fs::relative(it->path(), root));
  }
  std::sort(files.begin(), files.end());
  return files;
}

void require_empty_or_absent(const fs::path& out) {
  if (!fs::exists(fs::symlink_status(out))) return;
  if (!fs::is_directory(out))
    throw std::runtime_error(
        fmt::format("{} exists and is not a folder: give the student release a new or empty folder", out.string()));
  if (!fs::is_empty(out))
    throw std::runtime_error(
        fmt::format("{} is not empty: the student release goes into a new or empty folder, so "
                    "that nothing else ends up in the students' repository; choose another "
                    "folder or empty this one",
                    out.string()));
}

// Writes the released lab.toml and proves it: it loads, has no hidden case, and has exactly the
// instructor's visible cases, in order. Returns how many cases were removed.
int release_manifest(const fs::path& source, const fs::path& target, const fs::path& relative) {
  const Manifest instructor = load_manifest(source);
  std::vector<bool> hidden;
  std::vector<std::string> visible;
  for (const auto& c : instructor.cases) {
    hidden.push_back(c.hidden);
    if (!c.hidden) visible.push_back(c.name);
  }
  const std::string text = read_text_or_throw(source);
  write_text_atomically(instructor.has_hidden_cases() ? remove_hidden_case_blocks(text, hidden) : text, target);

  const Manifest released = load_manifest(target);
  std::vector<std::string> released_names;
  for (const auto& c : released.cases) released_names.push_back(c.name);
  if (released.has_hidden_cases() || released_names != visible)
    throw std::runtime_error(fmt::format(
        "{}: the released manifest does not hold exactly the visible cases ({}); write each case as a [[cases]] "
        "block of its own so its hidden cases can be removed",
        relative.string(), fmt::join(released_names, ", ")));
  return static_cast<int>(instructor.cases.size() - visible.size());
}

const std::regex kTableHeader(R"(^\s*\[\[?\s*[A-Za-z0-9_.\-"' ]+\s*\]\]?\s*(#.*)?$)");
const std::regex kCasesHeader(R"(^\s*\[\[\s*cases\s*\]\]\s*(#.*)?$)");
const std::regex kCaseSubtable(R"(^\s*\[\[?\s*cases\s*\.)");

bool is_blank(const std::string& line) { return line.find_first_not_of(" \t\r\n") == std::string::npos; }
bool is_comment(const std::string& line) {
  const auto first = line.find_first_not_of(" \t");
  return first != std::string::npos && line[first] == '#';
}

// ---------------------------------------------------------------- the docs site of the release
// Pages the release leaves out (the instructor guide, the answers) must not break its strict
// build: the nav forgets them, and a link to one keeps its text without the link.

// The Markdown pages the release leaves out (docs/instructors.md), as paths relative to the repository.
std::set<std::string> left_out_pages(const std::vector<fs::path>& files) {
  std::set<std::string> pages;
  for (const auto& f : files)
    if (left_out(f) && f.extension() == ".md") pages.insert(f.generic_string());
  return pages;
}

// mkdocs.yml without the nav entries ("  - Instructor guide: instructors.md") of left-out pages.
std::string without_nav_entries(const std::string& config, const std::set<std::string>& pages) {
  static const std::regex nav_entry(R"(^\s*-\s*(?:[^:#]+:\s*)?["']?([^"'\s#]+\.md)["']?\s*(#.*)?$)");
  std::string out;
  for (const auto& line : split_lines(config)) {
    std::smatch m;
    if (std::regex_match(line, m, nav_entry) && pages.count("docs/" + m[1].str()) > 0) continue;
    out += line + "\n";
  }
  if (!config.empty() && config.back() != '\n' && !out.empty()) out.pop_back();
  return out;
}

// A Markdown file (`page`, relative to the repository: the README, a page of docs/) with each link
// to a left-out page replaced by the link's text.
std::string without_links_to(const std::string& markdown, const fs::path& page, const std::set<std::string>& pages) {
  static const std::regex link(R"(\[([^\]\n]*)\]\(([^)\s#]+\.md)(#[^)\s]*)?\))");
  std::string out;
  auto last = markdown.cbegin();
  for (auto it = std::sregex_iterator(markdown.begin(), markdown.end(), link); it != std::sregex_iterator(); ++it) {
    const std::string target = (page.parent_path() / (*it)[2].str()).lexically_normal().generic_string();
    if (pages.count(target) == 0) continue;
    out.append(last, (*it)[0].first);
    out += (*it)[1].str();
    last = (*it)[0].second;
  }
  out.append(last, markdown.cend());
  return out;
}

// What a docs listing (`--8<-- "path:section"`, scripts/docs/snippets_hook.py) names.
struct Listing {
  std::string path, section, before;
};

Listing parse_listing(const std::string& spec) {
  if (const auto at = spec.find(":before="); at != std::string::npos)
    return {spec.substr(0, at), "", spec.substr(at + 8)};
  const auto colon = spec.rfind(':');
  if (colon != std::string::npos && colon > 0 && colon + 1 < spec.size() && spec.find('/', colon) == std::string::npos)
    return {spec.substr(0, colon), spec.substr(colon + 1), ""};
  return {spec, "", ""};
}

// Why a listing does not resolve in the release at `out` (empty when it does), as the hook reads it.
std::string listing_problem(const fs::path& out, const Listing& listing) {
  static const std::regex marker(R"(-{2,}8<-{2,}[ \t]*\[[ \t]*(start|end)[ \t]*:[ \t]*([A-Za-z0-9_.-]+)[ \t]*\])");
  const fs::path file = out / listing.path;
  if (!fs::is_regular_file(file)) return "the release has no such file";
  bool start = false, end = false;
  for (const auto& line : split_lines(read_text_or_throw(file))) {
    if (!listing.before.empty() && line.find_first_not_of(" \t") != std::string::npos &&
        line.compare(line.find_first_not_of(" \t"), listing.before.size(), listing.before) == 0)
      return "";
    std::smatch m;
    if (!listing.section.empty() && std::regex_search(line, m, marker) && m[2].str() == listing.section)
      (m[1].str() == "start" ? start : end) = true;
  }
  if (!listing.before.empty()) return fmt::format("no line of the released file starts with '{}'", listing.before);
  if (!listing.section.empty() && !(start && end))
    return fmt::format("the released file has no section '{}' with its start and end", listing.section);
  return "";
}

// Every listing of every released page resolves in the release, so that its `make docs` builds:
// the release removes hidden cases and leaves out files, and a page may include either. Listings of
// solutions/ are fine: the student edition shows a note in their place.
void require_docs_listings_resolve(const fs::path& out) {
  static const std::regex include(R"re(^[ \t]*-{2,}8<-{2,}[ \t]+"([^"]+)"[ \t]*$)re");
  if (!fs::is_directory(out / "docs")) return;
  for (const auto& entry : fs::recursive_directory_iterator(out / "docs")) {
    if (!entry.is_regular_file() || entry.path().extension() != ".md") continue;
    const auto lines = split_lines(read_text_or_throw(entry.path()));
    for (std::size_t i = 0; i < lines.size(); ++i) {
      std::smatch m;
      if (!std::regex_match(lines[i], m, include)) continue;
      const Listing listing = parse_listing(m[1].str());
      if (fs::path(listing.path).lexically_normal().begin()->string() == "solutions") continue;
      if (const std::string problem = listing_problem(out, listing); !problem.empty())
        throw std::runtime_error(
            fmt::format("{}:{}: the listing \"{}\" does not resolve in the student release ({}), so `make docs` would "
                        "stop there; the release leaves out solutions/, docs/answers/, tests/fixtures/, the hidden "
                        "cases and {}: include a part that students receive (a named section above the hidden cases), "
                        "or leave the page out",
                        fs::relative(entry.path(), out).generic_string(), i + 1, m[1].str(), problem,
                        fmt::join(kInstructorFiles, ", ")));
    }
  }
}

// Copies `files` (relative to `root`) into `out`: all but what left_out() names, each lab.toml
// without its hidden cases. On an error nothing of the release is left in `out`.
void write_release_files(const fs::path& root, const std::vector<fs::path>& files, const fs::path& out,
                         ReleaseSummary& summary) {
  fs::create_directories(out);
  const std::set<std::string> pages = left_out_pages(files);
  for (const auto& relative : files) {
    if (left_out(relative)) {
      ++summary.files_left_out;
      continue;
    }
    if (is_harness_cuda_kernel(relative)) continue;    // ship_cuda_kernels() compiles it
    if (is_harness_opencl_kernel(relative)) continue;  // ship_opencl_kernels() encodes it
    const fs::path source = root / relative;
    const fs::path target = out / relative;
    const auto status = fs::symlink_status(source);
    fs::create_directories(target.parent_path());
    if (fs::is_symlink(status)) {
      fs::copy_symlink(source, target);
    } else if (relative.filename() == "lab.toml") {
      const int removed = release_manifest(source, target, relative);
      summary.hidden_cases_removed += removed;
      if (removed > 0)
        summary.manifests_changed.push_back(
            fmt::format("{}: {} hidden case{} removed", relative.string(), removed, removed == 1 ? "" : "s"));
    } else if (relative == "mkdocs.yml") {
      write_text_atomically(without_nav_entries(read_text_or_throw(source), pages), target);
    } else if (relative.extension() == ".md") {
      write_text_atomically(without_links_to(read_text_or_throw(source), relative, pages), target);
    } else {
      fs::copy_file(source, target);  // with its permissions: scripts stay executable
    }
    ++summary.files_written;
  }
  require_docs_listings_resolve(out);
}

// nvcc's release ("13.0"), as `nvcc --version` prints it.
std::string nvcc_version(const std::string& nvcc) {
  const auto [status, output] = run_command(shell_quote(nvcc) + " --version 2>&1");
  static const std::regex release(R"(release ([0-9]+\.[0-9]+))");
  std::smatch m;
  if (status != 0 || !std::regex_search(output, m, release))
    throw std::runtime_error(fmt::format(
        "cannot read the version of {} ({}): the release compiles the harness's CUDA kernels with it; repair the "
        "CUDA toolkit, or configure the course's build without it (-DGPULAB_WITH_CUDA=OFF) for an OpenCL-only release",
        nvcc, output.substr(0, 200)));
  return m[1].str();
}

// nvcc's -gencode options: SASS for each architecture, and the PTX of the oldest and the newest,
// which a driver compiles for a GPU the list does not name.
std::vector<std::string> gencode_options(std::vector<std::string> archs) {
  static const std::regex sm(R"(sm_([0-9]+))");
  std::vector<int> numbers;
  for (const auto& a : archs) {
    std::smatch m;
    if (!std::regex_match(a, m, sm))
      throw std::runtime_error(fmt::format("'{}' is not a CUDA architecture: write it as nvcc does, like sm_90", a));
    numbers.push_back(std::stoi(m[1].str()));
  }
  if (numbers.empty()) throw std::runtime_error("no CUDA architecture to compile the harness's kernels for: name one");
  std::sort(numbers.begin(), numbers.end());
  numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
  std::vector<std::string> options;
  for (const int n : numbers) options.push_back(fmt::format("-gencode=arch=compute_{0},code=sm_{0}", n));
  options.push_back(fmt::format("-gencode=arch=compute_{0},code=compute_{0}", numbers.front()));
  if (numbers.back() != numbers.front())
    options.push_back(fmt::format("-gencode=arch=compute_{0},code=compute_{0}", numbers.back()));
  return options;
}

// The harness's CUDA kernels (labs/<lab>/grader/*_cuda.cu) as objects next to where their source
// was, compiled as the course's build compiles them (grader/CMakeLists.txt), several at once; and
// grader/prebuilt_cuda.cmake, which tells the students' build what they are. Without nvcc
// the kernels are left out and that file turns the students' CUDA backend off.
void ship_cuda_kernels(const fs::path& root, const std::vector<fs::path>& files, const fs::path& out,
                       const CudaKernels& cuda, ReleaseSummary& summary) {
  std::vector<fs::path> kernels;
  std::copy_if(files.begin(), files.end(), std::back_inserter(kernels),
               [](const fs::path& f) { return !left_out(f) && is_harness_cuda_kernel(f); });
  if (kernels.empty()) return;
  const fs::path config = out / "grader/prebuilt_cuda.cmake";
  const std::string header =
      "# Written by `gpulab release`: the harness's CUDA kernels (its calibrations and staff kernels, the designs of\n"
      "# graded tasks) are not in the students' repository as source (CMakeLists.txt reads this file).\n";
  if (cuda.nvcc.empty()) {
    summary.cuda_sources_left_out = static_cast<int>(kernels.size());
    write_text_atomically(header + "set(GPULAB_RELEASE_WITHOUT_CUDA_KERNELS ON)\n", config);
    return;
  }
  summary.nvcc_version = nvcc_version(cuda.nvcc);
  summary.cuda_archs = cuda.archs;
  std::string common = shell_quote(cuda.nvcc);
  if (!cuda.host_compiler.empty()) common += " -ccbin " + shell_quote(cuda.host_compiler);
  common += " -I" + shell_quote((root / "common/include").string()) + " -O3 -DNDEBUG -Xcompiler=-fPIC -std=c++17 " +
            fmt::format("{}", fmt::join(gencode_options(cuda.archs), " "));
  const std::size_t at_once = std::max(1u, std::thread::hardware_concurrency());
  for (std::size_t first = 0; first < kernels.size(); first += at_once) {
    std::vector<std::pair<fs::path, std::future<CommandOutput>>> running;
    for (std::size_t i = first; i < std::min(kernels.size(), first + at_once); ++i) {
      const fs::path object = fs::path(kernels[i]).replace_extension(".o");
      const std::string command =
          fmt::format("{} -x cu -c {} -o {} 2>&1", common, shell_quote((root / kernels[i]).string()),
                      shell_quote((out / object).string()));
      running.emplace_back(object, std::async(std::launch::async, run_command, command));
    }
    for (auto& [object, result] : running) {
      const CommandOutput done = result.get();
      if (done.status != 0)
        throw std::runtime_error(fmt::format("nvcc could not compile the harness's {} for the release: {}",
                                             fs::path(object).replace_extension(".cu").generic_string(),
                                             done.output.substr(0, 2000)));
      summary.cuda_objects.push_back(object.generic_string());
    }
  }
  write_text_atomically(
      header + fmt::format("set(GPULAB_PREBUILT_CUDA_VERSION \"{}\")\nset(GPULAB_PREBUILT_CUDA_ARCHS \"{}\")\n",
                           summary.nvcc_version, fmt::join(cuda.archs, ";")),
      config);
}

// The harness's OpenCL kernels (labs/<lab>/grader/*.cl) as the build embeds them: each lab's
// opencl_kernels.hpp and .cpp, encoded (grader/contract/kernel_embedding.hpp), in its grader/ folder,
// where the students' build finds them when the .cl files are not there.
void ship_opencl_kernels(const fs::path& root, const std::vector<fs::path>& files, const fs::path& out,
                         ReleaseSummary& summary) {
  std::map<fs::path, std::vector<OpenClKernelFile>> by_folder;
  for (const auto& f : files)
    if (!left_out(f) && is_harness_opencl_kernel(f))
      by_folder[f.parent_path()].push_back({opencl_kernel_name(f.filename().string()), read_text_or_throw(root / f)});
  for (auto& [folder, kernels] : by_folder) {
    const std::string lab_folder = folder.parent_path().filename().string();
    const std::string lab = lab_folder.substr(lab_folder.find('-') + 1);  // labs/NN-<lab>/grader
    std::sort(kernels.begin(), kernels.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    const EmbeddedOpenClKernels embedded = embed_opencl_kernels(lab, kernels);
    write_text_atomically(embedded.header, out / folder / "opencl_kernels.hpp");
    write_text_atomically(embedded.source, out / folder / "opencl_kernels.cpp");
    summary.opencl_kernels += static_cast<int>(kernels.size());
    summary.opencl_files.push_back((folder / "opencl_kernels.cpp").generic_string());
  }
}

}  // namespace

std::string remove_hidden_case_blocks(const std::string& toml_text, const std::vector<bool>& hidden) {
  std::vector<std::string> lines;  // each with its '\n', but perhaps the last
  for (std::size_t begin = 0; begin < toml_text.size();) {
    const auto end = toml_text.find('\n', begin);
    const auto next = end == std::string::npos ? toml_text.size() : end + 1;
    lines.push_back(toml_text.substr(begin, next - begin));
    begin = next;
  }
  auto header_at = [&](std::size_t i) {
    const std::string bare = lines[i].substr(0, lines[i].find_last_not_of("\r\n") + 1);
    return std::regex_match(bare, kTableHeader) && !std::regex_search(bare, kCaseSubtable);
  };

  std::vector<std::size_t> case_headers;
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (std::regex_match(lines[i].substr(0, lines[i].find_last_not_of("\r\n") + 1), kCasesHeader))
      case_headers.push_back(i);
  if (case_headers.size() != hidden.size())
    throw std::runtime_error(
        fmt::format("found {} [[cases]] headers for {} cases: write each case as a [[cases]] "
                    "block of its own (not an inline array)",
                    case_headers.size(), hidden.size()));

  std::vector<bool> removed(lines.size(), false);
  for (std::size_t b = 0; b < case_headers.size(); ++b) {
    if (!hidden[b]) continue;
    std::size_t first = case_headers[b];
    while (first > 0 && is_comment(lines[first - 1])) --first;  // its own comment goes with it
    std::size_t next = case_headers[b] + 1;
    while (next < lines.size() && !header_at(next)) ++next;
    while (next > case_headers[b] + 1 && (is_blank(lines[next - 1]) || is_comment(lines[next - 1])))
      --next;  // trailing blank lines and comments belong to what follows
    std::fill(removed.begin() + static_cast<std::ptrdiff_t>(first), removed.begin() + static_cast<std::ptrdiff_t>(next),
              true);
  }

  // Where text was cut out, keep one blank line between the neighbours, as the file had.
  std::vector<std::string> kept;
  bool after_cut = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (removed[i]) {
      after_cut = true;
      continue;
    }
    if (after_cut && is_blank(lines[i]) && (kept.empty() || is_blank(kept.back()))) continue;
    after_cut = false;
    kept.push_back(lines[i]);
  }
  if (after_cut)
    while (!kept.empty() && is_blank(kept.back())) kept.pop_back();
  std::string out;
  for (const auto& l : kept) out += l;
  return out;
}

namespace {

// tests/skeletons.tar: labs/ as released. The students' `make test` reads the skeletons from it, not
// from labs/, which they edit (tests/support/export_skeletons.cmake).
void archive_skeletons(const fs::path& out) {
  fs::create_directories(out / "tests");
  const auto [status, output] =
      run_command(fmt::format("tar -cf {} -C {} labs 2>&1", shell_quote((out / "tests" / "skeletons.tar").string()),
                              shell_quote(out.string())));
  if (status != 0)
    throw std::runtime_error(
        fmt::format("could not archive the released skeletons into tests/skeletons.tar: {}", output));
}

}  // namespace

std::vector<std::string> CudaKernels::default_cuda_archs() {
  return {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"};
}

ReleaseSummary write_student_release(const fs::path& repo_in, const fs::path& out_in, const CudaKernels& cuda) {
  const fs::path repo = fs::absolute(repo_in).lexically_normal();
  const fs::path out = fs::absolute(out_in).lexically_normal();
  if (!fs::is_directory(repo / "labs"))
    throw std::runtime_error(fmt::format("{} is not a gpulab repository (it has no labs/ folder)", repo.string()));
  require_empty_or_absent(out);

  ReleaseSummary summary;
  summary.out = out;
  summary.from_git = fs::exists(repo / ".git");
  const ScratchFolder last_commit("gpulab-release");
  if (summary.from_git) unpack_last_commit(repo, last_commit.path(), summary);
  const fs::path source_root = summary.from_git ? last_commit.path() : repo;
  const std::vector<fs::path> files = files_under(source_root, !summary.from_git);
  try {
    write_release_files(source_root, files, out, summary);
    ship_cuda_kernels(source_root, files, out, cuda, summary);
    ship_opencl_kernels(source_root, files, out, summary);
  } catch (...) {
    // The folder was empty or absent: nothing but this release's partial output is in it.
    for (const auto& entry : fs::directory_iterator(out)) fs::remove_all(entry.path());
    throw;
  }
  archive_skeletons(out);
  return summary;
}

std::string describe(const ReleaseSummary& s) {
  std::string text = s.from_git
                         ? fmt::format("student release: {} files written to {} (the files of the last commit, {})\n",
                                       s.files_written, s.out.string(), s.commit)
                         : fmt::format(
                               "student release: {} files written to {} (the files of the folder, without build/ and "
                               "dot folders)\n",
                               s.files_written, s.out.string());
  if (!s.uncommitted.empty())
    text += fmt::format(
        "not released: the uncommitted changes to {} file{} ({}{}); commit them and release again if "
        "students should have them\n",
        s.uncommitted.size(), s.uncommitted.size() == 1 ? "" : "s",
        fmt::join(s.uncommitted.begin(), s.uncommitted.begin() + std::min<std::size_t>(5, s.uncommitted.size()), ", "),
        s.uncommitted.size() > 5 ? ", ..." : "");
  text += fmt::format(
      "left out: solutions/, docs/answers/, tests/fixtures/, the labs' planted submissions and the instructor's "
      "material ({}) ({} files), and {} "
      "hidden case{}; the docs site's nav and links forget the pages left out\n",
      fmt::join(kInstructorFiles, ", "), s.files_left_out, s.hidden_cases_removed,
      s.hidden_cases_removed == 1 ? "" : "s");
  if (!s.cuda_objects.empty())
    text += fmt::format(
        "compiled: the harness's CUDA kernels ({} files: calibrations and staff kernels, the designs of graded tasks) "
        "ship as objects, not source, made by nvcc {} for {}; students need CUDA {}.x to build the CUDA backend\n",
        s.cuda_objects.size(), s.nvcc_version, fmt::join(s.cuda_archs, ", "),
        s.nvcc_version.substr(0, s.nvcc_version.find('.')));
  if (s.cuda_sources_left_out > 0)
    text += fmt::format(
        "left out: the harness's CUDA kernels ({} files), since this build has no nvcc to compile them: the release "
        "runs on OpenCL only; release from a build with the CUDA toolkit (no GPU needed) to ship the CUDA backend\n",
        s.cuda_sources_left_out);
  if (s.opencl_kernels > 0)
    text += fmt::format(
        "encoded: the harness's OpenCL kernels ({} files: calibrations and staff kernels, the designs of graded tasks) "
        "ship as encoded C++ (each lab's grader/opencl_kernels.cpp), not as OpenCL source\n",
        s.opencl_kernels);
  text += "added: tests/skeletons.tar, labs/ as released, which the students' make test reads instead of their edits\n";
  for (const auto& m : s.manifests_changed) text += fmt::format("  {}\n", m);
  text += fmt::format("next: cd {} && git init && git add . && git commit -m \"Course repository\"\n", s.out.string());
  return text;
}

}  // namespace gpulab::cli
