// `gpulab similarity` on a made-up lab (tests/unit/data/similarity: its skeleton and honest pieces of
// solutions, .txt so the house-style check leaves their layouts alone): planted copies must rank
// first, unrelated solutions below them, the skeleton's own text must not make students similar,
// and the pages must escape what students wrote. These tests need sim_c++ (similarity-tester);
// without it they fail with the install hint.
#include <doctest/doctest.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "files.hpp"
#include "similarity.hpp"

namespace fs = std::filesystem;
using namespace gpulab::cli;

namespace {

const fs::path kData = fs::path(GPULAB_REPO) / "tests/unit/data/similarity";

struct Bench {
  fs::path root;
  explicit Bench(const std::string& name)
      : root(fs::temp_directory_path() / ("gpulab-similarity-test-" + std::to_string(::getpid()) + "-" + name)) {
    fs::remove_all(root);
    fs::create_directories(root / "submissions");
    fs::create_directories(course());
    fs::copy_file(kData / "rowsum_skeleton.cu.txt", course() / "rowsum.cu");
  }
  fs::path course() const { return root / "course/labs/97-rowsum"; }
  ~Bench() { fs::remove_all(root); }

  void student(const std::string& name, const std::string& rowsum_cu) const {
    const fs::path dir = root / "submissions" / name / "labs/97-rowsum";
    fs::create_directories(dir);
    std::ofstream(dir / "rowsum.cu") << rowsum_cu;
  }
  // The made-up lab; `skeleton_dir` holds its rowsum.cu (the course's, or a folder without it).
  SimilarityOptions options(std::optional<fs::path> skeleton_dir = std::nullopt) const {
    gpulab::Manifest lab;
    lab.path = skeleton_dir.value_or(course()) / "lab.toml";
    lab.id = "97-rowsum";
    lab.name = "rowsum";
    lab.files = {{"cuda", {"rowsum.cu"}}};
    SimilarityOptions o;
    o.submissions = root / "submissions";
    o.out = root / "out";
    o.labs = {lab};
    o.min_percent = 0;
    o.quiet = true;
    return o;
  }
};

std::string piece(const std::string& name) { return read_text_or_throw(kData / (name + ".cu.txt")); }

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size())
    text.replace(at, from.size(), to);
  return text;
}

// A student's own style: each line of a piece rewritten by some of these equivalent forms, chosen per
// student and line, so two students who build on the same piece do not hand in the same token sequence
// (sim ignores names, numbers and layout, so only changes of structure count).
std::string perturbed(const std::string& piece_text, unsigned seed) {
  static const std::vector<std::pair<std::regex, std::string>> rewrites{
      {std::regex(R"((\w+(?:\[[^\]]*\])?) \+= ([^;]+);)"), "$1 = $1 + ($2);"},
      {std::regex(R"(\+\+(\w+))"), "$1++"},
      {std::regex(R"(static_cast<size_t>\(([^()]*)\))"), "(size_t)($1)"},
      {std::regex(R"(\bconst (int|float|unsigned|size_t)\b)"), "$1"},
      {std::regex(R"(^( *)if \((.*)\) ([^{].*;)$)"), "$1if ($2) {\n$1  $3\n$1}"},
      {std::regex(R"(^( *)(int|float|unsigned|double) (\w+) = ([^,;]+);$)"), "$1$2 $3;\n$1$3 = $4;"},
      {std::regex(R"(^( *)for \((int|unsigned) (\w+) = ([^;]+); ([^;]+); ([^)]+)\) ([^{].*;)$)"),
       "$1$2 $3 = $4;\n$1while ($5) {\n$1  $7\n$1  $6;\n$1}"},
  };
  std::string out;
  std::istringstream lines(piece_text);
  unsigned state = seed * 2654435761u + 12345u;
  for (std::string line; std::getline(lines, line);) {
    for (const auto& [pattern, replacement] : rewrites) {
      state = state * 1103515245u + 12345u;  // a fixed generator: the batch is the same on every machine
      if ((state >> 16) & 1) line = std::regex_replace(line, pattern, replacement);
    }
    out += line + "\n";
  }
  return out;
}

// One honest solution: a naive kernel, a block kernel and a launch style (the pieces' numbers), written in
// the style of `seed` (perturbed).
struct Honest {
  int naive, block, launch;
  unsigned seed;
};

// One launch function's body: launch style `h.launch` for `kernel` over `grid` blocks.
std::string launch(const Honest& h, const std::string& kernel, const std::string& grid) {
  return perturbed(replaced(replaced(piece(fmt::format("launch_{}", h.launch)), "GRID", grid), "KERNEL", kernel),
                   h.seed);
}

// A student's rowsum.cu; `block_first` puts the block kernel's functions first (an order a copier may change).
std::string solution(const Honest& h, const std::string& comment, bool block_first = false) {
  const std::string signature = "(const float* in, float* out, int rows, int cols) {\n";
  const std::string naive_grid = h.launch % 2 ? "(rows + 255) / 256" : "gpulab::blocks_for(rows, 256)";
  const std::string naive_part = "__global__ void rowsum_naive_kernel" + signature +
                                 perturbed(piece(fmt::format("naive_{}", h.naive)), h.seed) + "}\n\nvoid rowsum_naive" +
                                 signature + launch(h, "rowsum_naive_kernel", naive_grid) + "}\n\n";
  const std::string zero =
      h.block == 2 ? "  gpulab::check(cudaMemset(out, 0, sizeof(float) * rows), \"zeroing out\");\n" : "";
  const std::string block_part = "__global__ void rowsum_block_kernel" + signature +
                                 perturbed(piece(fmt::format("block_{}", h.block)), h.seed) + "}\n\nvoid rowsum_block" +
                                 signature + zero + launch(h, "rowsum_block_kernel", "rows") + "}\n\n";
  const std::string head = "// " + comment + "\n#include \"gpulab/student/cuda.hpp\"\n\n";
  return head + (block_first ? block_part + naive_part : naive_part + block_part);
}

// What copiers do: every local name changed (the regex keeps the lab's own names), comments changed or
// removed, the layout changed.
std::string renamed(const std::string& text) {
  static const std::regex local(
      R"(\b(sum|row|c|partial|stride|base|total|acc|i|e|r|line|idx|k|y|t|carry|my_row|active|result|warp_sums|lane|)"
      R"(warp|row_start|v|offset|mine|cache|local|j|s|buf|tid|src|a|sums|me|part|per_thread|begin|finish|block_total|)"
      R"(data|x|mask|threads|blocks|block|grid|status|n|threads_per_block|grid_size|stream|p|end|s0|s1|s2|s3)\b)");
  return std::regex_replace(text, local, "my_$1");
}
std::string recommented(const std::string& text) {
  return std::regex_replace(text, std::regex("//[^\n]*"), "// (written by me, honestly)");
}
std::string uncommented(const std::string& text) { return std::regex_replace(text, std::regex(" *//[^\n]*"), ""); }
std::string relaid(const std::string& text) {
  return std::regex_replace(replaced(replaced(text, "  ", "    "), ") {\n", ")\n{\n"), std::regex(" = "), "=");
}

// Student k of the batch: naive kernel k / 5, launch style k % 5, block kernel (naive + style) % 7: two
// students share at most one of the three pieces (a code of distance 2), and each writes it in a style
// of their own (perturbed), so no two are copies.
Honest honest(int k) { return {k / 5, (k / 5 + k % 5) % 7, k % 5, static_cast<unsigned>(k + 1)}; }
std::string name_of(int k) { return fmt::format("s{:02}", (k * 7) % 30 + 1); }  // copies are not neighbours

}  // namespace

TEST_CASE("three planted copies among 30 students rank first, above every unrelated pair") {
  Bench bench("batch");
  for (int k = 0; k < 27; ++k) {
    bench.student(name_of(k), solution(honest(k), fmt::format("rowsum by student {}", k)));
  }
  // The copies: of student 2 with every local renamed and the comments reworded; of 13 with the
  // functions reordered and another layout; of 21 with all three and the comments removed.
  bench.student(name_of(27), recommented(renamed(solution(honest(2), "rowsum by student 27"))));
  bench.student(name_of(28), relaid(solution(honest(13), "rowsum, student 28", true)));
  bench.student(name_of(29), relaid(renamed(uncommented(solution(honest(21), "x", true)))));
  const std::set<std::set<std::string>> planted{
      {name_of(2), name_of(27)}, {name_of(13), name_of(28)}, {name_of(21), name_of(29)}};

  const SimilarityReport report = write_similarity_report(bench.options());
  REQUIRE(report.pairs.size() >= 3);
  double lowest_planted = 100, highest_unrelated = 0;
  for (std::size_t rank = 0; rank < report.pairs.size(); ++rank) {
    const SimilarPair& p = report.pairs[rank];
    const bool is_planted = planted.count({p.a, p.b}) > 0;
    if (rank < 4)
      MESSAGE(fmt::format("#{} {} {}: {:.1f}% ({:.1f}% / {:.1f}%, {} tokens)", rank + 1, p.a, p.b, p.similarity(),
                          p.percent_a, p.percent_b, p.tokens));
    CHECK_MESSAGE(is_planted == (rank < 3), fmt::format("rank {}: {} and {}", rank + 1, p.a, p.b));
    if (is_planted)
      lowest_planted = std::min(lowest_planted, p.similarity());
    else
      highest_unrelated = std::max(highest_unrelated, p.similarity());
  }
  MESSAGE(fmt::format("lowest planted {:.1f}%, highest unrelated {:.1f}%", lowest_planted, highest_unrelated));
  CHECK(lowest_planted >= 90);
  CHECK(highest_unrelated < lowest_planted);
  CHECK(fs::exists(bench.root / "out/similarity/index.html"));
  CHECK(fs::exists(bench.root / "out/similarity/pairs.json"));
  CHECK(fs::exists(bench.root / "out/similarity" / report.pairs.front().page));
}

TEST_CASE("the skeleton's own text does not make two students similar") {
  Bench bench("skeleton");
  const std::string skeleton = read_text_or_throw(kData / "rowsum_skeleton.cu.txt");
  // Each fills in a different kernel and leaves the rest of the skeleton as it is.
  const std::string naive_todo =
      "  // TODO: one thread per row, looping over the row's columns; skip threads past the last row.\n";
  const std::string block_todo = "  // combines the partial sums (shared memory, warp shuffles or atomics).\n";
  REQUIRE(skeleton.find(naive_todo) != std::string::npos);
  REQUIRE(skeleton.find(block_todo) != std::string::npos);
  bench.student("alice", replaced(skeleton, naive_todo, piece("naive_0")));
  bench.student("bob", replaced(skeleton, block_todo, piece("block_1")));

  const auto subtracted = write_similarity_report(bench.options());
  CHECK(subtracted.pairs.empty());
  // Without the skeleton to subtract, the same two files are similar: the subtraction is what tells them apart.
  const auto raw = write_similarity_report(bench.options(bench.root / "no-skeleton"));
  REQUIRE(raw.pairs.size() == 1);
  CHECK(raw.pairs.front().similarity() > 15);  // the shared skeleton over both files' code
}

TEST_CASE("a one-line match ranks below a half-copied lab, though it is all of the short file") {
  Bench bench("short");
  const std::string skeleton = read_text_or_throw(kData / "rowsum_skeleton.cu.txt");
  const std::string naive_todo =
      "  // TODO: one thread per row, looping over the row's columns; skip threads past the last row.\n";
  const std::string block_todo = "  // combines the partial sums (shared memory, warp shuffles or atomics).\n";
  const std::string loop_line = "    for (int c = 0; c < cols; ++c) sum += in[static_cast<size_t>(row) * cols + c];\n";
  REQUIRE(piece("naive_0").find(loop_line) != std::string::npos);
  const std::string naive_launch = "  GPULAB_NOT_IMPLEMENTED(\"rowsum_naive: launch rowsum_naive_kernel\");\n";
  const std::string block_launch = "  GPULAB_NOT_IMPLEMENTED(\"rowsum_block: launch rowsum_block_kernel\");\n";
  const auto launch_of = [&](int style, const std::string& kernel, const std::string& grid) {
    return replaced(replaced(piece(fmt::format("launch_{}", style)), "GRID", grid), "KERNEL", kernel);
  };
  // The naive half (kernel and launch) and the block half, each filled in or left as the skeleton has it.
  const auto filled = [&](const std::string& naive, const std::string& launch_naive, const std::string& block,
                          const std::string& launch_block) {
    std::string text = replaced(replaced(skeleton, naive_todo, naive), block_todo, block);
    return replaced(replaced(text, naive_launch, launch_naive), block_launch, launch_block);
  };
  const std::string mia_naive = launch_of(0, "rowsum_naive_kernel", "(rows + 255) / 256");
  bench.student("mia",
                filled(piece("naive_0"), mia_naive, piece("block_1"), launch_of(1, "rowsum_block_kernel", "rows")));
  // Mia's naive half, and a block half of her own.
  bench.student("noa",
                filled(piece("naive_0"), mia_naive, piece("block_4"), launch_of(3, "rowsum_block_kernel", "rows")));
  bench.student("lee", filled(loop_line, naive_launch, "", block_launch));  // one line, which mia's file has too

  const auto report = write_similarity_report(bench.options());
  REQUIRE(report.pairs.size() >= 2);
  for (const auto& p : report.pairs)
    MESSAGE(fmt::format("{} {}: {:.1f}% ({:.1f}% / {:.1f}%, {} tokens)", p.a, p.b, p.similarity(), p.percent_a,
                        p.percent_b, p.tokens));
  CHECK(std::set<std::string>{report.pairs.front().a, report.pairs.front().b} == std::set<std::string>{"mia", "noa"});
  const auto lee_and_mia = std::find_if(report.pairs.begin(), report.pairs.end(),
                                        [](const SimilarPair& p) { return p.a == "lee" && p.b == "mia"; });
  REQUIRE(lee_and_mia != report.pairs.end());
  CHECK(lee_and_mia->percent_a == doctest::Approx(100));  // all of lee's line is in mia's file...
  CHECK(lee_and_mia->similarity() < 30);                  // ...but a small part of the pair's code
}

TEST_CASE("the pages escape what students wrote and run no script") {
  Bench bench("escape");
  const std::string hostile = solution({0, 1, 0, 0}, "</pre><script>alert('x')</script> <img src=x onerror=alert(1)>") +
                              "const char* note = \"</td><script>document.write(1)</script>&amp;\";\n";
  bench.student("mallory<b>", hostile);
  bench.student("trent", hostile);
  const auto report = write_similarity_report(bench.options());
  REQUIRE(report.pairs.size() == 1);
  CHECK(report.pairs.front().a == "mallory=3Cb=3E");  // names are made plain before they reach a page or a path
  for (const fs::path& page :
       {bench.root / "out/similarity/index.html", bench.root / "out/similarity" / report.pairs.front().page}) {
    const std::string html = read_text_or_throw(page);
    CHECK(html.find("<script") == std::string::npos);
    CHECK(html.find("<img") == std::string::npos);
    CHECK(html.find("Content-Security-Policy") != std::string::npos);
  }
  const std::string side_by_side = read_text_or_throw(bench.root / "out/similarity" / report.pairs.front().page);
  CHECK(side_by_side.find("&lt;/pre&gt;&lt;script&gt;alert(&#39;x&#39;)") != std::string::npos);
  CHECK(side_by_side.find("&amp;amp;") != std::string::npos);
}

TEST_CASE("a missing similarity tester stops the run with the package to install") {
  Bench bench("missing");
  bench.student("alice", solution({0, 0, 0, 0}, "a"));
  bench.student("bob", solution({1, 1, 1, 1}, "b"));
  SimilarityOptions options = bench.options();
  options.tool = (bench.root / "no-such-sim_c++").string();
  CHECK_THROWS_WITH(write_similarity_report(options),
                    doctest::Contains("install similarity-tester (scripts/install-deps.sh grade"));

  const std::string saved_path = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", (bench.root / "empty-bin").c_str(), 1);
  options.tool = "sim_c++";
  CHECK_THROWS_WITH(write_similarity_report(options), doctest::Contains("sim_c++ was not found"));
  ::setenv("PATH", saved_path.c_str(), 1);
  CHECK_NOTHROW(write_similarity_report(options));  // and with the package installed, it runs
}

TEST_CASE("a submission that cannot be opened is named and the others are still compared") {
  Bench bench("broken");
  bench.student("alice", solution({0, 0, 0, 0}, "a"));
  bench.student("bob", solution({0, 0, 0, 0}, "b"));
  std::ofstream(bench.root / "submissions/carol.zip") << "not a zip archive";
  const auto report = write_similarity_report(bench.options());
  REQUIRE(report.pairs.size() == 1);
  CHECK(report.pairs.front().similarity() > 90);
  REQUIRE(report.notes.size() == 1);
  CHECK(report.notes.front().find("carol (carol.zip) could not be opened") != std::string::npos);
}

TEST_CASE("a lab that fewer than two students handed in is reported, not compared") {
  Bench bench("alone");
  bench.student("alice", solution({0, 0, 0, 0}, "a"));
  fs::create_directories(bench.root / "submissions/bob");  // nothing of the lab
  const auto report = write_similarity_report(bench.options());
  CHECK(report.pairs.empty());
  REQUIRE(report.notes.size() == 1);
  CHECK(report.notes.front() == "97-rowsum (cuda): 1 student(s) handed in its files; nothing to compare");
}

TEST_CASE("the skeleton's lines are blanked, and line numbers are kept") {
  CHECK(without_skeleton("  int x;  // mine\n}\nfoo();\n", "}\n  int   x;\n") == "\n\nfoo();\n");
}

TEST_CASE("beyond max_pages pairs of a lab, pairs are only in pairs.json") {
  Bench bench("many");
  for (const char* name : {"ann", "ben", "cat", "dan"}) bench.student(name, solution({0, 0, 0, 0}, name));
  SimilarityOptions options = bench.options();
  options.max_pages = 2;
  const auto report = write_similarity_report(options);
  REQUIRE(report.pairs.size() == 6);
  CHECK(std::count_if(report.pairs.begin(), report.pairs.end(), [](const SimilarPair& p) { return !p.page.empty(); }) ==
        2);
  CHECK(fs::exists(bench.root / "out/similarity/97-rowsum-cuda/ann--ben.html"));
  const std::string index = read_text_or_throw(bench.root / "out/similarity/index.html");
  CHECK(index.find("6 pairs at or above 0%") != std::string::npos);
  CHECK(index.find("The first 2 are shown; pairs.json lists them all.") != std::string::npos);
  const auto json = nlohmann::json::parse(read_text_or_throw(bench.root / "out/similarity/pairs.json"));
  CHECK(json["pairs"].size() == 6);
}
