#include "hello_lab.hpp"

#include <fmt/format.h>

#include <cstring>

#include "hello_reference.hpp"
#include "lab_driver.hpp"

namespace gpulab {
namespace {

// A case is either a fixed text with its offsets, or `length` random characters with the offsets
// that turn them into other random characters: printable ones, or (`characters = "any"`) any byte
// from NUL to 0xFF, with results below 0xFF (the outputs' poison). Any-byte offsets are ints that
// also carry whole turns of 256 (a sum beyond a char wraps, as the contract's char store does): a
// saturating store or an offset cut to a char's range before the add is wrong there.
void make_input(const Case& c, Rng& rng, std::vector<char>& text, std::vector<int>& offsets) {
  if (c.params.contains("text")) {
    const std::string fixed = c.params.at("text").get<std::string>();
    text.assign(fixed.begin(), fixed.end());
    offsets = c.params.at("offsets").get<std::vector<int>>();
    if (offsets.size() != text.size())
      throw std::invalid_argument(fmt::format("case '{}': text and offsets differ in length", c.name));
    return;
  }
  const auto length = static_cast<std::size_t>(case_int(c, "length"));
  const std::string characters = c.params.value("characters", "printable");
  if (characters != "printable" && characters != "any")
    throw std::invalid_argument(fmt::format("case '{}': characters is \"printable\" or \"any\"", c.name));
  const bool any = characters == "any";
  text.resize(length);
  offsets.resize(length);
  for (std::size_t i = 0; i < length; ++i) {
    const auto from = static_cast<char>(any ? rng.integer(0, 0xFF) : rng.integer(' ', '~'));
    const auto to = static_cast<char>(any ? rng.integer(0, 0xFE) : rng.integer(' ', '~'));
    text[i] = from;
    const int turns = any ? static_cast<int>(rng.integer(-2, 2)) : 0;
    offsets[i] = to - from + 256 * turns;  // the bytes as chars: text[i] + offsets[i] is `to` in a char
  }
}

class HelloDriver final : public LabDriver {
 public:
  CaseResult run(const RunContext& ctx, const Task& task, const Case& c) override {
    Rng rng = ctx.rng(task, c);
    std::vector<char> text;
    std::vector<int> offsets;
    make_input(c, rng, text, offsets);
    const std::vector<char> expected = reference::hello(text, offsets);
    const auto launch = labs::bind_hello(ctx.device, task.function);
    std::vector<char> result(text.size());

    Launchable l;
    // Host memory, one set: the lab has no timing case, and guards belong to device buffers.
    l.prepare = [&](int) { std::memset(result.data(), kPoisonByte, result.size()); };
    l.launch = [&](int) { launch(text.data(), offsets.data(), result.data(), static_cast<int>(text.size())); };
    l.check = [&](int) { return compare_exact<char>(expected, result); };
    l.work = static_cast<double>(text.size() * (2 + sizeof(int)));
    l.kernel_required = true;
    return execute(ctx, c, l);
  }
};

}  // namespace

std::unique_ptr<LabDriver> make_lab_driver() { return std::make_unique<HelloDriver>(); }

}  // namespace gpulab
