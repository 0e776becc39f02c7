#include "streams_lab.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstring>

#include "gpulab/parallel.hpp"
#include "lab_driver.hpp"
#include "streams_reference.hpp"

namespace gpulab {
namespace {

// What a launch computes. The function receives a and b; the key only reaches its kernel (see
// StreamFunction::set_key), so only a kernel can produce the result. Each input set's contents
// have their own, and no two launches in a row use the same contents.
struct Operation {
  float a = 1, b = 0, key = 0;
  float operator()(float x) const { return reference::scale_shift(x, a, b, key); }
};

Operation draw_operation(Rng& rng) {
  const float a = reference::draw_scale(rng);
  const float b = reference::draw_eighths(rng);
  float key = reference::draw_eighths(rng);
  if (key == 0) key = 0.125f;  // a zero key could not tell a kernel's result from the host's
  return {a, b, key};
}

// Page-locked blocks kept from one case to the next: pinning 512 MiB takes a good part of a second
// (the kernel maps and locks every page), and each input set of a case needs two such blocks. A
// block goes to the next case that fits in it; a case that fits in none gives the smaller free blocks
// back before pinning its own, so the pool holds no more than the largest case's sets need.
class PinnedPool {
 public:
  struct Block {
    std::size_t capacity = 0;
    std::unique_ptr<labs::PinnedMemory> memory;
  };
  Block take(Device& device, std::size_t bytes) {
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if (it->capacity >= bytes && (best == free_.end() || it->capacity < best->capacity)) best = it;
    if (best != free_.end()) {
      Block block = std::move(*best);
      free_.erase(best);
      return block;
    }
    std::erase_if(free_, [bytes](const Block& b) { return b.capacity < bytes; });
    return {bytes, labs::allocate_pinned(device, bytes)};
  }
  void give_back(Block block) { free_.push_back(std::move(block)); }

 private:
  std::vector<Block> free_;
};

// Host memory the student's function receives, as a Buffer, so the runner checks it as it checks
// device buffers: guard zones of kGuardByte on both sides (a copy of n + 1 floats lands there), an
// input compared with its original, outputs compared by sampling. Pageable (new[]), or page-locked
// by the backend, from `pinned` where given.
class HostBuffer final : public Buffer {
 public:
  HostBuffer(Device& device, std::size_t bytes, PinnedPool* pinned) : bytes_(bytes), pool_(pinned) {
    const std::size_t total = bytes + 2 * kGuardBytes;
    if (pool_) {
      pinned_ = pool_->take(device, total);
      base_ = static_cast<std::uint8_t*>(pinned_.memory->data());
    } else {
      pageable_.reset(new std::uint8_t[total]);  // not zeroed: the harness writes every byte before use
      base_ = pageable_.get();
    }
    reset_guards();
  }
  ~HostBuffer() override {
    if (pool_) pool_->give_back(std::move(pinned_));
  }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  float* floats() { return reinterpret_cast<float*>(region()); }
  std::size_t size() const override { return bytes_; }
  void upload(const void* host, std::size_t bytes) override { upload_range(host, 0, bytes); }
  void download(void* host, std::size_t bytes) override { download_range(host, 0, bytes); }
  void download_range(void* host, std::size_t offset, std::size_t bytes) override {
    std::memcpy(host, region() + offset, std::min(bytes, bytes_ - std::min(offset, bytes_)));
  }
  void upload_range(const void* host, std::size_t offset, std::size_t bytes) override {
    std::memcpy(region() + offset, host, std::min(bytes, bytes_ - std::min(offset, bytes_)));
  }
  void fill(std::uint8_t byte) override {  // on every core: the timing case's buffers hold 512 MiB
    parallel_ranges(bytes_,
                    [&](std::size_t begin, std::size_t end) { std::memset(region() + begin, byte, end - begin); });
  }
  bool guarded() const override { return true; }
  void read_guards(std::vector<std::uint8_t>& front, std::vector<std::uint8_t>& back) override {
    front.assign(base_, base_ + kGuardBytes);
    back.assign(region() + bytes_, region() + bytes_ + kGuardBytes);
  }
  void reset_guards() override {
    std::memset(base_, kGuardByte, kGuardBytes);
    std::memset(region() + bytes_, kGuardByte, kGuardBytes);
  }

 private:
  std::uint8_t* region() const { return base_ + kGuardBytes; }
  std::size_t bytes_;
  PinnedPool* pool_ = nullptr;
  PinnedPool::Block pinned_;
  std::unique_ptr<std::uint8_t[]> pageable_;
  std::uint8_t* base_ = nullptr;
};

// A case's input, and for each content an input set can hold the operation and its exact result.
struct CaseData {
  std::vector<float> input;
  std::vector<Operation> operations;
  std::vector<std::vector<float>> expected;
};

// Patches: in large cases, kPatches input words at seeded places get new values before every launch
// (and the output words they produce with them), so no two launches see the same data and a result
// kept from an earlier launch misses them; the runner compares the patched words every time.
constexpr std::size_t kPatches = 16, kPatchedFrom = std::size_t{1} << 16;

// Compares `got` (n floats) with `expected` where `patches` overwrite it, bit for bit, in pieces.
Comparison compare_floats(Buffer& got, const float* expected, const WordPatches& patches) {
  constexpr std::size_t kPiece = std::size_t{1} << 20, kListed = 8;
  const std::size_t n = got.size() / sizeof(float);
  Comparison c;
  c.total = n;
  std::vector<float> seen, want;
  for (std::size_t from = 0; from < n; from += kPiece) {
    const std::size_t count = std::min(kPiece, n - from);
    seen.resize(count);
    got.download_range(seen.data(), from * sizeof(float), count * sizeof(float));
    want.assign(expected + from, expected + from + count);
    for (const auto& [index, word] : patches)
      if (index >= from && index < from + count) std::memcpy(&want[index - from], &word, sizeof word);
    if (std::memcmp(seen.data(), want.data(), count * sizeof(float)) == 0) continue;
    for (std::size_t i = 0; i < count; ++i) {
      std::uint32_t s = 0, w = 0;
      std::memcpy(&s, &seen[i], sizeof s);
      std::memcpy(&w, &want[i], sizeof w);
      if (s == w) continue;
      ++c.wrong;
      c.untouched += s == 0xFFFFFFFFu;  // kPoisonByte in every byte
      if (c.first.size() < kListed) c.first.push_back({from + i, show_value(want[i]), show_value(seen[i]), {}});
    }
  }
  return c;
}

// One input set: host memory and device buffers of its own, and what they hold now.
struct Set {
  std::unique_ptr<HostBuffer> in, out;
  std::unique_ptr<Buffer> d_in, d_out;
  int content = 0;                      // which operation of CaseData the set's launch applies
  WordPatches in_patches, out_patches;  // the input words patched now, and the results they give
  bool returned_early = false;          // `out` still held poison when the last launch returned
};

bool is_poison(float word) { return std::bit_cast<std::uint32_t>(word) == 0xFFFFFFFFu; }  // never a result

bool any_poison(const float* out, std::size_t from, std::size_t to) {
  return std::any_of(out + from, out + to, is_poison);
}

// Whether the function returned before its result was all in `out`: a word that still holds the
// poison when it returns (the runner synchronises the device before it checks, which would hide a
// missing wait). The last words first, the last chunk's copy being the last to land, then seeded
// random ones, then, where `whole`, every word, on every core. Not whole for the launches that may
// be timed, since this runs inside the timing: there returning early gains nothing (the timing waits
// for every stream and queue), and the whole output is checked at the case's first launch.
bool poison_at_return(const float* out, std::size_t n, Rng& rng, bool whole) {
  constexpr std::size_t kTail = 1024, kSampled = 1024;
  if (any_poison(out, n - std::min(n, kTail), n)) return true;
  for (std::size_t k = 0; k < kSampled && n > kTail; ++k)
    if (is_poison(out[static_cast<std::size_t>(rng.integer(0, static_cast<std::int64_t>(n) - 1))])) return true;
  if (!whole) return false;
  std::atomic<bool> found{false};
  parallel_ranges(n, [&](std::size_t begin, std::size_t end) {
    if (any_poison(out, begin, end)) found = true;
  });
  return found;
}

// How many of the wrong words of `out` (at most the first few listed in `cmp`) hold a * in + b, the
// result without the key: what a result computed on the host gives.
std::size_t keyless_words(const Comparison& cmp, const float* out, const std::vector<float>& input,
                          const WordPatches& in_patches, const Operation& op) {
  std::size_t keyless = 0;
  for (const Mismatch& m : cmp.first) {
    float x = input[m.index];
    for (const auto& [index, word] : in_patches)
      if (index == m.index) x = std::bit_cast<float>(word);
    keyless += std::bit_cast<std::uint32_t>(out[m.index]) ==
               std::bit_cast<std::uint32_t>(reference::scale_shift(x, op.a, op.b, 0.0f));
  }
  return keyless;
}

class StreamsDriver final : public LabDriver {
 public:
  std::string rate_work() const override { return "bytes copied each way (n floats in, n floats out)"; }

  // The ideal's copies: page-locked host memory and device buffers of the timing case's size.
  void prepare_calibration(const RunContext& ctx, const Case& timing, Calibration& cal) override {
    ideal_bytes_ = static_cast<std::size_t>(case_int(timing, "n")) * sizeof(float);
    probe_host_from_ = labs::allocate_pinned(ctx.device, ideal_bytes_);
    probe_host_to_ = labs::allocate_pinned(ctx.device, ideal_bytes_);
    std::memset(probe_host_from_->data(), 0x5a, ideal_bytes_);
    probe_to_device_ = ctx.device.allocate(ideal_bytes_);
    probe_from_device_ = ctx.device.allocate(ideal_bytes_);
    probe_from_device_->fill(0xa5);
    copies_ = labs::make_host_device_copies(ctx.device, probe_host_from_->data(), *probe_to_device_,
                                            *probe_from_device_, probe_host_to_->data(), ideal_bytes_);
    // The threshold's calibration, "library" in the report: both copies at once, the least time in
    // which n floats can go in and n come back however the work is cut into chunks.
    cal.probes["library"] =
        Probe{[] {}, [this] { copies_->run(labs::Transfer::both_ways); }, static_cast<double>(ideal_bytes_)};
  }

  void measure_calibration(const RunContext& ctx, const Case&, Calibration& cal) override {
    auto gbps = [&](labs::Transfer t) {
      const double ms = median_launch_ms(ctx, [&] { copies_->run(t); });
      return static_cast<double>(ideal_bytes_) / (ms * 1e-3) / 1e9;
    };
    const double to_device = gbps(labs::Transfer::to_device), to_host = gbps(labs::Transfer::to_host);
    cal.rates["library"] = gbps(labs::Transfer::both_ways);
    cal.library = fmt::format(
        "ideal (pinned copies both ways at once; alone: host to device {:.1f} GB/s, device to host {:.1f} GB/s)",
        to_device, to_host);
  }

  CaseResult run(const RunContext& ctx, const Task& task, const Case& c) override {
    const std::shared_ptr<const CaseData> data = data_for(ctx, task, c);
    const std::vector<float>& input = data->input;
    const int n = static_cast<int>(input.size());
    const std::size_t bytes = input.size() * sizeof(float);
    // The serial task gets pageable memory (malloc's, what most programs have); the others page-
    // locked memory, pinned outside the timing as a real program would (pinning costs time) and
    // kept for the next case (PinnedPool).
    PinnedPool* pinned = task.name != "serial" ? &pinned_pool_ : nullptr;
    Rng patch_rng = ctx.draws("patches", task, c);
    const bool patched = input.size() >= kPatchedFrom;
    std::vector<Set> sets(input_sets(c));
    auto hold = [&](Set& set, int content) {  // the set's input gets new patches, its launch an operation
      for (const auto& [index, word] : set.in_patches)
        set.in->upload_range(&input[index], index * sizeof word, sizeof word);
      set.content = content;
      set.out_patches.clear();
      set.in_patches = draw_patches(patch_rng, patched ? kPatches : 0, input.size(), [&](Rng& rng, std::size_t at) {
        const float x = reference::draw_input(rng);
        set.out_patches.emplace_back(at, std::bit_cast<std::uint32_t>(data->operations[content](x)));
        set.in->upload_range(&x, at * sizeof x, sizeof x);
        return std::bit_cast<std::uint32_t>(x);
      });
    };
    for (int i = 0; i < static_cast<int>(sets.size()); ++i) {
      Set& set = sets[i];
      set.in = std::make_unique<HostBuffer>(ctx.device, bytes, pinned);
      set.out = std::make_unique<HostBuffer>(ctx.device, bytes, pinned);
      set.d_in = ctx.device.allocate_guarded(bytes);
      set.d_out = ctx.device.allocate_guarded(bytes);
      set.in->upload(input.data(), bytes);
      hold(set, i);
    }
    const auto function = labs::bind_stream(ctx.device, task.function);
    Rng return_rng = ctx.draws("returned early", task, c);
    int launches = 0;

    Launchable l;
    l.sets = static_cast<int>(sets.size());
    l.load = [&](int i, int content) { hold(sets[i], content); };
    l.arguments = [&](int i) {  // new contents are a new operation (and new patches of the input)
      const Operation op = data->operations[sets[i].content];
      return fmt::format("{} {} {}", op.a, op.b, op.key);
    };
    l.prepare = [&](int i) {  // every output poisoned, and d_in too: the launch must copy the input there
      sets[i].out->fill(kPoisonByte);
      sets[i].d_in->fill(kPoisonByte);
      sets[i].d_out->fill(kPoisonByte);
      function->set_key(data->operations[sets[i].content].key);
    };
    l.launch = [&](int i) {
      Set& set = sets[i];
      const Operation op = data->operations[set.content];
      function->call(set.in->floats(), set.out->floats(), *set.d_in, *set.d_out, n, op.a, op.b);
      // Launch 0 is the case's correctness launch, never timed (execute.cpp, CaseRun::run).
      set.returned_early = poison_at_return(set.out->floats(), input.size(), return_rng, launches++ == 0);
    };
    l.check = [&](int i) { return check_set(sets[i], *data); };
    l.watched = [&](int i) {
      Set& set = sets[i];
      return std::vector<Watched>{{set.in.get(), "in", sizeof(float), input.data(), {}, &set.in_patches},
                                  {set.out.get(), "out", sizeof(float)},
                                  {set.d_in.get(), "d_in", sizeof(float)},
                                  {set.d_out.get(), "d_out", sizeof(float)}};
    };
    l.exact_outputs = [&](int i) {
      Set& set = sets[i];
      const float* expected = data->expected[set.content].data();
      return std::vector<ExactOutput>{{set.out.get(), expected, {}, &set.out_patches},
                                      {set.d_out.get(), expected, {}, &set.out_patches},
                                      {set.d_in.get(), input.data(), {}, &set.in_patches}};
    };
    l.work = static_cast<double>(bytes);               // n floats in and n out, at once at best
    l.least_bytes = 2.0 * static_cast<double>(bytes);  // on the device: d_in read and d_out written once
    return execute(ctx, c, l);
  }

 private:
  // The host result first, then the device buffers the contract asks to hold the input and result.
  static Comparison check_set(Set& set, const CaseData& data) {
    const float* expected = data.expected[set.content].data();
    Comparison cmp = compare_floats(*set.out, expected, set.out_patches);
    if (!cmp.ok()) {
      const Operation& op = data.operations[set.content];
      cmp.note = keyless_words(cmp, set.out->floats(), data.input, set.in_patches, op) == cmp.first.size()
                     ? "in out, which holds a * in + b without the key: the key is only on the device, where "
                       "your kernel reads it (out = a * in + b + key), so a result computed on the host cannot be "
                       "right"
                     : "in out, the host memory your function returns the result in";
      return cmp;
    }
    if (set.returned_early) {  // right after the grader's synchronisation, not when the function returned
      cmp.wrong = 1;
      cmp.note =
          "out was not written yet when your function returned (it still held the poison); it is right only "
          "after the grader waited for the device: wait for your copies before returning (cudaStreamSynchronize, "
          "clFinish)";
      return cmp;
    }
    cmp = compare_floats(*set.d_out, expected, set.out_patches);
    if (!cmp.ok()) {
      cmp.note =
          "out is right, but d_out does not hold the result: compute it on the device, in d_out, and copy it back "
          "from there";
      return cmp;
    }
    cmp = compare_floats(*set.d_in, data.input.data(), set.in_patches);
    if (!cmp.ok()) cmp.note = "out is right, but d_in does not hold the input: copy in to d_in and compute from there";
    return cmp;
  }

  // The timing case's data is drawn once per run, not per task; every other case's is the task's own.
  std::shared_ptr<const CaseData> data_for(const RunContext& ctx, const Task& task, const Case& c) {
    return timing_data_.get(c, [&] {
      Rng rng = ctx.inputs_rng(task, c);
      auto made = std::make_shared<CaseData>();
      made->input.resize(static_cast<std::size_t>(case_int(c, "n")));
      draw_each(rng, std::span(made->input), reference::draw_input);
      for (int k = 0; k < input_sets(c); ++k) {
        const Operation op = draw_operation(rng);
        made->operations.push_back(op);
        made->expected.emplace_back(made->input.size());
        reference::scale_shift(made->input, op.a, op.b, op.key, made->expected.back());
      }
      return made;
    });
  }

  TimingCaseData<CaseData> timing_data_;
  PinnedPool pinned_pool_;
  std::size_t ideal_bytes_ = 0;
  std::unique_ptr<labs::PinnedMemory> probe_host_from_, probe_host_to_;
  std::unique_ptr<Buffer> probe_to_device_, probe_from_device_;
  std::unique_ptr<labs::HostDeviceCopies> copies_;
};

}  // namespace

std::unique_ptr<LabDriver> make_lab_driver() { return std::make_unique<StreamsDriver>(); }

}  // namespace gpulab
