// Runs CPU work on every core: the references must check a GPU's largest cases in well under a
// second, and the CPU calibrations compare the GPU with the whole CPU, not one core.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <future>
#include <memory>
#include <ranges>
#include <span>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpulab/word_transform.hpp"

namespace gpulab {

// Calls body(begin, end) on disjoint ranges that cover [0, count), one range per core.
template <typename Body>
void parallel_ranges(std::size_t count, Body body) {
  const std::size_t parts = std::min<std::size_t>(std::max(1u, std::thread::hardware_concurrency()), count);
  if (parts <= 1) {
    if (count > 0) body(std::size_t{0}, count);
    return;
  }
  std::vector<std::thread> pool;
  for (std::size_t p = 0; p < parts; ++p)
    pool.emplace_back([&body, p, parts, count] { body(count * p / parts, count * (p + 1) / parts); });
  for (auto& t : pool) t.join();
}

// Calls body(i) for every i in [0, count), on one thread per core (at most count); thread t takes
// items t, t + threads, ...: neighbouring items, which often cost alike, are spread over the cores.
template <typename Body>
void parallel_for(std::size_t count, Body body) {
  const std::size_t threads = std::min<std::size_t>(std::max(1u, std::thread::hardware_concurrency()), count);
  if (threads <= 1) {
    for (std::size_t i = 0; i < count; ++i) body(i);
    return;
  }
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads; ++t)
    pool.emplace_back([&body, t, threads, count] {
      for (std::size_t i = t; i < count; i += threads) body(i);
    });
  for (auto& th : pool) th.join();
}

// Calls body(i, worker) for every i in [0, count) on `workers` threads (worker 0 .. workers-1), each
// taking the next item when it is free: for items of very different cost, such as child processes.
// An exception thrown by a body is rethrown here, after every worker has stopped.
template <typename Body>
void parallel_queue(std::size_t count, int workers, Body body) {
  std::atomic<std::size_t> next{0};
  std::vector<std::future<void>> pool;
  for (int w = 0; w < std::max(1, workers); ++w)
    pool.push_back(std::async(std::launch::async, [&next, &body, count, w] {
      for (std::size_t i = next++; i < count; i = next++) body(i, w);
    }));
  for (auto& f : pool) f.get();
}

// An allocator that default-initialises what std::allocator value-initialises: the elements of a
// std::vector<T, NoZeroing<T>>(n) of an arithmetic T are left as the memory holds them.
template <typename T>
struct NoZeroing : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = NoZeroing<U>;
  };
  NoZeroing() = default;
  template <typename U>
  NoZeroing(const NoZeroing<U>&) noexcept {}
  template <typename U>
  void construct(U* at) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(at)) U;
  }
  template <typename U, typename... Args>
  void construct(U* at, Args&&... args) {
    ::new (static_cast<void*>(at)) U(std::forward<Args>(args)...);
  }
};

// A large host array (a GPU-sized case's input, reference or download: hundreds of MiB). Made by
// zeroed_on_all_cores, never left unwritten: std::vector<T>(n) writes its zeros on one thread, and
// the first write of a fresh page also waits for the kernel to clear it, so a 512 MiB vector took
// 0.2 s before anything was drawn into it; written on every core, a few hundredths.
template <typename T>
using HostArray = std::vector<T, NoZeroing<T>>;

// `count` zeros in a HostArray, written (and so first touched) on every core.
template <typename T>
HostArray<T> zeroed_on_all_cores(std::size_t count) {
  static_assert(std::is_arithmetic_v<T>, "zeroed_on_all_cores: for arrays of numbers");
  HostArray<T> array(count);
  constexpr std::size_t kOneThreadBelow = std::size_t{1} << 18;  // less than a thread's start costs
  auto zero = [&array](std::size_t begin, std::size_t end) {
    std::fill(array.data() + begin, array.data() + end, T{});
  };
  if (count < kOneThreadBelow)
    zero(0, count);
  else
    parallel_ranges(count, zero);
  return array;
}

// `words` with every word transformed by `t` (the input of a timed launch as its set holds it, the
// output a check expects from it), in a HostArray that each core copies and transforms its share of.
template <std::ranges::contiguous_range Words>
auto transformed(const Words& words, const WordTransform& t) {
  using Word = std::ranges::range_value_t<Words>;
  static_assert(sizeof(Word) == 4 && std::is_trivially_copyable_v<Word>, "a WordTransform acts on 4-byte words");
  const std::span<const Word> in(words);
  HostArray<Word> out(in.size());
  auto copy = [&](std::size_t begin, std::size_t end) {
    std::copy(in.begin() + begin, in.begin() + end, out.begin() + begin);
    t.apply(out.data() + begin, (end - begin) * sizeof(Word));
  };
  constexpr std::size_t kOneThreadBelow = std::size_t{1} << 18;
  if (in.size() < kOneThreadBelow)
    copy(0, in.size());
  else
    parallel_ranges(in.size(), copy);
  return out;
}

}  // namespace gpulab
