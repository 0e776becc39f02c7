#include "barrier_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include "source_text.hpp"

namespace gpulab::cli {

namespace {

constexpr std::size_t npos = static_cast<std::size_t>(-1);

const char* const kCondition = "barrier under a thread-dependent condition";
const char* const kLoop = "barrier in a loop with a thread-dependent bound";
const char* const kReturn = "early return before a barrier";

// ---------------------------------------------------------------------------------------------
// Lexing

struct Token {
  std::string text;
  int line = 0;
  std::size_t begin = 0, end = 0;  // offsets into the blanked source
  bool ident = false;
};

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Skips a preprocessor directive and its continuation lines; returns the offset of its final newline.
std::size_t skip_directive(const std::string& code, std::size_t i, int& line) {
  while (i < code.size()) {
    const std::size_t nl = std::min(code.find('\n', i), code.size());
    std::size_t last = nl;
    while (last > i && (code[last - 1] == ' ' || code[last - 1] == '\t' || code[last - 1] == '\r')) --last;
    if (nl == code.size() || last == i || code[last - 1] != '\\') return nl;
    ++line;  // a continued line: the directive goes on
    i = nl + 1;
  }
  return i;
}

std::size_t punct_length(const std::string& code, std::size_t i) {
  static const char* const three[] = {"<<=", ">>=", "...", "->*"};
  static const char* const two[] = {"::", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&",
                                    "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", ".*"};
  for (const char* p : three)
    if (code.compare(i, 3, p) == 0) return 3;
  for (const char* p : two)
    if (code.compare(i, 2, p) == 0) return 2;
  return 1;
}

std::size_t lex_one(const std::string& code, std::size_t i, bool& ident) {
  const char c = code[i];
  const char next = i + 1 < code.size() ? code[i + 1] : '\0';
  ident = false;
  if (ident_start(c)) {
    ident = true;
    while (i < code.size() && is_identifier_char(code[i])) ++i;
    return i;
  }
  if (digit(c) || (c == '.' && digit(next))) {
    for (++i; i < code.size(); ++i) {
      const char d = code[i];
      const bool exponent_sign = (d == '+' || d == '-') && std::strchr("eEpP", code[i - 1]) != nullptr;
      if (!is_identifier_char(d) && d != '.' && d != '\'' && !exponent_sign) break;
    }
    return i;
  }
  if (c == '"' || c == '\'') {
    std::size_t k = i + 1;
    while (k < code.size() && code[k] != c && code[k] != '\n') ++k;
    return k < code.size() && code[k] == c ? k + 1 : k;
  }
  return i + punct_length(code, i);
}

std::vector<Token> tokenize(const std::string& code) {
  std::vector<Token> tokens;
  int line = 1;
  bool line_start = true;
  std::size_t i = 0;
  while (i < code.size()) {
    const char c = code[i];
    if (c == '\n') {
      ++line, ++i;
      line_start = true;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '#' && line_start) {
      i = skip_directive(code, i, line);  // #pragma, #define ...: no statements of the kernel
    } else {
      line_start = false;
      Token t;
      t.line = line;
      t.begin = i;
      i = lex_one(code, i, t.ident);
      t.end = i;
      t.text = code.substr(t.begin, t.end - t.begin);
      tokens.push_back(std::move(t));
    }
  }
  return tokens;
}

// For every bracket, the index of its partner (npos when unmatched).
std::vector<std::size_t> match_brackets(const std::vector<Token>& t) {
  std::vector<std::size_t> partner(t.size(), npos), open;
  for (std::size_t k = 0; k < t.size(); ++k) {
    const std::string& s = t[k].text;
    if (s == "(" || s == "[" || s == "{") {
      open.push_back(k);
    } else if (s == ")" || s == "]" || s == "}") {
      const char want = s == ")" ? '(' : s == "]" ? '[' : '{';
      auto it = std::find_if(open.rbegin(), open.rend(), [&](std::size_t o) { return t[o].text[0] == want; });
      if (it == open.rend()) continue;  // a stray closer (macros can leave some)
      partner[*it] = k;
      partner[k] = *it;
      open.erase(std::next(it).base(), open.end());
    }
  }
  return partner;
}

// ---------------------------------------------------------------------------------------------
// Vocabulary

bool one_of(const std::string& s, std::initializer_list<const char*> words) {
  return std::any_of(words.begin(), words.end(), [&](const char* w) { return s == w; });
}

bool control_keyword(const std::string& s) {
  return one_of(s, {"if", "else", "for", "while", "do", "switch", "return", "break", "continue", "case", "default"});
}

bool barrier_name(const std::string& s) {
  return one_of(s, {"__syncthreads", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or", "barrier",
                    "work_group_barrier"});
}

bool opencl_barrier(const std::string& s) { return s == "barrier" || s == "work_group_barrier"; }

// What differs from thread to thread within a block (work-group) by construction: an index.
bool thread_index(const std::string& s) {
  return one_of(s, {"threadIdx", "get_local_id", "get_global_id", "get_local_linear_id", "get_global_linear_id",
                    "get_sub_group_local_id", "laneid", "lane_id", "__lane_id", "thread_rank", "thread_index"});
}

// Each thread gets its own old value back, which may still be the same for all (an atomic read).
bool atomic_result(const std::string& s) { return s.rfind("atomic", 0) == 0; }

// What the collectives give back: the same value in the whole block (a block vote or reduction:
// uniform), or the same in a warp (sub-group) at most, or another thread's value (a shuffle): a
// value that may or may not differ between the threads of a block.
enum class Collective { none, block, warp };
Collective collective(const std::string& s) {
  if (one_of(s, {"__syncthreads_or", "__syncthreads_and", "__syncthreads_count", "work_group_broadcast",
                 "work_group_all", "work_group_any"}) ||
      s.rfind("work_group_reduce_", 0) == 0)
    return Collective::block;
  for (const char* prefix :
       {"__shfl", "__ballot", "__all", "__any", "__reduce_", "__match", "__activemask", "sub_group_"})
    if (s.rfind(prefix, 0) == 0) return Collective::warp;
  return Collective::none;
}

bool assignment_op(const std::string& s) {
  return one_of(s, {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="});
}

// Words that start a statement that is not a declaration.
bool statement_keyword(const std::string& s) {
  return control_keyword(s) ||
         one_of(s, {"goto", "throw", "delete", "new", "sizeof", "using", "typedef", "operator", "co_return", "co_await",
                    "co_yield", "static_assert", "asm", "__asm__", "true", "false", "nullptr", "this"});
}

bool memory_space_shared(const std::string& s) { return one_of(s, {"__shared__", "__local", "local"}); }

// Words before a name that take a parenthesised argument and are not the type: skipped whole.
bool attribute_word(const std::string& s) {
  return one_of(s, {"alignas", "_Alignas", "__align__", "__attribute__", "__declspec", "__launch_bounds__"});
}

std::string collapse_spaces(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string shorten(std::string s, std::size_t max = 90) {
  if (s.size() <= max) return s;
  s.resize(max);
  return s + "…";
}

// ---------------------------------------------------------------------------------------------
// The teaching sentences

struct Words {
  const char* thread;
  const char* threads;
  const char* group;
};

Words words_for(bool opencl) {
  return opencl ? Words{"work-item", "work-items", "work-group"} : Words{"thread", "threads", "block"};
}

// `word`: the construct to move the barrier out of (if, switch), or the exit taken (return, break, continue).
std::string lesson(const std::string& kind, bool opencl, const std::string& word) {
  const Words w = words_for(opencl);
  if (kind == kCondition)
    return fmt::format(
        "every {0} of the {1} must reach each barrier, so the {2} that skip this one leave the others "
        "waiting at it: the kernel hangs or computes from half-written memory (and on PoCL shows "
        "no sign). Move the barrier out of the {3}, so that all {2} reach it, and guard only the "
        "loads and stores",
        w.thread, w.group, w.threads, word);
  if (kind == kLoop && word.empty())
    return fmt::format(
        "{0} run this loop a different number of times, so some wait at the barrier for {0} that "
        "have already left the loop: a hang or a race. Keep every {1} of the {2} in the loop for the "
        "same number of iterations (a bound from the {2} and the kernel's arguments, not the {1}'s "
        "index) and guard the work inside it with an if",
        w.threads, w.thread, w.group);
  if (kind == kLoop)
    return fmt::format(
        "{0} that leave the loop early miss the barrier that the others wait at: a hang or a race. "
        "Keep every {1} in the loop for the same number of iterations and guard the work with an if "
        "instead of `{2}`",
        w.threads, w.thread, word);
  return fmt::format(
      "{0} that return early never reach that barrier, and the others wait at it for them: a hang "
      "or a race (and on PoCL no sign at all). Keep every {1} until the last barrier: guard the loads "
      "and stores with an if instead of returning, or return only after the last barrier",
      w.threads, w.thread);
}

// ---------------------------------------------------------------------------------------------
// Functions

struct FunctionBody {
  std::string name;
  bool kernel = false;
  std::size_t open = 0, close = 0;  // its braces
};

// The token before `{` that closes a parameter list, skipping qualifiers (`) const {`), or npos.
std::size_t parameters_close(const std::vector<Token>& t, std::size_t brace) {
  std::size_t p = brace;
  while (p > 0 && one_of(t[p - 1].text, {"const", "noexcept", "override", "final", "mutable", "volatile", "&", "&&"}))
    --p;
  return p > 0 && t[p - 1].text == ")" ? p - 1 : npos;
}

// Every function definition: a `{` right after a parameter list, wherever declarations may be
// (the top level, namespaces, structs). Its body is skipped: lambdas inside are part of it.
std::vector<FunctionBody> find_functions(const std::vector<Token>& t, const std::vector<std::size_t>& partner) {
  std::vector<FunctionBody> out;
  std::size_t declaration_start = 0;
  for (std::size_t k = 0; k < t.size(); ++k) {
    const std::string& s = t[k].text;
    if (s == ";" || s == "}") declaration_start = k + 1;
    if (s != "{") continue;
    const std::size_t close_paren = parameters_close(t, k);
    if (close_paren == npos || partner[close_paren] == npos || partner[k] == npos) {
      declaration_start = k + 1;  // a namespace, struct or initialiser: look inside
      continue;
    }
    FunctionBody f;
    const std::size_t open_paren = partner[close_paren];
    f.name = open_paren > 0 && t[open_paren - 1].ident ? t[open_paren - 1].text : "(lambda)";
    for (std::size_t d = declaration_start; d < open_paren; ++d)
      f.kernel |= one_of(t[d].text, {"__global__", "__kernel", "kernel"});
    f.open = k;
    f.close = partner[k];
    out.push_back(f);
    k = f.close;
    declaration_start = k + 1;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The walk over one function's statements

enum class Construct { branch, loop, switch_ };

// How sure the check is that a value differs between the threads of a block: not at all
// (uniform), maybe (through memory, an atomic, another thread's value, an assignment under a
// thread-dependent condition or to a uniform value somewhere), or sure: computed from the
// thread's index by arithmetic alone.
enum Level { uniform = 0, maybe = 1, sure = 2 };

// What a value reads that depends on the thread: the level of its thread indices and atomics, and
// the thread-dependent variables it reads (their keys), each with whether it is read through memory.
struct Reads {
  int direct = uniform;
  std::vector<std::pair<std::string, bool>> variables;
};

// An assignment of a variable, for the second look (which variables are surely thread-dependent).
struct Assignment {
  std::string variable;    // its key
  Reads value;             // of the right-hand side
  bool compound = false;   // +=, -=, ...: the old value goes on
  bool uncertain = false;  // under a thread-dependent condition: some threads assign, others keep the old value
};

struct Context {
  Construct kind = Construct::branch;
  bool divergent = false;
  int level = uniform;                       // how sure the check is that its condition differs between threads
  std::string condition;                     // the test as written
  std::string phrase;                        // "under `if (...)`", "in the loop `for (...)`"
  std::size_t body_begin = 0, body_end = 0;  // loops: the body's tokens
  // Loops: the first break or continue taken under a thread-dependent condition inside.
  std::size_t exit = npos;
  std::string exit_condition, exit_phrase;
  bool exit_proven = false;
};

struct PendingReturn {
  std::size_t token;
  std::string condition, phrase;
  bool proven = false;
  std::vector<std::pair<std::size_t, std::size_t>> loops;  // the enclosing loops' bodies
};

struct Declarator {
  std::size_t name = 0;
  std::size_t init_begin = 0, init_end = 0;  // empty: no initialiser
};

class FunctionCheck {
 public:
  FunctionCheck(const std::vector<Token>& t, const std::vector<std::size_t>& partner, const std::string& code,
                const FunctionBody& f)
      : t_(t), partner_(partner), code_(code), f_(f) {
    for (std::size_t k = f.open; k < f.close; ++k)
      if (is_barrier(k)) barriers_.push_back(k);
  }

  std::vector<BarrierFinding> run();

 private:
  const std::string& text(std::size_t k) const {
    static const std::string none;
    return k < t_.size() ? t_[k].text : none;
  }
  // One past the bracket's partner; the function's closing brace for an unmatched one.
  std::size_t after(std::size_t k) const {
    return k < partner_.size() && partner_[k] != npos ? partner_[k] + 1 : f_.close;
  }
  std::string source(std::size_t b, std::size_t e) const {
    if (b >= e) return {};
    return collapse_spaces(code_.substr(t_[b].begin, t_[e - 1].end - t_[b].begin));
  }
  bool is_barrier(std::size_t k) const;
  std::string barrier_text(std::size_t k) const;
  bool lambda_brace(std::size_t k) const;

  std::size_t statement(std::size_t i);
  std::size_t block(std::size_t i);
  std::size_t if_statement(std::size_t i);
  std::size_t for_statement(std::size_t i);
  std::size_t while_statement(std::size_t i);
  std::size_t do_statement(std::size_t i);
  std::size_t switch_statement(std::size_t i);
  // The context of a construct whose condition spans tokens [b, e): divergent when it depends on the
  // thread; `header` gets the condition's text ("while ({})") for the phrase ("in the loop `{}`").
  Context condition_context(Construct kind, std::size_t b, std::size_t e, const std::string& header,
                            const char* phrase) const;
  std::size_t jump_statement(std::size_t i);
  std::size_t simple_statement(std::size_t i);
  std::size_t simple_end(std::size_t i) const;
  std::size_t statement_end(std::size_t i) const;
  std::size_t label_end(std::size_t i) const;
  void expression(std::size_t b, std::size_t e);
  void walk_lambda(std::size_t brace);
  void loop_body(Context c, std::size_t body, std::size_t incr_begin, std::size_t incr_end, std::size_t& next);

  std::optional<std::vector<Declarator>> declaration(std::size_t b, std::size_t e, bool& shared) const;
  void declare(const std::vector<Declarator>& ds, bool shared);
  void assignments(std::size_t b, std::size_t e);
  std::size_t operand_end(std::size_t k, std::size_t e) const;
  std::size_t assigned_name(std::size_t op, bool& direct) const;
  std::string assigned_key(std::size_t name, bool direct) const;
  void mark(std::size_t name, bool direct, bool value);
  void reads(std::size_t b, std::size_t e, bool through_memory, Reads& out) const;
  int level(const Reads& r) const;
  int level(std::size_t b, std::size_t e) const;
  bool depends_on_thread(std::size_t b, std::size_t e) const { return level(b, e) > uniform; }
  void settle_sure_variables();
  std::string resolve(const std::string& name) const;
  const Context* outermost_divergent() const;
  const Context* outermost_proof() const;
  const Context* innermost_divergent(std::size_t from) const;
  static bool proves(const Context* c) { return c && c->kind != Construct::loop && c->level == sure; }

  void walk();
  void check_barrier(std::size_t k);
  void finish_loop(const Context& c);
  void finish_returns();
  void report(std::size_t line_token, std::size_t barrier, const char* kind, const std::string& condition,
              const std::string& summary, const std::string& word, bool proven);

  const std::vector<Token>& t_;
  const std::vector<std::size_t>& partner_;
  const std::string& code_;
  FunctionBody f_;
  std::vector<std::size_t> barriers_;
  std::set<std::string> tainted_, shared_;
  std::set<std::string> sure_;  // of tainted_: surely thread-dependent (settle_sure_variables)
  std::vector<Assignment> assignments_;
  std::vector<std::map<std::string, std::string>> scopes_;
  std::vector<Context> stack_;
  std::vector<PendingReturn> returns_;
  std::vector<BarrierFinding> findings_;
  int lambda_depth_ = 0;
  bool changed_ = false;
};

bool FunctionCheck::is_barrier(std::size_t k) const {
  if (!t_[k].ident || !barrier_name(t_[k].text) || text(k + 1) != "(") return false;
  if (k == 0) return true;
  const Token& before = t_[k - 1];
  // Not a member, a qualified name (cuda::barrier) or a declaration (void barrier(...)).
  if (one_of(before.text, {"::", ".", "->"})) return false;
  return !before.ident || one_of(before.text, {"else", "do", "return"});
}

std::string FunctionCheck::barrier_text(std::size_t k) const {
  const std::size_t close = after(k + 1);
  const std::string call = source(k, close);
  return call.size() <= 40 ? call : t_[k].text + "(…)";
}

// A lambda's body: `[...] {`, `[...](...) {`, `(...) mutable {`.
bool FunctionCheck::lambda_brace(std::size_t k) const {
  if (text(k) != "{" || k == 0) return false;
  const std::string& before = t_[k - 1].text;
  if (before == "]" || before == "mutable") return true;
  if (before != ")" || partner_[k - 1] == npos || partner_[k - 1] == 0) return false;
  return t_[partner_[k - 1] - 1].text == "]";
}

void FunctionCheck::walk() {
  changed_ = false;
  findings_.clear();
  returns_.clear();
  assignments_.clear();
  stack_.clear();
  scopes_.assign(1, {});
  block(f_.open);
  finish_returns();
}

std::vector<BarrierFinding> FunctionCheck::run() {
  if (barriers_.empty()) return {};
  // Taint only grows, so this ends; each pass sees the previous one's taint, and the last pass,
  // which changed nothing, saw the final taint throughout.
  for (int pass = 0; pass < 64; ++pass) {
    walk();
    if (!changed_) break;
  }
  // Then which of the tainted variables are surely thread-dependent, and one more walk that knows
  // it: a finding is proven when a condition on such a value (or a thread index) guards the barrier.
  settle_sure_variables();
  walk();
  return findings_;
}

// ---- statements

std::size_t FunctionCheck::statement(std::size_t i) {
  if (i >= f_.close) return f_.close;
  const std::string& w = t_[i].text;
  if (w == "{") return block(i);
  if (w == ";") return i + 1;
  if (w == "if") return if_statement(i);
  if (w == "for") return for_statement(i);
  if (w == "while") return while_statement(i);
  if (w == "do") return do_statement(i);
  if (w == "switch") return switch_statement(i);
  if (w == "return" || w == "break" || w == "continue") return jump_statement(i);
  if (w == "case" || w == "default") return label_end(i);
  if (w == "else" || w == ")" || w == "]" || w == "}") return i + 1;  // stray: move on
  return simple_statement(i);
}

std::size_t FunctionCheck::block(std::size_t i) {
  const std::size_t close = after(i) - 1;
  scopes_.emplace_back();
  for (std::size_t k = i + 1; k < close;) {
    const std::size_t next = statement(k);
    k = next > k ? next : k + 1;
  }
  scopes_.pop_back();
  return close + 1;
}

std::size_t FunctionCheck::label_end(std::size_t i) const {
  std::size_t k = i + 1;
  while (k < f_.close && text(k) != ":" && text(k) != ";" && text(k) != "{" && text(k) != "}") ++k;
  return text(k) == ":" ? k + 1 : k;
}

// Where a declaration or expression statement ends: after its `;`, or before a `}` or a keyword
// that cannot be inside it (a macro call without a semicolon, FETCH(0), runs into the next one).
std::size_t FunctionCheck::simple_end(std::size_t i) const {
  std::size_t k = i;
  while (k < f_.close) {
    const std::string& s = t_[k].text;
    if (s == ";") return k + 1;
    if (s == "}" || s == ")" || s == "]") return k;
    if (s == "(" || s == "[" || s == "{") {
      k = after(k);
      continue;
    }
    if (k > i && t_[k].ident && control_keyword(s)) return k;
    ++k;
  }
  return k;
}

// The end of the statement at i, without looking into it (do-while needs its condition first).
std::size_t FunctionCheck::statement_end(std::size_t i) const {
  if (i >= f_.close) return f_.close;
  const std::string& w = t_[i].text;
  if (w == "{") return after(i);
  if (w == "if") {
    std::size_t k = i + 1;
    if (text(k) == "constexpr") ++k;
    k = statement_end(after(k));
    return text(k) == "else" ? statement_end(k + 1) : k;
  }
  if (w == "for" || w == "while" || w == "switch") return statement_end(after(i + 1));
  if (w == "do") {
    std::size_t k = statement_end(i + 1);
    if (text(k) == "while") k = after(k + 1);
    return text(k) == ";" ? k + 1 : k;
  }
  if (w == "case" || w == "default") return label_end(i);
  const std::size_t end = simple_end(i);
  return end > i ? end : i + 1;
}

std::size_t FunctionCheck::if_statement(std::size_t i) {
  std::size_t open = i + 1;
  const bool constant = text(open) == "constexpr";  // decided at compile time: the same for all
  if (constant) ++open;
  if (text(open) != "(") return simple_end(i + 1);
  const std::size_t close = after(open) - 1;
  expression(open + 1, close);
  Context c;
  c.level = constant ? uniform : level(open + 1, close);
  c.divergent = c.level > uniform;
  c.condition = source(open + 1, close);
  const std::string header = shorten(fmt::format("if {}({})", constant ? "constexpr " : "", c.condition));
  c.phrase = fmt::format("under `{}`", header);
  stack_.push_back(c);
  std::size_t k = statement(close + 1);
  stack_.pop_back();
  if (text(k) == "else") {
    c.phrase = fmt::format("in the else branch of `{}`", header);
    stack_.push_back(c);
    k = statement(k + 1);
    stack_.pop_back();
  }
  return k;
}

std::size_t FunctionCheck::for_statement(std::size_t i) {
  const std::size_t open = i + 1;
  if (text(open) != "(") return simple_end(i + 1);
  const std::size_t close = after(open) - 1;
  std::vector<std::size_t> semicolons;
  std::size_t colon = npos;
  for (std::size_t k = open + 1; k < close; k = text(k) == "(" || text(k) == "[" || text(k) == "{" ? after(k) : k + 1) {
    if (text(k) == ";") semicolons.push_back(k);
    if (text(k) == ":" && colon == npos) colon = k;
  }
  scopes_.emplace_back();
  Context c;
  c.kind = Construct::loop;
  std::size_t cond_begin = close, cond_end = close, incr_begin = close;
  if (semicolons.size() >= 2) {
    const std::size_t init_end = simple_end(open + 1);
    if (init_end <= semicolons[0] + 1 && init_end > open + 1) simple_statement(open + 1);
    cond_begin = semicolons[0] + 1, cond_end = semicolons[1], incr_begin = semicolons[1] + 1;
  } else if (colon != npos) {  // for (auto x : range): as uniform as the range
    bool shared = false;
    if (auto d = declaration(open + 1, colon, shared)) declare(*d, false);
    cond_begin = colon + 1;
  }
  expression(cond_begin, cond_end);
  c.level = level(cond_begin, cond_end);
  c.divergent = c.level > uniform;
  c.condition = source(cond_begin, cond_end);
  c.phrase = fmt::format("in the loop `{}`", shorten("for (" + source(open + 1, close) + ")"));
  std::size_t next = close + 1;
  loop_body(c, close + 1, incr_begin, close, next);
  scopes_.pop_back();
  return next;
}

// Walks a loop's body (and then its increment, which runs under the loop's condition too).
void FunctionCheck::loop_body(Context c, std::size_t body, std::size_t incr_begin, std::size_t incr_end,
                              std::size_t& next) {
  c.body_begin = body;
  c.body_end = statement_end(body);
  stack_.push_back(c);
  next = statement(body);
  expression(incr_begin, incr_end);
  const Context done = stack_.back();
  stack_.pop_back();
  finish_loop(done);
}

Context FunctionCheck::condition_context(Construct kind, std::size_t b, std::size_t e, const std::string& header,
                                         const char* phrase) const {
  Context c;
  c.kind = kind;
  c.level = level(b, e);
  c.divergent = c.level > uniform;
  c.condition = source(b, e);
  c.phrase = fmt::format(fmt::runtime(phrase), shorten(fmt::format(fmt::runtime(header), c.condition)));
  return c;
}

std::size_t FunctionCheck::while_statement(std::size_t i) {
  const std::size_t open = i + 1;
  if (text(open) != "(") return simple_end(i + 1);
  const std::size_t close = after(open) - 1;
  expression(open + 1, close);
  Context c = condition_context(Construct::loop, open + 1, close, "while ({})", "in the loop `{}`");
  std::size_t next = close + 1;
  loop_body(c, close + 1, close, close, next);
  return next;
}

std::size_t FunctionCheck::do_statement(std::size_t i) {
  const std::size_t body_end = statement_end(i + 1);
  std::size_t cond_begin = body_end, cond_end = body_end, end = body_end;
  if (text(body_end) == "while" && text(body_end + 1) == "(") {
    cond_begin = body_end + 2;
    cond_end = after(body_end + 1) - 1;
    end = cond_end + 1;
    if (text(end) == ";") ++end;
  }
  Context c = condition_context(Construct::loop, cond_begin, cond_end, "do … while ({})", "in the loop `{}`");
  std::size_t next = end;
  loop_body(c, i + 1, cond_begin, cond_end, next);
  return end;
}

std::size_t FunctionCheck::switch_statement(std::size_t i) {
  const std::size_t open = i + 1;
  if (text(open) != "(") return simple_end(i + 1);
  const std::size_t close = after(open) - 1;
  expression(open + 1, close);
  Context c = condition_context(Construct::switch_, open + 1, close, "switch ({})", "under `{}`");
  stack_.push_back(c);
  const std::size_t next = statement(close + 1);
  stack_.pop_back();
  return next;
}

std::size_t FunctionCheck::jump_statement(std::size_t i) {
  const std::size_t next = simple_end(i + 1);
  expression(i + 1, text(next - 1) == ";" ? next - 1 : next);
  const std::string& w = t_[i].text;
  if (w == "return") {
    const Context* c = lambda_depth_ == 0 ? innermost_divergent(0) : nullptr;
    if (c) {
      PendingReturn r{i, c->condition, c->phrase, proves(c), {}};
      for (const auto& s : stack_)
        if (s.kind == Construct::loop) r.loops.emplace_back(s.body_begin, s.body_end);
      returns_.push_back(std::move(r));
    }
    return next;
  }
  // break leaves the innermost loop or switch, continue the innermost loop.
  std::size_t target = stack_.size();
  while (target > 0) {
    const Construct kind = stack_[target - 1].kind;
    if (kind == Construct::loop || (kind == Construct::switch_ && w == "break")) break;
    --target;
  }
  if (target == 0 || stack_[target - 1].kind != Construct::loop) return next;
  Context& loop = stack_[target - 1];
  if (const Context* c = innermost_divergent(target); c && loop.exit == npos) {
    loop.exit = i;
    loop.exit_condition = c->condition;
    loop.exit_phrase = c->phrase;
    loop.exit_proven = proves(c);
  }
  return next;
}

std::size_t FunctionCheck::simple_statement(std::size_t i) {
  const std::size_t next = simple_end(i);
  const std::size_t e = next > i && text(next - 1) == ";" ? next - 1 : next;
  expression(i, e);
  bool shared = false;
  if (auto decls = declaration(i, e, shared)) declare(*decls, shared);
  return next > i ? next : i + 1;
}

// Barriers, lambdas and assignments inside an expression (or the tokens of a declaration).
void FunctionCheck::expression(std::size_t b, std::size_t e) {
  for (std::size_t k = b; k < e && k < f_.close;) {
    if (lambda_brace(k)) {
      walk_lambda(k);
      k = after(k);
      continue;
    }
    if (is_barrier(k)) check_barrier(k);
    ++k;
  }
  bool shared = false;
  if (!declaration(b, e, shared)) assignments(b, e);
}

void FunctionCheck::walk_lambda(std::size_t brace) {
  scopes_.emplace_back();
  if (text(brace - 1) == ")" && partner_[brace - 1] != npos) {  // its parameters hide outer names
    std::size_t last = npos;
    for (std::size_t k = partner_[brace - 1] + 1; k <= brace - 1; ++k) {
      if (t_[k].ident) last = k;
      if ((text(k) == "," || text(k) == ")" || text(k) == "=") && last != npos) {
        scopes_.back()[t_[last].text] = fmt::format("{}@{}", t_[last].text, last);
        last = npos;
      }
    }
  }
  ++lambda_depth_;
  block(brace);
  --lambda_depth_;
  scopes_.pop_back();
}

// ---- taint

// `T a = x, *b, c[4] = {...};`: the declared names and their initialisers, or nothing when the
// statement is not a declaration (it needs at least a type and a name before `=`, `;`, `[`, ...).
std::optional<std::vector<Declarator>> FunctionCheck::declaration(std::size_t b, std::size_t e, bool& shared) const {
  std::size_t k = b, names = 0, last = npos;
  while (k < e) {
    const Token& tok = t_[k];
    if (tok.ident && attribute_word(tok.text) && text(k + 1) == "(") {
      k = after(k + 1);
    } else if (tok.ident) {
      if (statement_keyword(tok.text)) return std::nullopt;
      shared |= memory_space_shared(tok.text);
      ++names, last = k++;
      while (text(k) == "::" && k + 1 < e && t_[k + 1].ident) last = k + 1, k += 2;
      if (text(k) == "<") {  // template arguments of the type
        int depth = 0;
        for (; k < e; ++k) {
          depth += text(k) == "<" ? 1 : text(k) == ">" ? -1 : text(k) == ">>" ? -2 : 0;
          if (text(k) == ";" || text(k) == "{" || depth <= 0) break;
        }
        if (k >= e || depth > 0 || text(k) == ";" || text(k) == "{") return std::nullopt;
        ++k;
      }
    } else if ((tok.text == "*" || tok.text == "&" || tok.text == "&&") && names > 0) {
      ++k;
    } else if (tok.text == "::" && names == 0) {
      ++k;
    } else {
      break;
    }
  }
  if (names < 2 || (k < e && !one_of(text(k), {"=", ",", "[", "{", "("}))) return std::nullopt;
  std::vector<Declarator> out;
  std::size_t name = last;
  while (true) {
    while (text(k) == "[" && k < e) k = after(k);
    Declarator d{name, k, k};
    if (text(k) == "=" && k < e) {
      d.init_begin = k + 1;
      d.init_end = k = operand_end(k + 1, e);
    } else if ((text(k) == "{" || text(k) == "(") && k < e) {
      d.init_begin = k + 1;
      d.init_end = after(k) - 1;
      k = after(k);
    }
    out.push_back(d);
    if (k >= e || text(k) != ",") break;
    ++k;
    while (k < e && (text(k) == "*" || text(k) == "&")) ++k;
    if (k >= e || !t_[k].ident) break;
    name = k++;
  }
  return out;
}

void FunctionCheck::declare(const std::vector<Declarator>& ds, bool shared) {
  for (const auto& d : ds) {
    const std::string key = fmt::format("{}@{}", t_[d.name].text, d.name);
    scopes_.back()[t_[d.name].text] = key;
    if (shared) {
      shared_.insert(key);
      continue;
    }
    const bool initialised = d.init_end > d.init_begin;
    if (!initialised) continue;
    const bool uncertain = innermost_divergent(0) != nullptr;
    if (uncertain || depends_on_thread(d.init_begin, d.init_end)) changed_ |= tainted_.insert(key).second;
    Assignment a{key, {}, false, uncertain};
    reads(d.init_begin, d.init_end, false, a.value);
    assignments_.push_back(std::move(a));
  }
}

// The end of an assignment's right-hand side: the first `,` `;` or unmatched closer.
std::size_t FunctionCheck::operand_end(std::size_t k, std::size_t e) const {
  while (k < e) {
    const std::string& s = t_[k].text;
    if (s == "," || s == ";" || s == ")" || s == "]" || s == "}") return k;
    k = s == "(" || s == "[" || s == "{" ? after(k) : k + 1;
  }
  return std::min(k, e);
}

// The variable an assignment at `op` writes: `x =`, `x[i] =`, `x.y =`; npos for `*p =` and the like.
std::size_t FunctionCheck::assigned_name(std::size_t op, bool& direct) const {
  direct = true;
  std::size_t j = op;
  while (j > 0) {
    const std::string& s = t_[j - 1].text;
    if (s == "]" && partner_[j - 1] != npos) {
      j = partner_[j - 1];
      direct = false;
    } else if (t_[j - 1].ident && j >= 2 && (t_[j - 2].text == "." || t_[j - 2].text == "->")) {
      j -= 2;
      direct = false;
    } else {
      break;
    }
  }
  return j > 0 && t_[j - 1].ident && !statement_keyword(t_[j - 1].text) ? j - 1 : npos;
}

// The key of the variable an assignment writes, or "" for one that carries no thread dependence:
// a __shared__ variable, or memory written through a parameter (keys[i] = ...), not the pointer.
std::string FunctionCheck::assigned_key(std::size_t name, bool direct) const {
  const std::string key = resolve(t_[name].text);
  if (shared_.count(key) || (!direct && key.find('@') == std::string::npos)) return {};
  return key;
}

void FunctionCheck::mark(std::size_t name, bool direct, bool value) {
  if (!value) return;
  if (const std::string key = assigned_key(name, direct); !key.empty()) changed_ |= tainted_.insert(key).second;
}

void FunctionCheck::assignments(std::size_t b, std::size_t e) {
  const bool under_divergence = innermost_divergent(0) != nullptr;
  auto record = [&](std::size_t name, bool direct, Assignment a) {
    if (a.variable = assigned_key(name, direct); !a.variable.empty()) assignments_.push_back(std::move(a));
  };
  for (std::size_t k = b; k < e;) {
    if (lambda_brace(k)) {
      k = after(k);
      continue;
    }
    const std::string& s = t_[k].text;
    bool direct = true;
    if (assignment_op(s)) {
      const std::size_t end = operand_end(k + 1, e);
      if (const std::size_t name = assigned_name(k, direct); name != npos) {
        mark(name, direct, under_divergence || depends_on_thread(k + 1, end));
        Assignment a{{}, {}, s != "=", under_divergence};
        reads(k + 1, end, false, a.value);
        record(name, direct, std::move(a));
      }
    } else if ((s == "++" || s == "--") && under_divergence) {
      for (const std::size_t name : {k - 1, k + 1})
        if (name >= b && name < e && t_[name].ident) {
          mark(name, true, true);
          record(name, true, Assignment{{}, {}, true, true});
        }
    }
    ++k;
  }
}

// What [b, e) reads that depends on the thread. Subscripts read memory: the value found there may
// be the same for every thread even at a thread's own index. Block collectives are uniform; warp
// collectives and shuffles give what some other thread holds.
void FunctionCheck::reads(std::size_t b, std::size_t e, bool through_memory, Reads& out) const {
  for (std::size_t k = b; k < e && k < t_.size();) {
    if (lambda_brace(k)) {
      k = after(k);
      continue;
    }
    const Token& tok = t_[k];
    if (tok.text == "[") {
      const std::size_t close = std::min(partner_[k] == npos ? e : partner_[k], e);
      reads(k + 1, close, true, out);
      k = close + 1;
      continue;
    }
    const bool member = k > 0 && (t_[k - 1].text == "." || t_[k - 1].text == "->");
    if (tok.ident && !member && text(k + 1) == "(" && collective(tok.text) != Collective::none) {
      const std::size_t close = std::min(after(k + 1), e);
      if (collective(tok.text) == Collective::warp) reads(k + 2, close > 0 ? close - 1 : close, true, out);
      k = close;
      continue;
    }
    if (tok.ident && !member) {
      if (thread_index(tok.text))
        out.direct = std::max<int>(out.direct, through_memory ? maybe : sure);
      else if (atomic_result(tok.text))
        out.direct = std::max<int>(out.direct, maybe);
      else if (const std::string key = resolve(tok.text); tainted_.count(key))
        out.variables.emplace_back(key, through_memory);
    }
    ++k;
  }
}

int FunctionCheck::level(const Reads& r) const {
  int l = r.direct;
  for (const auto& [key, through_memory] : r.variables)
    l = std::max<int>(l, !through_memory && sure_.count(key) ? sure : maybe);
  return l;
}

int FunctionCheck::level(std::size_t b, std::size_t e) const {
  Reads r;
  reads(b, e, false, r);
  return level(r);
}

// A tainted local variable is surely thread-dependent unless one of its assignments may leave it the
// same for every thread: one under a thread-dependent condition, or a plain one of a value that is
// not surely thread-dependent itself. Parameters and globals start uniform, so they never are. The
// largest such set: start from every local and drop the doubtful until nothing changes.
void FunctionCheck::settle_sure_variables() {
  sure_.clear();
  for (const auto& key : tainted_)
    if (key.find('@') != std::string::npos) sure_.insert(key);
  for (bool dropped = true; dropped;) {
    dropped = false;
    for (const auto& a : assignments_)
      if (sure_.count(a.variable) && (a.uncertain || (!a.compound && level(a.value) < sure))) {
        sure_.erase(a.variable);
        dropped = true;
      }
  }
}

std::string FunctionCheck::resolve(const std::string& name) const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
    if (auto found = it->find(name); found != it->end()) return found->second;
  return name;  // a parameter or a global
}

const Context* FunctionCheck::outermost_divergent() const {
  for (const auto& c : stack_)
    if (c.divergent) return &c;
  return nullptr;
}

// The outermost if, else or switch whose condition is surely thread-dependent: some threads take it
// and some do not. A loop's condition proves nothing: its trip count may still be the same for all.
const Context* FunctionCheck::outermost_proof() const {
  for (const auto& c : stack_)
    if (proves(&c)) return &c;
  return nullptr;
}

const Context* FunctionCheck::innermost_divergent(std::size_t from) const {
  for (std::size_t k = stack_.size(); k > from; --k)
    if (stack_[k - 1].divergent) return &stack_[k - 1];
  return nullptr;
}

// ---- findings

void FunctionCheck::report(std::size_t line_token, std::size_t barrier, const char* kind, const std::string& condition,
                           const std::string& summary, const std::string& word, bool proven) {
  BarrierFinding f;
  f.line = t_[line_token].line;
  f.kernel = f_.name;
  f.in_kernel = f_.kernel;
  f.barrier = barrier_text(barrier);
  f.kind = kind;
  f.condition = condition;
  f.summary = summary;
  f.message = lesson(kind, opencl_barrier(t_[barrier].text), word);
  f.proven = proven;
  findings_.push_back(std::move(f));
}

void FunctionCheck::check_barrier(std::size_t k) {
  const Context* proof = outermost_proof();
  const Context* c = proof ? proof : outermost_divergent();
  if (!c) return;
  const char* word = c->kind == Construct::loop ? "" : c->kind == Construct::switch_ ? "switch" : "if";
  report(k, k, c->kind == Construct::loop ? kLoop : kCondition, c->condition,
         fmt::format("{} {}", barrier_text(k), c->phrase), word, proof != nullptr);
}

void FunctionCheck::finish_loop(const Context& c) {
  if (c.exit == npos) return;
  const bool is_break = t_[c.exit].text == "break";
  // A break skips every barrier of the loop after it and in later iterations; a continue only
  // those after it in the body.
  for (std::size_t b : barriers_) {
    if (b < c.body_begin || b >= c.body_end || (!is_break && b < c.exit)) continue;
    report(c.exit, b, kLoop, c.exit_condition,
           fmt::format("`{}` {} leaves the loop before the {} at line {}", t_[c.exit].text, c.exit_phrase,
                       barrier_text(b), t_[b].line),
           t_[c.exit].text, c.exit_proven);
    return;
  }
}

void FunctionCheck::finish_returns() {
  for (const auto& r : returns_) {
    auto later = std::upper_bound(barriers_.begin(), barriers_.end(), r.token);
    std::size_t b = later == barriers_.end() ? npos : *later;
    for (auto it = r.loops.rbegin(); b == npos && it != r.loops.rend(); ++it)  // reached again next iteration
      for (std::size_t candidate : barriers_)
        if (candidate >= it->first && candidate < it->second) {
          b = candidate;
          break;
        }
    if (b == npos) continue;
    report(r.token, b, kReturn, r.condition,
           fmt::format("`return` {} comes before the {} at line {}", r.phrase, barrier_text(b), t_[b].line), "return",
           r.proven);
  }
}

}  // namespace

std::vector<BarrierFinding> find_divergent_barriers(const std::string& source) {
  const std::string code = blank_comments(source, Literals::blank);
  const std::vector<Token> tokens = tokenize(code);
  const std::vector<std::size_t> partner = match_brackets(tokens);
  std::vector<BarrierFinding> out;
  for (const auto& f : find_functions(tokens, partner)) {
    auto found = FunctionCheck(tokens, partner, code, f).run();
    out.insert(out.end(), found.begin(), found.end());
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.line < b.line; });
  return out;
}

namespace {

// The words that make a function one whose races and barriers the sanitizer gate should see.
bool shared_or_barrier_word(const std::vector<Token>& t, std::size_t k) {
  const std::string& s = t[k].text;
  if (barrier_name(s) || one_of(s, {"__shared__", "__local", "__syncwarp", "__barrier_sync", "asm", "__asm__", "__asm",
                                    "this_thread_block", "__pipeline_wait_prior", "memcpy_async"}))
    return true;
  // Cooperative groups: block.sync(), cg::sync(block).
  return s == "sync" && k > 0 && (t[k - 1].text == "." || t[k - 1].text == "->" || t[k - 1].text == "::");
}

bool identifier_like(const std::string& s) {
  return !s.empty() && ident_start(s[0]) && std::all_of(s.begin(), s.end(), is_identifier_char);
}

// The identifiers of `text`, in order.
std::vector<std::string> identifiers_in(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < text.size();) {
    if (!ident_start(text[i]) || (i > 0 && is_identifier_char(text[i - 1]))) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && is_identifier_char(text[end])) ++end;
    out.push_back(text.substr(i, end - i));
    i = end;
  }
  return out;
}

// Whether the words appear outside the function bodies: in directives, which the tokens skip, and at
// file scope. `##` counts too: token pasting can spell any of them.
bool words_outside(std::string code, const std::vector<Token>& t, const std::vector<FunctionBody>& functions) {
  for (const auto& f : functions) blank_range(code, t[f.open].begin, t[f.close].end);
  if (code.find("##") != std::string::npos) return true;
  for (const auto& w : identifiers_in(code))
    if (const std::vector<Token> word{Token{w, 0, 0, 0, true}}; shared_or_barrier_word(word, 0)) return true;
  return false;
}

// Kernels a macro defines by pasting their names (`void gaussian_rows_r##R(...)` in a #define that
// says __kernel or __global__): one summary per pasted name, under the part before `##`, which the
// host code's literal for the name's start then reaches, with every name the macro's body mentions.
std::vector<FunctionSummary> macro_kernels(const std::string& code) {
  std::vector<FunctionSummary> out;
  std::size_t i = 0;
  while (i < code.size()) {
    std::size_t end = std::min(code.find('\n', i), code.size());
    while (end < code.size() && end > i && code[end - 1] == '\\') end = std::min(code.find('\n', end + 1), code.size());
    const std::string line = code.substr(i, end - i);
    i = end + 1;
    const std::size_t hash = line.find_first_not_of(" \t");
    if (hash == std::string::npos || line[hash] != '#') continue;
    const std::vector<std::string> words = identifiers_in(line);
    if (words.empty() || words[0] != "define" || std::none_of(words.begin(), words.end(), [](const std::string& w) {
          return one_of(w, {"__kernel", "kernel", "__global__"});
        }))
      continue;
    static const std::regex pasted(R"(([A-Za-z_]\w*)\s*##)");
    for (auto it = std::sregex_iterator(line.begin(), line.end(), pasted); it != std::sregex_iterator(); ++it) {
      FunctionSummary f;
      f.name = (*it)[1];
      f.kernel = true;
      f.names.insert(words.begin(), words.end());
      for (const auto& w : words) {
        const std::vector<Token> word{Token{w, 0, 0, 0, true}};
        f.shared_or_barrier |= shared_or_barrier_word(word, 0);
      }
      out.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace

SourceSummary summarize_functions(const std::string& source) {
  const std::string code = blank_comments(source, Literals::blank);
  const std::vector<Token> t = tokenize(code);
  const std::vector<std::size_t> partner = match_brackets(t);
  const std::vector<FunctionBody> functions = find_functions(t, partner);
  SourceSummary out;
  for (const auto& f : functions) {
    FunctionSummary s;
    s.name = f.name;
    s.kernel = f.kernel;
    for (std::size_t k = f.open + 1; k < f.close; ++k) {
      if (t[k].ident) s.names.insert(t[k].text);
      s.shared_or_barrier |= t[k].ident && shared_or_barrier_word(t, k);
      if (t[k].text.size() >= 2 && t[k].text.front() == '"' && t[k].end <= source.size()) {
        // The blanked code keeps only the quotes: the literal's text is the source's.
        const std::string literal = source.substr(t[k].begin + 1, t[k].end - t[k].begin - 2);
        if (identifier_like(literal)) s.literals.insert(literal);
      }
    }
    out.functions.push_back(std::move(s));
  }
  for (auto& f : macro_kernels(code)) out.functions.push_back(std::move(f));
  out.shared_or_barrier_elsewhere = words_outside(code, t, functions);
  return out;
}

std::string describe(const BarrierFinding& f) {
  return fmt::format("{} in {} {} — {}", f.summary, f.in_kernel ? "kernel" : "function", f.kernel, f.message);
}

}  // namespace gpulab::cli
