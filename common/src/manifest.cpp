#include "gpulab/manifest.hpp"

#include <fmt/format.h>

#include <toml++/toml.h>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>
#include <set>

#include "gpulab/metrics.hpp"
#include "gpulab/random.hpp"

namespace gpulab {

const char* to_string(DeviceClass c) { return c == DeviceClass::gpu ? "gpu" : "cpu"; }

bool Case::runs_on(DeviceClass c) const {
  return devices.empty() || std::find(devices.begin(), devices.end(), c) != devices.end();
}

bool Case::applies_to(const std::string& task) const {
  return tasks.empty() || std::find(tasks.begin(), tasks.end(), task) != tasks.end();
}

std::vector<const Case*> Manifest::cases_for(DeviceClass c, const std::string& task) const {
  std::vector<const Case*> out;
  for (const auto& k : cases)
    if (k.runs_on(c) && k.applies_to(task)) out.push_back(&k);
  return out;
}

const Signature* Manifest::find_signature(const std::string& signature_name) const {
  for (const auto& s : signatures)
    if (s.name == signature_name) return &s;
  return nullptr;
}

const Task* Manifest::find_task(const std::string& task_name) const {
  for (const auto& t : tasks)
    if (t.name == task_name) return &t;
  return nullptr;
}

std::vector<const Case*> Manifest::cases_for(DeviceClass c) const {
  std::vector<const Case*> out;
  for (const auto& k : cases)
    if (k.runs_on(c)) out.push_back(&k);
  return out;
}

std::vector<std::string> Manifest::files_with_extension(const std::string& backend,
                                                        const std::string& extension) const {
  std::vector<std::string> out;
  auto it = files.find(backend);
  if (it == files.end()) return out;
  for (const auto& f : it->second)
    if (f.size() >= extension.size() && f.compare(f.size() - extension.size(), extension.size(), extension) == 0)
      out.push_back(f);
  return out;
}

bool Manifest::has_hidden_cases() const {
  return std::any_of(cases.begin(), cases.end(), [](const Case& c) { return c.hidden; });
}

std::optional<double> Manifest::case_size(const Case& c) const {
  std::set<std::string> dims;
  for (const auto& r : random) dims.insert(r.dims.begin(), r.dims.end());
  std::optional<double> size;
  for (const auto& d : dims)
    if (c.params.contains(d) && c.params[d].is_number_integer()) size = size.value_or(1.0) * c.params[d].get<double>();
  return size;
}

Manifest without_hidden_cases(Manifest manifest) {
  std::erase_if(manifest.cases, [](const Case& c) { return c.hidden; });
  return manifest;
}

std::vector<RandomCases::Role> RandomCases::roles() const {
  if (power_of_two) return {Role::tiny, Role::block_multiple, Role::many_multiple};
  return {Role::tiny, Role::block_multiple, Role::block_other, Role::many_multiple, Role::many_other};
}

int RandomCases::fewest_cases() const {
  int fewest = static_cast<int>(roles().size()) + (dims.size() > 1 ? 1 : 0);  // + the square shape
  for (const auto& [key, options] : values) fewest = std::max(fewest, static_cast<int>(options.size()));
  return fewest;
}

namespace {

bool divides_none(std::int64_t size, const std::vector<std::int64_t>& tiles) {
  return std::none_of(tiles.begin(), tiles.end(), [size](std::int64_t t) { return size % t == 0; });
}

int log2_floor(std::int64_t x) {
  int e = 0;
  while ((std::int64_t{2} << e) <= x) ++e;
  return e;
}

// Uniform in log space over [lo, hi]: sizes of every order of magnitude between the random cases'
// largest and the timing size are equally likely.
std::int64_t log_uniform(Rng& rng, std::int64_t lo, std::int64_t hi) {
  if (hi <= lo) return lo;
  const double u = static_cast<double>(rng.next() >> 11) * 0x1.0p-53;
  const double x = std::exp(std::log(static_cast<double>(lo)) +
                            u * (std::log(static_cast<double>(hi) + 1.0) - std::log(static_cast<double>(lo))));
  return std::clamp(static_cast<std::int64_t>(x), lo, hi);
}

// A size of many blocks that one tile (not the largest) divides and twice that tile does not, for
// each such tile as often as a multiple of every tile: the tile times an odd number (16 mod 32 for a
// tile of 16), so a kernel right only where its larger tiles divide the size fails too, and not only
// one right only for multiples of all. 0: a multiple of every tile this time, or no such size in
// (2 x the largest tile, max].
std::int64_t odd_multiple_of_a_tile(const RandomCases& r, Rng& rng) {
  const auto pick = static_cast<std::size_t>(rng.integer(0, static_cast<std::int64_t>(r.tiles.size()) - 1));
  if (pick + 1 == r.tiles.size()) return 0;
  const std::int64_t tile = r.tiles[pick];
  const std::int64_t low = 2 * r.tiles.back() / tile + 1, high = r.max / tile;
  if (high < low) return 0;
  std::int64_t factor = rng.integer(low, high);
  if (factor % 2 == 0) factor += factor + 1 <= high ? 1 : -1;
  return factor >= low && factor % 2 == 1 ? tile * factor : 0;
}

// One size in a role. Tiny sizes lie below the smallest tile (so divide by none); sizes of about one
// block lie around the largest tile; sizes of many blocks beyond twice it. A power-of-two block draws
// powers of two only. load_manifest checked that every role has sizes within [min, max].
std::int64_t draw_size(const RandomCases& r, RandomCases::Role role, Rng& rng) {
  using Role = RandomCases::Role;
  const std::int64_t smallest = r.tiles.front(), largest = r.tiles.back();
  if (r.power_of_two) {
    const int low = log2_floor(r.min - 1) + (r.min > 1 ? 1 : 0), top = log2_floor(largest);
    if (role == Role::tiny) return std::int64_t{1} << rng.integer(low, std::max(low, log2_floor(smallest) - 1));
    if (role == Role::block_multiple) return std::int64_t{1} << rng.integer(top - 1, top + 1);
    return std::int64_t{1} << rng.integer(top + 2, log2_floor(r.max));
  }
  const std::int64_t lcm = std::accumulate(r.tiles.begin(), r.tiles.end(), std::int64_t{1},
                                           [](std::int64_t a, std::int64_t b) { return std::lcm(a, b); });
  switch (role) {
    case Role::tiny:  // 1 (or min) a third of the time: the smallest shape is where bounds checks go wrong
      return rng.integer(0, 2) == 0 ? r.min : rng.integer(r.min, smallest - 1);
    case Role::block_multiple: return lcm * rng.integer(1, std::max<std::int64_t>(1, 2 * largest / lcm));
    case Role::block_other:
      for (int attempt = 0; attempt < 256; ++attempt) {
        const std::int64_t size = largest + rng.integer(-(smallest - 1), smallest - 1);
        if (size >= r.min && divides_none(size, r.tiles)) return size;
      }
      break;
    case Role::many_multiple:
      if (const std::int64_t size = odd_multiple_of_a_tile(r, rng); size > 0) return size;
      return lcm * rng.integer(2 * largest / lcm + 1, r.max / lcm);
    case Role::many_other: {
      const std::int64_t first = 2 * largest + 1, span = r.max - first + 1;
      const std::int64_t start = rng.integer(first, r.max);
      for (std::int64_t step = 0; step < span; ++step)
        if (const std::int64_t size = first + (start - first + step) % span; divides_none(size, r.tiles)) return size;
      break;
    }
  }
  throw ManifestError(fmt::format("[[random]] of {}: no size in [{}, {}] for every role; widen 'max'",
                                  fmt::join(r.dims, ", "), r.min, r.max));
}

// One batch of a [[random]] block: `count` cases whose sizes run through every role in every
// dimension (each dimension shifted, so shapes are non-square), plus one square case of a cheap
// role, and whose values run through each list in a seeded order.
std::vector<Case> draw_batch(const RandomCases& r, int count, Rng& rng, bool hidden, int& number) {
  using Role = RandomCases::Role;
  const auto roles = r.roles();
  const int role_count = static_cast<int>(roles.size());
  const int phase = static_cast<int>(rng.integer(0, role_count - 1));
  const int square = r.dims.size() > 1 ? static_cast<int>(rng.integer(0, count - 1)) : -1;
  std::vector<std::vector<std::size_t>> orders;  // per values list, a seeded permutation
  for (const auto& [key, options] : r.values) {
    std::vector<std::size_t> order(options.size());
    std::iota(order.begin(), order.end(), 0);
    for (std::size_t i = order.size(); i > 1; --i)
      std::swap(order[i - 1], order[rng.integer(0, static_cast<std::int64_t>(i) - 1)]);
    orders.push_back(std::move(order));
  }
  std::vector<Case> out;
  for (int i = 0, shaped = 0; i < count; ++i) {
    Case c;
    c.hidden = hidden;
    c.tasks = r.tasks;
    c.params = nlohmann::json::object();
    std::vector<std::string> sizes;
    const Role square_role = r.power_of_two ? Role::block_multiple : roles[rng.integer(0, 2)];  // tiny or one block
    const std::int64_t square_size = i == square ? draw_size(r, square_role, rng) : 0;
    for (std::size_t d = 0; d < r.dims.size(); ++d) {
      const std::int64_t size =
          i == square ? square_size : draw_size(r, roles[(shaped + phase + 2 * static_cast<int>(d)) % role_count], rng);
      c.params[r.dims[d]] = size;
      sizes.push_back(std::to_string(size));
    }
    if (i != square) ++shaped;
    std::string name = fmt::format("{}random {}: {}", hidden ? "hidden " : "", ++number, fmt::join(sizes, "x"));
    for (std::size_t v = 0; v < r.values.size(); ++v) {
      const auto& [key, options] = r.values[v];
      const nlohmann::json& value = options[orders[v][static_cast<std::size_t>(i) % options.size()]];
      c.params[key] = value;
      name += fmt::format(" {}={}", key, value.is_string() ? value.get<std::string>() : value.dump());
    }
    c.name = std::move(name);
    out.push_back(std::move(c));
  }
  return out;
}

// The exponents j whose residue class 2^j x an odd number every run reaches (j = 0: odd sizes), up to
// twice the largest tile: a kernel wrong only where n mod 2^(j+1) = 2^j (the last element dropped
// when n = 16 mod 32, a level skipped when n = 64 mod 512) is wrong for every such size, whichever
// tiles the lab names. Only those with a multiple in [min, max].
std::vector<int> residue_exponents(const RandomCases& r) {
  std::vector<int> out;
  if (r.power_of_two) return out;
  for (int j = 0; j <= log2_floor(r.tiles.back()) + 1; ++j)
    if (const std::int64_t power = std::int64_t{1} << j; power <= r.max && r.max / power >= (r.min + power - 1) / power)
      out.push_back(j);
  return out;
}

// 2^j times an odd number in [min, max], the odd factor uniform in log space: small sizes as likely as
// large ones, so a run's dozen such cases stay cheap.
std::int64_t odd_multiple_of_power(const RandomCases& r, int j, Rng& rng) {
  const std::int64_t power = std::int64_t{1} << j;
  const std::int64_t low = std::max<std::int64_t>(1, (r.min + power - 1) / power), high = r.max / power;
  std::int64_t factor = log_uniform(rng, low, high);
  if (factor % 2 == 0) factor += factor + 1 <= high ? 1 : -1;
  if (factor < low || factor % 2 == 0) factor = low;  // [low, high] holds one even number only
  return power * factor;
}

// The cases that give every residue exponent of `r` one size in every dimension (in a seeded order),
// with the block's values in a seeded order. Visible: the contract's size classes are
// no secret, and grading draws them from the same stream.
std::vector<Case> residue_cases(const RandomCases& r, Rng& rng, int& number) {
  std::vector<int> exponents = residue_exponents(r);
  std::vector<Case> out;
  if (exponents.empty()) return out;
  for (std::size_t i = exponents.size(); i > 1; --i)
    std::swap(exponents[i - 1], exponents[rng.integer(0, static_cast<std::int64_t>(i) - 1)]);
  // Every dimension runs through every exponent, each from its own place in the order.
  const std::size_t dims = r.dims.size(), count = exponents.size(), stride = std::max<std::size_t>(count / dims, 1);
  std::vector<std::size_t> shift;  // per values list, where this block's values start
  for (const auto& entry : r.values)
    shift.push_back(static_cast<std::size_t>(rng.integer(0, static_cast<std::int64_t>(entry.second.size()) - 1)));
  for (std::size_t i = 0; i < count; ++i) {
    Case c;
    c.tasks = r.tasks;
    c.params = nlohmann::json::object();
    std::vector<std::string> sizes, classes;
    for (std::size_t d = 0; d < dims; ++d) {
      const int j = exponents[(i + d * stride) % count];
      const std::int64_t size = odd_multiple_of_power(r, j, rng);
      c.params[r.dims[d]] = size;
      sizes.push_back(std::to_string(size));
      classes.push_back(j == 0 ? "odd" : fmt::format("{} x odd", std::int64_t{1} << j));
    }
    std::string name = fmt::format("random {}: {} ({})", ++number, fmt::join(sizes, "x"), fmt::join(classes, ", "));
    for (std::size_t v = 0; v < r.values.size(); ++v) {
      const auto& [key, options] = r.values[v];
      const nlohmann::json& value = options[(shift[v] + i) % options.size()];
      c.params[key] = value;
      name += fmt::format(" {}={}", key, value.is_string() ? value.get<std::string>() : value.dump());
    }
    c.name = std::move(name);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

int RandomCases::residue_count() const { return static_cast<int>(residue_exponents(*this).size()); }

std::vector<Case> draw_random_cases(const Manifest& manifest, std::uint64_t run_seed, bool hidden) {
  std::vector<Case> out;
  int visible_number = 0, hidden_number = 0;
  for (std::size_t b = 0; b < manifest.random.size(); ++b) {
    const RandomCases& r = manifest.random[b];
    // Hidden cases come from a stream of their own: the visible ones tell nothing about them.
    Rng visible(derive_seed(run_seed, manifest.id, "random cases", fmt::format("block {} visible", b)));
    for (auto& c : draw_batch(r, r.count, visible, false, visible_number)) out.push_back(std::move(c));
    if (!hidden || r.hidden == 0) continue;
    Rng secret(derive_seed(run_seed, manifest.id, "random cases", fmt::format("block {} hidden", b)));
    for (auto& c : draw_batch(r, r.hidden, secret, true, hidden_number)) out.push_back(std::move(c));
  }
  for (std::size_t b = 0; b < manifest.random.size(); ++b) {
    Rng residues(derive_seed(run_seed, manifest.id, "random cases", fmt::format("block {} residues", b)));
    for (auto& c : residue_cases(manifest.random[b], residues, visible_number)) out.push_back(std::move(c));
  }
  return out;
}

namespace {

// A timing case of the device class that times some of a [[random]] block's tasks: the large cases
// drawn for those tasks reach its size in every dimension of the block.
struct LargeTarget {
  const Case* timing = nullptr;
  std::vector<std::string> tasks;   // the block's tasks the timing case times
  std::vector<std::int64_t> sizes;  // the timing size of each of the block's dims
};

std::vector<std::string> task_names(const Manifest& m, const std::vector<std::string>& listed) {
  if (!listed.empty()) return listed;
  std::vector<std::string> all;
  for (const auto& t : m.tasks) all.push_back(t.name);
  return all;
}

std::vector<LargeTarget> large_targets(const Manifest& m, const RandomCases& r, DeviceClass device) {
  std::vector<LargeTarget> out;
  for (const auto& c : m.cases) {
    if (!c.timing || !c.runs_on(device)) continue;
    LargeTarget target{&c, {}, {}};
    for (const auto& task : task_names(m, r.tasks))
      if (c.applies_to(task)) target.tasks.push_back(task);
    bool beyond = false;  // a size other than the timing case's own lies beyond `max`
    for (const auto& d : r.dims) {
      if (!c.params.contains(d) || !c.params[d].is_number_integer()) target.tasks.clear();
      if (target.tasks.empty()) break;
      target.sizes.push_back(c.params[d].get<std::int64_t>());
      beyond = beyond || (r.power_of_two ? target.sizes.back() / 2 : target.sizes.back() - 1) > r.max;
    }
    if (!target.tasks.empty() && beyond) out.push_back(std::move(target));
  }
  return out;
}

enum class LargeRole { near_timing, multiple, near_power };

// Just below the timing size `top` and above `max`, dividing by no tile (a power of two block: half
// the timing size, the largest power below it).
std::int64_t near_timing_size(const RandomCases& r, std::int64_t top, Rng& rng) {
  if (r.power_of_two) return std::max(top / 2, std::int64_t{1});
  const std::int64_t reach = std::max<std::int64_t>(r.tiles.front() - 1, 1);
  for (int attempt = 0; attempt < 256; ++attempt) {
    const std::int64_t size = top - rng.integer(1, reach);
    if (size > r.max && divides_none(size, r.tiles)) return size;
  }
  return top;
}

// One size in (max, top] in a large role; a role with no size there falls back to near_timing.
std::int64_t draw_large_size(const RandomCases& r, LargeRole role, std::int64_t top, Rng& rng) {
  if (top <= r.max) return std::min(top, draw_size(r, RandomCases::Role::many_other, rng));
  if (r.power_of_two) {
    const int low = log2_floor(r.max) + 1, high = log2_floor(top) - 1;
    if (role == LargeRole::near_timing || low > high) return near_timing_size(r, top, rng);
    return std::int64_t{1} << rng.integer(low, high);
  }
  const std::int64_t lcm = std::accumulate(r.tiles.begin(), r.tiles.end(), std::int64_t{1},
                                           [](std::int64_t a, std::int64_t b) { return std::lcm(a, b); });
  const std::int64_t reach = std::max<std::int64_t>(r.tiles.front() - 1, 1);
  if (role == LargeRole::multiple && r.max / lcm + 1 <= top / lcm)
    return lcm * log_uniform(rng, r.max / lcm + 1, top / lcm);
  if (role == LargeRole::near_power) {
    const int low = log2_floor(r.max + reach) + 1, high = log2_floor(top - reach - 1);
    for (int attempt = 0; low <= high && attempt < 256; ++attempt) {
      const std::int64_t power = std::int64_t{1} << rng.integer(low, high);
      const std::int64_t size = power + (rng.integer(0, 1) ? 1 : -1) * rng.integer(1, reach);
      if (size > r.max && size < top && divides_none(size, r.tiles)) return size;
    }
  }
  return near_timing_size(r, top, rng);
}

// A large or stress case of `target`'s tasks: its sizes, the value of each `values` list for the
// `i`th case, then a stress entry's parameters over them; named after all of them.
Case large_case(const RandomCases& r, const LargeTarget& target, const std::string& label,
                const std::vector<std::int64_t>& sizes, std::size_t i, const nlohmann::json* stress, bool hidden) {
  Case c;
  c.hidden = hidden;
  c.large = true;
  c.tasks = target.tasks;
  c.params = nlohmann::json::object();
  for (const auto& [key, options] : r.values) c.params[key] = options[i % options.size()];
  if (stress)
    for (const auto& [key, value] : stress->items()) c.params[key] = value;
  std::vector<std::string> shown, others;
  for (std::size_t d = 0; d < r.dims.size(); ++d) {
    c.params[r.dims[d]] = sizes[d];
    shown.push_back(std::to_string(sizes[d]));
  }
  for (const auto& [key, value] : c.params.items())
    if (std::find(r.dims.begin(), r.dims.end(), key) == r.dims.end())
      others.push_back(fmt::format("{}={}", key, value.is_string() ? value.get<std::string>() : value.dump()));
  c.name = fmt::format("{}{}: {}{}{}", hidden ? "hidden " : "", label, fmt::join(shown, "x"), others.empty() ? "" : " ",
                       fmt::join(others, " "));
  return c;
}

// The large and stress cases of one block for one timing case: every dimension just below its
// timing size (the largest shape with partial tiles), then, with several dimensions, each
// dimension in turn in each role; one case per stress entry.
void draw_large_for(const RandomCases& r, const LargeTarget& target, Rng& rng, bool hidden, int& large_number,
                    int& stress_number, std::vector<Case>& out) {
  static constexpr LargeRole kRoles[] = {LargeRole::near_timing, LargeRole::multiple, LargeRole::near_power};
  const int phase = static_cast<int>(rng.integer(0, 2));
  const std::size_t value_phase = static_cast<std::size_t>(rng.integer(0, 1 << 20));
  const std::size_t dims = r.dims.size();
  // Case i: with one dimension, role i; with more, case 0 all near the timing size, then rotations.
  auto role = [&](int i, std::size_t d) {
    if (dims == 1) return kRoles[(i + phase) % 3];
    return i == 0 ? LargeRole::near_timing : kRoles[(i + phase + static_cast<int>(d)) % 3];
  };
  const int count = hidden ? 1 : (dims == 1 ? 3 : 4), first = hidden ? 1 + phase : 0;
  for (int i = first; i < first + count; ++i) {
    std::vector<std::int64_t> sizes;
    for (std::size_t d = 0; d < dims; ++d) sizes.push_back(draw_large_size(r, role(i, d), target.sizes[d], rng));
    out.push_back(large_case(r, target, fmt::format("large {}", ++large_number), sizes,
                             value_phase + static_cast<std::size_t>(i), nullptr, hidden));
  }
  if (hidden) return;
  for (std::size_t j = 0; j < r.stress.size(); ++j) {
    std::vector<std::int64_t> sizes;
    for (std::size_t d = 0; d < dims; ++d) sizes.push_back(near_timing_size(r, target.sizes[d], rng));
    out.push_back(
        large_case(r, target, fmt::format("stress {}", ++stress_number), sizes, value_phase + j, &r.stress[j], false));
  }
}

// The timing cases with their `trim` applied: each trimmed size loses a seeded 0..N, and the case's
// name says the size this run times.
void trim_timing_cases(Manifest& manifest, std::uint64_t run_seed) {
  for (auto& c : manifest.cases) {
    if (!c.timing || c.trim.empty()) continue;
    Rng rng(derive_seed(run_seed, manifest.id, "timing trim", c.name));
    std::vector<std::string> shown;
    for (const auto& [key, most] : c.trim) {
      const std::int64_t size = c.params[key].get<std::int64_t>() - rng.integer(0, most);
      c.params[key] = size;
      shown.push_back(fmt::format("{}={}", key, size));
    }
    c.name += fmt::format(" ({} this run)", fmt::join(shown, ", "));
  }
}

}  // namespace

std::vector<Case> draw_large_cases(const Manifest& manifest, std::uint64_t run_seed, bool hidden, DeviceClass device) {
  std::vector<Case> out;
  int large_number = 0, stress_number = 0;
  for (std::size_t b = 0; b < manifest.random.size(); ++b) {
    const auto targets = large_targets(manifest, manifest.random[b], device);
    for (std::size_t t = 0; t < targets.size(); ++t) {
      Rng rng(derive_seed(run_seed, manifest.id, hidden ? "large cases hidden" : "large cases",
                          fmt::format("block {} timing {} {}", b, t, to_string(device))));
      draw_large_for(manifest.random[b], targets[t], rng, hidden, large_number, stress_number, out);
    }
  }
  return out;
}

Manifest with_random_cases(Manifest manifest, std::uint64_t run_seed, bool hidden, std::optional<DeviceClass> device) {
  auto drawn = draw_random_cases(manifest, run_seed, hidden);
  if (device) {
    auto large = draw_large_cases(manifest, run_seed, hidden, *device);
    drawn.insert(drawn.end(), std::make_move_iterator(large.begin()), std::make_move_iterator(large.end()));
    trim_timing_cases(manifest, run_seed);
  }
  const auto first_timing =
      std::find_if(manifest.cases.begin(), manifest.cases.end(), [](const Case& c) { return c.timing; });
  manifest.cases.insert(first_timing, std::make_move_iterator(drawn.begin()), std::make_move_iterator(drawn.end()));
  return manifest;
}

namespace {

// Reads one manifest, turning every problem into a ManifestError that names file, line and fix.
class Reader {
 public:
  explicit Reader(std::filesystem::path path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const toml::node* node, const std::string& problem) const {
    const int line = node ? static_cast<int>(node->source().begin.line) : 0;
    throw ManifestError(line > 0 ? fmt::format("{}:{}: {}", path_.string(), line, problem)
                                 : fmt::format("{}: {}", path_.string(), problem));
  }

  template <typename T>
  T required(const toml::table& t, std::string_view key, std::string_view what) const {
    const toml::node* node = t.get(key);
    if (!node) fail(&t, fmt::format("missing key '{}' ({})", key, what));
    auto value = node->value<T>();
    if (!value) fail(node, fmt::format("'{}' must be {}", key, what));
    return *value;
  }

  template <typename T>
  T optional(const toml::table& t, std::string_view key, T fallback, std::string_view what) const {
    const toml::node* node = t.get(key);
    if (!node) return fallback;
    auto value = node->value<T>();
    if (!value) fail(node, fmt::format("'{}' must be {}", key, what));
    return *value;
  }

  std::vector<std::string> strings(const toml::node& node, std::string_view key) const {
    const toml::array* array = node.as_array();
    if (!array) fail(&node, fmt::format("'{}' must be an array of strings, like [\"a\", \"b\"]", key));
    std::vector<std::string> out;
    for (const auto& item : *array) {
      auto s = item.value<std::string>();
      if (!s) fail(&item, fmt::format("'{}' must hold only strings", key));
      out.push_back(*s);
    }
    return out;
  }

  DeviceClass device_class(const toml::node& node) const {
    auto s = node.value<std::string>();
    if (s == "gpu") return DeviceClass::gpu;
    if (s == "cpu") return DeviceClass::cpu;
    fail(&node, "a device class must be \"gpu\" or \"cpu\"");
  }

  nlohmann::json to_json(const toml::node& node) const {
    if (auto v = node.value_exact<std::int64_t>()) return *v;
    if (auto v = node.value_exact<double>()) return *v;
    if (auto v = node.value_exact<bool>()) return *v;
    if (auto v = node.value_exact<std::string>()) return *v;
    if (const auto* array = node.as_array()) {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& item : *array) out.push_back(to_json(item));
      return out;
    }
    if (const auto* table = node.as_table()) {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& [k, v] : *table) out[std::string(k.str())] = to_json(v);
      return out;
    }
    fail(&node, "dates and times are not supported in a case");
  }

  std::vector<std::int64_t> integers(const toml::node& node, std::string_view key) const {
    const toml::array* array = node.as_array();
    if (!array || array->empty())
      fail(&node, fmt::format("'{}' must be a non-empty array of integers, like [16, 32]", key));
    std::vector<std::int64_t> out;
    for (const auto& item : *array) {
      auto v = item.value_exact<std::int64_t>();
      if (!v || *v < 1) fail(&item, fmt::format("'{}' must hold only positive integers", key));
      out.push_back(*v);
    }
    return out;
  }

  // One [[random]] block, checked so every run it draws covers what it promises.
  RandomCases random_cases(const toml::node& node, const Manifest& m) const {
    const toml::table* t = node.as_table();
    if (!t) fail(&node, "each [[random]] entry must be a table");
    RandomCases r;
    if (const toml::node* tasks = t->get("tasks")) r.tasks = strings(*tasks, "tasks");
    for (const auto& name : r.tasks)
      if (!m.find_task(name))
        fail(t->get("tasks"), fmt::format("[[random]] names task '{}', which the lab does not have", name));
    const toml::node* dims = t->get("dims");
    if (!dims) fail(t, "missing key 'dims' in [[random]]: the size parameters to draw, e.g. [\"rows\", \"cols\"]");
    r.dims = strings(*dims, "dims");
    if (r.dims.empty() || r.dims.size() > 3) fail(dims, "'dims' must name one to three size parameters");
    const toml::node* tiles = t->get("tiles");
    if (!tiles)
      fail(t, "missing key 'tiles' in [[random]]: the tile and block sizes of the lab's kernels, e.g. [16, 32]");
    r.tiles = integers(*tiles, "tiles");
    std::sort(r.tiles.begin(), r.tiles.end());
    r.min = optional<std::int64_t>(*t, "min", 1, "a positive integer");
    r.max = required<std::int64_t>(*t, "max", "the largest size to draw (keep the CPU reference fast)");
    r.power_of_two = optional<bool>(*t, "power_of_two", false, "true or false");
    r.count = static_cast<int>(required<std::int64_t>(*t, "count", "how many cases every run draws"));
    r.hidden = static_cast<int>(optional<std::int64_t>(*t, "hidden", 0, "how many more cases grading draws"));
    if (const toml::node* values = t->get("values")) {
      const toml::table* vt = values->as_table();
      if (!vt) fail(values, "'values' must be a table of lists, like { radius = [0, 1, 2] }");
      for (const auto& [key, list] : *vt) {
        const std::string k(key.str());
        const toml::array* array = list.as_array();
        if (!array || array->empty()) fail(&list, fmt::format("'values.{}' must be a non-empty array", k));
        std::vector<nlohmann::json> options;
        for (const auto& item : *array) options.push_back(to_json(item));
        r.values.emplace_back(k, std::move(options));
      }
    }
    if (const toml::node* stress = t->get("stress")) r.stress = stress_entries(*stress, r);
    check_random(r, *t);
    return r;
  }

  // `stress = [{ distribution = "equal" }, ...]`: parameter sets, none of them a size (sizes are drawn).
  std::vector<nlohmann::json> stress_entries(const toml::node& node, const RandomCases& r) const {
    const toml::array* array = node.as_array();
    if (!array || array->empty())
      fail(&node, "'stress' must be a non-empty array of tables, like [{ distribution = \"equal\" }]");
    std::vector<nlohmann::json> out;
    for (const auto& item : *array) {
      const toml::table* entry = item.as_table();
      if (!entry || entry->empty())
        fail(&item,
             "each 'stress' entry must be a non-empty table of case parameters, like { distribution = \"equal\" }");
      for (const auto& [key, value] : *entry)
        if (std::find(r.dims.begin(), r.dims.end(), std::string(key.str())) != r.dims.end())
          fail(&value,
               fmt::format("a 'stress' entry cannot set '{}': sizes are drawn just below the timing size", key.str()));
      out.push_back(to_json(item));
    }
    return out;
  }

  void check_random(const RandomCases& r, const toml::table& t) const {
    const std::int64_t smallest = r.tiles.front(), largest = r.tiles.back();
    if (smallest < 2) fail(t.get("tiles"), "every tile must be at least 2 (a size of 1 divides every size)");
    if (r.min < 1 || r.min >= smallest)
      fail(t.get("min"),
           fmt::format("'min' must be at least 1 and below the smallest tile ({}), so tiny sizes are drawn", smallest));
    if (r.power_of_two) {
      for (auto tile : r.tiles)
        if ((tile & (tile - 1)) != 0)
          fail(t.get("tiles"), "with power_of_two = true every tile must be a power of two");
      if (r.max < 4 * largest)
        fail(t.get("max"),
             fmt::format("'max' must be at least {} (4 x the largest tile) so sizes of many blocks are drawn",
                         4 * largest));
    } else {
      std::int64_t lcm = 1;
      for (auto tile : r.tiles) lcm = std::lcm(lcm, tile);
      const std::int64_t many = lcm * ((2 * largest) / lcm + 1);
      if (r.max < many)
        fail(t.get("max"),
             fmt::format("'max' must be at least {}: a multiple of every tile beyond two of the largest, so "
                         "sizes of many blocks that divide evenly are drawn",
                         many));
    }
    if (r.count < r.fewest_cases())
      fail(t.get("count"),
           fmt::format("'count' must be at least {}, so every run draws each size region as a multiple and a "
                       "non-multiple of every tile, a square shape and every listed value",
                       r.fewest_cases()));
    if (r.hidden != 0 && r.hidden < r.fewest_cases())
      fail(t.get("hidden"), fmt::format("'hidden' must be 0 or at least {}, for the same coverage", r.fewest_cases()));
  }

  // The bounds of a threshold or tier table: every key but `skip` names a backend and device class.
  void read_bounds(const toml::table& t, const char* what, const std::vector<std::string>& skip, Threshold& th) const {
    for (const auto& [key, value] : t) {
      const std::string k(key.str());
      if (std::find(skip.begin(), skip.end(), k) != skip.end()) continue;
      static const std::vector<std::string> allowed{"gpu", "cpu", "cuda_gpu", "opencl_gpu", "opencl_cpu"};
      if (std::find(allowed.begin(), allowed.end(), k) == allowed.end())
        fail(&value, fmt::format("unknown bound '{}' in {}: use {}", k, what, fmt::join(allowed, ", ")));
      auto v = value.value<double>();
      if (!v || *v <= 0) fail(&value, fmt::format("'{}' must be a positive number (a ratio such as 0.5)", k));
      th.bounds[k] = *v;
    }
  }

  // tier = { points = 1, gpu = 0.09 }: bounds on the threshold's metric, each above the threshold's
  // bound for the same backend and device class, which must exist.
  Tier tier(const toml::node& node, const std::optional<Threshold>& threshold) const {
    const toml::table* t = node.as_table();
    if (!t) fail(&node, "'tier' must be a table like { points = 1, gpu = 0.09 }");
    if (!threshold) fail(&node, "a 'tier' raises a threshold: give the task a 'threshold' first");
    Tier tier;
    tier.points = required<double>(*t, "points", "a number: the points the tier adds, e.g. 1");
    if (tier.points <= 0) fail(t->get("points"), "'points' of a tier must be positive");
    tier.bounds.metric = threshold->metric;
    read_bounds(*t, "tier", {"points"}, tier.bounds);
    if (tier.bounds.bounds.empty()) fail(&node, "a 'tier' needs a bound, e.g. gpu = 0.09");
    for (const std::string backend : {"cuda", "opencl"})
      for (const DeviceClass c : {DeviceClass::gpu, DeviceClass::cpu}) {
        const auto high = tier.bounds.bound(backend, c), low = threshold->bound(backend, c);
        if (high && (!low || *high <= *low))
          fail(&node, fmt::format("the tier's bound for {} on a {} ({}) must be above the threshold's ({})", backend,
                                  to_string(c), *high, low ? fmt::format("{}", *low) : std::string("none")));
      }
    return tier;
  }

  Threshold threshold(const toml::node& node) const {
    const toml::table* t = node.as_table();
    if (!t) fail(&node, "'threshold' must be a table like { metric = \"copy_fraction\", gpu = 0.5, cpu = 0.2 }");
    Threshold th;
    th.metric = required<std::string>(*t, "metric", "the name of a calibration ratio, e.g. \"copy_fraction\"");
    if (!find_metric(th.metric)) {
      std::vector<std::string> names;
      for (const auto& m : metrics()) names.push_back(m.name);
      fail(t->get("metric"), fmt::format("unknown metric '{}': use one of {}", th.metric, fmt::join(names, ", ")));
    }
    read_bounds(*t, "threshold", {"metric"}, th);
    return th;
  }

  Manifest read() const {
    const toml::table root = parse();
    Manifest m;
    m.path = path_;
    m.id = path_.parent_path().filename().string();
    read_settings(root, m);
    read_files(root, m);
    read_signatures(root, m);
    read_tasks(root, m);
    read_cases(root, m);
    read_random_blocks(root, m);
    check_timing_cases(root, m);
    return m;
  }

 private:
  toml::table parse() const {
    try {
      return toml::parse_file(path_.string());
    } catch (const toml::parse_error& e) {
      throw ManifestError(fmt::format("{}:{}:{}: TOML syntax error: {}", path_.string(), e.source().begin.line,
                                      e.source().begin.column, e.description()));
    }
  }

  // The top-level keys: names, timing and sanitizer settings, forbidden APIs.
  void read_settings(const toml::table& root, Manifest& m) const {
    m.name = required<std::string>(root, "name", "the lab's short name, e.g. \"transpose\"");
    m.title = required<std::string>(root, "title", "a one-line title");
    m.timeout_s = optional<double>(root, "timeout_s", 60.0, "a number of seconds");
    m.warmup = static_cast<int>(optional<std::int64_t>(root, "warmup", 3, "a count of launches"));
    m.repeats = static_cast<int>(optional<std::int64_t>(root, "repeats", 15, "a count of launches"));
    m.sanitize_max_size = optional<std::int64_t>(root, "sanitize_max_size", 0, "a case size (the product of its dims)");
    m.memory_gib = optional<double>(root, "memory_gib", 0.0, "a number of GiB");
    if (m.timeout_s <= 0) fail(root.get("timeout_s"), "'timeout_s' must be positive");
    if (m.memory_gib < 0) fail(root.get("memory_gib"), "'memory_gib' must be 0 (the batch's limit) or positive");
    if (m.sanitize_max_size < 0)
      fail(root.get("sanitize_max_size"), "'sanitize_max_size' must be 0 (no limit) or positive");
    if (m.warmup < 1 || m.repeats < 10)
      fail(root.get("repeats"), "need warmup >= 1 and repeats >= 10 (the median of at least 10 timed launches)");

    if (const toml::node* forbidden = root.get("forbidden")) m.forbidden = strings(*forbidden, "forbidden");
    if (const toml::node* allow = root.get("allow")) m.allow = strings(*allow, "allow");
    if (const toml::node* headers = root.get("forbidden_headers"))
      m.forbidden_headers = strings(*headers, "forbidden_headers");
    if (const toml::node* profile = root.get("profile")) m.profile = strings(*profile, "profile");
  }

  // [signatures.<name>]: each shape of the student functions, one C++ function type per backend that
  // [files] lists, e.g. cuda = "void(const float* in, float* out, int n)".
  void read_signatures(const toml::table& root, Manifest& m) const {
    const toml::node* node = root.get("signatures");
    if (!node) return;
    const toml::table* signatures = node->as_table();
    if (!signatures || signatures->empty())
      fail(node,
           "[signatures] must hold tables, like [signatures.scan] with cuda = \"void(const unsigned* in, int n)\"");
    for (const auto& [key, value] : *signatures) {
      Signature s;
      s.name = std::string(key.str());
      const toml::table* types = value.as_table();
      if (!types || !is_identifier(s.name))
        fail(&value, fmt::format("[signatures.{}] must be a table named like a C++ type (letters, digits, _), of "
                                 "one function type per backend",
                                 s.name));
      for (const auto& [backend, type] : *types) {
        const std::string b(backend.str());
        if (!m.files.contains(b))
          fail(&type, fmt::format("[signatures.{}] names backend '{}', which [files] does not list", s.name, b));
        auto text = type.value<std::string>();
        if (!text || !looks_like_function_type(*text))
          fail(&type, fmt::format("[signatures.{}] {} must be a C++ function type in a string, like "
                                  "\"void(const float* in, float* out, int n)\"",
                                  s.name, b));
        s.types[b] = *text;
        s.lines[b] = static_cast<int>(type.source().begin.line);
      }
      for (const auto& [b, files] : m.files)
        if (!s.types.contains(b))
          fail(&value, fmt::format("[signatures.{}] has no {} type, and [files] lists {} files: add {} = \"...\"",
                                   s.name, b, b, b));
      m.signatures.push_back(std::move(s));
    }
  }

  // A task's signature: the one it names, or the lab's only one.
  std::string task_signature(const toml::table& t, const Manifest& m, const std::string& task) const {
    const toml::node* node = t.get("signature");
    if (!node) {
      if (m.signatures.size() > 1)
        fail(&t, fmt::format("task '{}' needs 'signature': the lab declares several in [signatures]", task));
      return m.signatures.empty() ? std::string() : m.signatures.front().name;
    }
    auto name = node->value<std::string>();
    if (!name || !m.find_signature(*name))
      fail(node, fmt::format("task '{}': 'signature' must name a table of [signatures]", task));
    return *name;
  }

  static bool is_identifier(const std::string& s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s.front()))) return false;
    return std::all_of(s.begin(), s.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  }

  // "ret(params)": a return type, then one parameter list that closes the text.
  static bool looks_like_function_type(const std::string& s) {
    const auto open = s.find('(');
    return open != std::string::npos && open > 0 && s.find_first_not_of(' ') < open && s.back() == ')' &&
           std::count(s.begin(), s.end(), '(') == std::count(s.begin(), s.end(), ')');
  }

  // [files]: the student files of each backend.
  void read_files(const toml::table& root, Manifest& m) const {
    const toml::table* files = root["files"].as_table();
    if (!files) fail(&root, "missing [files]: the student files of each backend, e.g. cuda = [\"transpose.cu\"]");
    for (const auto& [backend, list] : *files) {
      const std::string b(backend.str());
      if (b != "cuda" && b != "opencl")
        fail(&list, fmt::format("unknown backend '{}' in [files]: use cuda or opencl", b));
      m.files[b] = strings(list, b);
    }
  }

  void read_tasks(const toml::table& root, Manifest& m) const {
    const toml::array* tasks = root["tasks"].as_array();
    if (!tasks || tasks->empty()) fail(&root, "no [[tasks]]: a lab needs at least one task");
    for (const auto& node : *tasks) {
      const toml::table* t = node.as_table();
      if (!t) fail(&node, "each [[tasks]] entry must be a table");
      Task task;
      task.name = required<std::string>(*t, "name", "a short task name, e.g. \"naive\"");
      task.function = required<std::string>(*t, "function", "the student function that implements the task");
      task.function_line = static_cast<int>(t->get("function")->source().begin.line);
      if (!is_identifier(task.function))
        fail(t->get("function"),
             fmt::format("task '{}': function '{}' is not a C++ name (letters, digits, _)", task.name, task.function));
      task.signature = task_signature(*t, m, task.name);
      task.title = optional<std::string>(*t, "title", "", "a string");
      task.points = optional<double>(*t, "points", 0.0, "a number");
      task.bonus = optional<bool>(*t, "bonus", false, "true or false");
      if (const toml::node* th = t->get("threshold")) task.threshold = threshold(*th);
      if (const toml::node* tr = t->get("tier")) task.tier = tier(*tr, task.threshold);
      if (m.find_task(task.name)) fail(t, fmt::format("task '{}' is defined twice", task.name));
      m.tasks.push_back(std::move(task));
    }
  }

  void read_cases(const toml::table& root, Manifest& m) const {
    const toml::array* cases = root["cases"].as_array();
    if (!cases || cases->empty()) fail(&root, "no [[cases]]: a lab needs at least one case");
    for (const auto& node : *cases) {
      Case c = one_case(node);
      for (const auto& t : c.tasks)
        if (!m.find_task(t))
          fail(&node, fmt::format("case '{}' names task '{}', which the lab does not have", c.name, t));
      m.cases.push_back(std::move(c));
    }
  }

  // One [[cases]] entry: its name and flags; every other key is a parameter of the lab.
  Case one_case(const toml::node& node) const {
    const toml::table* t = node.as_table();
    if (!t) fail(&node, "each [[cases]] entry must be a table");
    Case c;
    c.name = required<std::string>(*t, "name", "a short case name, e.g. \"37x53\"");
    c.timing = optional<bool>(*t, "timing", false, "true or false");
    c.hidden = optional<bool>(*t, "hidden", false, "true or false");
    // Students are timed on the case they see, and their release keeps every timing case.
    if (c.hidden && c.timing)
      fail(t->get("hidden"), fmt::format("case '{}' is both hidden and a timing case: a timing case must be visible "
                                         "to students; remove 'hidden' or 'timing'",
                                         c.name));
    c.params = nlohmann::json::object();
    for (const auto& [key, value] : *t) {
      const std::string k(key.str());
      if (k == "devices") {
        const toml::array* list = value.as_array();
        if (!list) fail(&value, "'devices' must be an array, e.g. [\"gpu\"]");
        for (const auto& d : *list) c.devices.push_back(device_class(d));
      } else if (k == "tasks") {
        c.tasks = strings(value, "tasks");
      } else if (k == "trim") {
        c.trim = trims(value);
      } else if (k != "name" && k != "timing" && k != "hidden") {
        c.params[k] = to_json(value);
      }
    }
    for (const auto& [key, most] : c.trim) {
      const toml::node* trim = t->get("trim");
      if (!c.timing) fail(trim, fmt::format("case '{}': only a timing case can have 'trim'", c.name));
      if (!c.params.contains(key) || !c.params[key].is_number_integer() || c.params[key].get<std::int64_t>() <= most)
        fail(trim, fmt::format("case '{}': 'trim.{}' must name an integer size of the case larger than {}", c.name, key,
                               most));
    }
    return c;
  }

  // `trim = { n = 255 }`: how much each run may take off each named size.
  std::vector<std::pair<std::string, std::int64_t>> trims(const toml::node& node) const {
    const toml::table* t = node.as_table();
    if (!t || t->empty()) fail(&node, "'trim' must be a table of sizes, like { n = 255 }");
    std::vector<std::pair<std::string, std::int64_t>> out;
    for (const auto& [key, value] : *t) {
      auto most = value.value_exact<std::int64_t>();
      if (!most || *most < 1) fail(&value, fmt::format("'trim.{}' must be a positive integer", key.str()));
      out.emplace_back(std::string(key.str()), *most);
    }
    return out;
  }

  void read_random_blocks(const toml::table& root, Manifest& m) const {
    const toml::node* random = root.get("random");
    if (!random) return;
    const toml::array* blocks = random->as_array();
    if (!blocks) fail(random, "'random' must be written as [[random]] blocks");
    for (const auto& block : *blocks) m.random.push_back(random_cases(block, m));
  }

  // A task's speed is its one timing case's (tasks may have different ones, limited by `tasks`).
  void check_timing_cases(const toml::table& root, const Manifest& m) const {
    for (DeviceClass dc : {DeviceClass::gpu, DeviceClass::cpu})
      for (const auto& task : m.tasks) {
        const auto selected = m.cases_for(dc, task.name);
        const auto timed = std::count_if(selected.begin(), selected.end(), [](const Case* c) { return c->timing; });
        if (timed > 1)
          fail(&root, fmt::format("more than one timing case for task '{}' on {} devices: mark one per task and device "
                                  "class",
                                  task.name, to_string(dc)));
      }
  }

  std::filesystem::path path_;
};

}  // namespace

Manifest load_manifest(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path))
    throw ManifestError(fmt::format("{}: no such manifest (every lab folder needs a lab.toml)", path.string()));
  return Reader(path).read();
}

std::vector<Manifest> load_all_manifests(const std::filesystem::path& labs_root) {
  std::vector<std::filesystem::path> folders;
  for (const auto& entry : std::filesystem::directory_iterator(labs_root))
    if (entry.is_directory() && std::filesystem::exists(entry.path() / "lab.toml")) folders.push_back(entry.path());
  std::sort(folders.begin(), folders.end());
  std::vector<Manifest> out;
  for (const auto& f : folders) out.push_back(load_manifest(f / "lab.toml"));
  return out;
}

}  // namespace gpulab
