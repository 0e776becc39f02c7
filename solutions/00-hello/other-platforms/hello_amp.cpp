// Lab 00's hello world in C++ AMP (Microsoft's C++ extension; Visual C++ 2012-2019, deprecated
// since Visual Studio 2022). Not built by this project: no compiler for it runs on Linux.
#include <amp.h>

#include <vector>

// --8<-- [start:hello]
void hello(const char* text, const int* offsets, char* result, int n) {
  using namespace concurrency;
  std::vector<int> t(text, text + n), r(n);  // C++ AMP kernels have no char: one int per character
  array_view<const int, 1> text_view(n, t);  // views copy to the accelerator on first use
  array_view<const int, 1> offsets_view(n, offsets);
  array_view<int, 1> result_view(n, r);
  result_view.discard_data();  // nothing to copy in for the output
  parallel_for_each(result_view.extent, [=](index<1> i) restrict(amp) {
    result_view[i] = text_view[i] + offsets_view[i];  // the extent is exactly n: no bounds test
  });
  result_view.synchronize();  // waits for the kernel and copies the result back into r
  for (int i = 0; i < n; ++i) result[i] = static_cast<char>(r[i]);
}
// --8<-- [end:hello]
