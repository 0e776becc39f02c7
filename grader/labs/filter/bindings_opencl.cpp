// Calls the student's OpenCL host functions (labs/04-filter/filter_opencl.cpp) with buffers.
#include "filter_lab.hpp"
#include "gpulab/backend/opencl.hpp"
#include "lab_driver.hpp"

// The lab's contract: these signatures are fixed, the grader calls them.
void box_naive(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, int width, int height, int radius);
void box_tiled(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, int width, int height, int radius);
void gaussian(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem temp, cl_mem out, int width, int height, int radius);
void median3(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, int width, int height);
void median5(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, int width, int height);

namespace gpulab::labs {

FilterLaunch bind_filter(Device& device, const std::string& function) {
  using gpulab::OpenCLLab;
  using Launch = void (*)(const OpenCLLab&, cl_mem, cl_mem, cl_mem, int, int, int);
  // One shape for all: the harness passes what a function needs and drops the rest.
  static const std::map<std::string, Launch> functions{
      {"box_naive",
       [](const OpenCLLab& l, cl_mem in, cl_mem, cl_mem out, int w, int h, int r) { box_naive(l, in, out, w, h, r); }},
      {"box_tiled",
       [](const OpenCLLab& l, cl_mem in, cl_mem, cl_mem out, int w, int h, int r) { box_tiled(l, in, out, w, h, r); }},
      {"gaussian", [](const OpenCLLab& l, cl_mem in, cl_mem temp, cl_mem out, int w, int h,
                      int r) { gaussian(l, in, temp, out, w, h, r); }},
      {"median3",
       [](const OpenCLLab& l, cl_mem in, cl_mem, cl_mem out, int w, int h, int) { median3(l, in, out, w, h); }},
      {"median5",
       [](const OpenCLLab& l, cl_mem in, cl_mem, cl_mem out, int w, int h, int) { median5(l, in, out, w, h); }},
  };
  const Launch f = find_function(functions, function);
  const OpenCLLab& lab = opencl::lab(device);
  return [f, &lab](Buffer& in, Buffer& temp, Buffer& out, int width, int height, int radius) {
    f(lab, opencl::memory(in), opencl::memory(temp), opencl::memory(out), width, height, radius);
  };
}

}  // namespace gpulab::labs
