// Calls the student's CUDA functions (labs/09-mandelbrot/mandelbrot.cu) with a device pointer; the
// harness's naive kernel is the calibration.
#include "baselines_cuda.hpp"
#include "gpulab/backend/cuda.hpp"
#include "lab_contract.hpp"  // the functions lab.toml's [signatures] and tasks declare
#include "lab_driver.hpp"
#include "mandelbrot_lab.hpp"

namespace gpulab::labs {

namespace {
using Function = contract::mandelbrot*;

MandelbrotLaunch on_pointer(Function f) {
  return [f](Buffer& counts, int width, int height, const reference::View& v) {
    f(cuda::pointer<unsigned>(counts), width, height, v.x0, v.y0, v.dx, v.dy, v.max_iter, v.julia ? 1 : 0, v.cx, v.cy);
  };
}
}  // namespace

MandelbrotLaunch bind_mandelbrot(Device&, const std::string& function) {
  return on_pointer(find_function(contract::mandelbrot_functions(), function));
}

MandelbrotLaunch harness_naive_mandelbrot(Device&) { return on_pointer(mandelbrot_cuda::launch_naive); }

}  // namespace gpulab::labs
