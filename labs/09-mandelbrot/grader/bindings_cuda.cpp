// Calls the student's CUDA functions (labs/09-mandelbrot/mandelbrot.cu) with a device pointer; the
// harness's naive kernel is the calibration.
#include "baselines_cuda.hpp"
#include "gpulab/backend/cuda.hpp"
#include "lab_driver.hpp"
#include "mandelbrot_lab.hpp"

// The lab's contract: these signatures are fixed, the grader calls them.
void mandelbrot_by_pixel(unsigned* counts, int width, int height, float x0, float y0, float dx, float dy, int max_iter,
                         int julia, float cx, float cy);
void mandelbrot_balanced(unsigned* counts, int width, int height, float x0, float y0, float dx, float dy, int max_iter,
                         int julia, float cx, float cy);

namespace gpulab::labs {

namespace {
using Function = void (*)(unsigned*, int, int, float, float, float, float, int, int, float, float);

MandelbrotLaunch on_pointer(Function f) {
  return [f](Buffer& counts, int width, int height, const reference::View& v) {
    f(cuda::pointer<unsigned>(counts), width, height, v.x0, v.y0, v.dx, v.dy, v.max_iter, v.julia ? 1 : 0, v.cx, v.cy);
  };
}
}  // namespace

MandelbrotLaunch bind_mandelbrot(Device&, const std::string& function) {
  static const std::map<std::string, Function> functions{{"mandelbrot_by_pixel", mandelbrot_by_pixel},
                                                         {"mandelbrot_balanced", mandelbrot_balanced}};
  return on_pointer(find_function(functions, function));
}

MandelbrotLaunch harness_naive_mandelbrot(Device&) { return on_pointer(mandelbrot_cuda::launch_naive); }

}  // namespace gpulab::labs
