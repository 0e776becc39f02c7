// The runner's defences that need no device: the speed of light and the guard-zone report.
#include <doctest/doctest.h>

#include <cstring>

#include "gpulab/device.hpp"
#include "gpulab/metrics.hpp"

using namespace gpulab;

namespace {
// A guarded buffer of `elements` floats in host memory, whose guards a test damages by hand.
class FakeGuardedBuffer final : public Buffer {
 public:
  explicit FakeGuardedBuffer(std::size_t elements)
      : size_(elements * sizeof(float)), front_(kGuardBytes, kGuardByte), back_(kGuardBytes, kGuardByte) {}
  std::size_t size() const override { return size_; }
  void upload(const void*, std::size_t) override {}
  void download(void*, std::size_t) override {}
  void download_range(void*, std::size_t, std::size_t) override {}
  void upload_range(const void*, std::size_t, std::size_t) override {}
  void fill(std::uint8_t) override {}
  bool guarded() const override { return true; }
  void read_guards(std::vector<std::uint8_t>& front, std::vector<std::uint8_t>& back) override {
    front = front_;
    back = back_;
  }
  void reset_guards() override {
    std::fill(front_.begin(), front_.end(), kGuardByte);
    std::fill(back_.begin(), back_.end(), kGuardByte);
  }
  void write_after_end(std::size_t element) { std::memset(&back_[element * sizeof(float)], 0, sizeof(float)); }
  void write_before_start(std::size_t element) {  // element 1 is index -1
    std::memset(&front_[front_.size() - element * sizeof(float)], 0, sizeof(float));
  }

 private:
  std::size_t size_;
  std::vector<std::uint8_t> front_, back_;
};
}  // namespace

TEST_CASE("intact guard zones report nothing") {
  FakeGuardedBuffer out(100);
  CHECK(describe_guard_damage(out, "out", sizeof(float)).empty());
}

TEST_CASE("a write past the end names the buffer, the count and the indices, and the guards are refilled") {
  FakeGuardedBuffer out(100);
  for (std::size_t i = 0; i < 4; ++i) out.write_after_end(i);
  const std::string damage = describe_guard_damage(out, "out", sizeof(float));
  CHECK(damage.find("wrote 4 elements past the end of out, indices 100..103 (it has 100)") != std::string::npos);
  CHECK(describe_guard_damage(out, "out", sizeof(float)).empty());  // reported once
}

TEST_CASE("a write before the start is counted back from the start, and both ends are reported together") {
  FakeGuardedBuffer out(10);
  out.write_before_start(1);
  out.write_before_start(3);
  out.write_after_end(20);
  const std::string damage = describe_guard_damage(out, "c", sizeof(float));
  CHECK(damage.find("wrote 1 element past the end of c, indices 30..30") != std::string::npos);
  CHECK(damage.find("wrote 3 elements before the start of c, indices -3..-1") != std::string::npos);
}

TEST_CASE(
    "a launch faster than moving its bytes at the copy bandwidth, by more than the margin, beats the speed of light") {
  Calibration cal;
  cal.copy_gbps = 1000;  // 1 GB per ms
  const auto light = speed_of_light_ms(2e9, 0, cal);
  REQUIRE(light);
  CHECK(*light == doctest::Approx(2.0));
  CHECK(!faster_than_device(2.0, light));
  CHECK(!faster_than_device(1.9, light));  // within the margin: a kernel can beat the copy calibration a little
  CHECK(faster_than_device(1.5, light));
  CHECK(faster_than_device(0.01, light));
}

TEST_CASE(
    "for a compute-bound kernel the FP32 peak bounds the time when it is known, and nothing is bounded without "
    "calibrations") {
  Calibration cal;
  CHECK(!speed_of_light_ms(1e9, 1e12, cal));
  CHECK(!faster_than_device(1e-6, speed_of_light_ms(1e9, 1e12, cal)));
  cal.copy_gbps = 3000;
  cal.peak_gflops = 60000;
  const auto light = speed_of_light_ms(2e8, 2.0 * 4096.0 * 4096.0 * 4096.0, cal);
  REQUIRE(light);
  CHECK(*light == doctest::Approx(2.0 * 4096.0 * 4096.0 * 4096.0 / 60e12 * 1e3));  // flops dominate
  CHECK(faster_than_device(*light / 2, light));                                    // a copy of C instead of the product
}

TEST_CASE("a word transform reorders bytes, then flips bits, and its inverse undoes it") {
  const WordTransform swap_ends{0x80000001u, {3, 2, 1, 0}};
  CHECK(swap_ends(0x11223344u) == (0x44332211u ^ 0x80000001u));
  CHECK(WordTransform{}.identity());
  CHECK_FALSE(swap_ends.identity());
  const WordTransform rotate{0x0F0F00F0u, {1, 2, 3, 0}};
  for (std::uint32_t w : {0u, 1u, 0xDEADBEEFu, 0x80000000u, 0x12345678u}) {
    CHECK(rotate.inverse()(rotate(w)) == w);
    CHECK(swap_ends.inverse()(swap_ends(w)) == w);
  }
  std::uint32_t words[2] = {0x11223344u, 0x55667788u};
  rotate.apply(words, sizeof words);
  CHECK(words[0] == rotate(0x11223344u));
  CHECK(words[1] == rotate(0x55667788u));
  CHECK(rotate.selector() == 0x0321u);  // CUDA's __byte_perm: nibble k picks result byte k
}

TEST_CASE("every device writes transformed copies exactly as the host computes them") {
  int devices_tried = 0;
  for (const std::string& backend : available_backends()) {
    std::unique_ptr<Device> device;
    try {
      device = open_device(backend, "");
    } catch (const std::exception&) {
      continue;  // no device of this backend here (CUDA without a GPU)
    }
    ++devices_tried;
    std::vector<std::uint32_t> words(100003);
    for (std::size_t i = 0; i < words.size(); ++i) words[i] = static_cast<std::uint32_t>(i * 2654435761u);
    const std::size_t bytes = words.size() * 4;
    auto from = device->allocate(bytes);
    auto to = device->allocate_guarded(bytes);
    from->upload(words.data(), bytes);
    const WordTransform t{0x807FFFFFu & 0x5A5A5A5Bu, {2, 0, 3, 1}};
    device->copy_transformed(*from, *to, t);
    device->synchronize();
    std::vector<std::uint32_t> got(words.size());
    to->download(got.data(), bytes);
    t.apply(words.data(), bytes);
    CAPTURE(backend);
    CHECK(got == words);
    CHECK(describe_guard_damage(*to, "to", 4).empty());
  }
  CHECK(devices_tried > 0);
}

TEST_CASE("timing stops early only when the ratio is far from its bound for the noise measured") {
  CHECK(ratio_decided(1.63, 1.3, 0.02));   // 25% above: more launches cannot change the verdict
  CHECK(ratio_decided(0.5, 1.3, 0.02));    // far below: fails either way
  CHECK(!ratio_decided(1.40, 1.3, 0.02));  // 8% above: measure the full count
  CHECK(!ratio_decided(1.22, 1.3, 0.0));   // just below: the full count, then the borderline round
  CHECK(!ratio_decided(1.63, 1.3, 0.10));  // 25% above, but the clock varies by 10%: 3 x 10% > 25%
  CHECK(!ratio_decided(1.0, 0.0, 0.0));    // no bound, nothing to decide from it
}

TEST_CASE("every listed device fits on one line of a report: a driver's own tags are left out") {
  for (const auto& backend : available_backends())
    for (const auto& d : list_devices(backend)) {
      CAPTURE(d.name);
      CAPTURE(d.details);
      CHECK(d.details.find("HSTR") == std::string::npos);
      CHECK(d.name.size() + d.platform.size() + d.details.size() < 160);
    }
}
