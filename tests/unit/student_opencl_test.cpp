// The student's OpenCL helpers (gpulab/student/opencl.hpp): set_args takes buffers and values, and a
// host pointer in its place does not compile (a kernel cannot read host memory). And what the
// OpenCL device does with the queues student code creates, and a way around the guards refused.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "allowlist.hpp"
#include "gpulab/backend/opencl.hpp"
#include "gpulab/student/opencl.hpp"

using gpulab::kIsKernelArgument;

TEST_CASE("set_args accepts buffers, samplers and values, and refuses host pointers at compile time") {
  static_assert(kIsKernelArgument<cl_mem> && kIsKernelArgument<cl_sampler>);
  static_assert(kIsKernelArgument<int> && kIsKernelArgument<float> && kIsKernelArgument<cl_uint2>);
  static_assert(!kIsKernelArgument<float*> && !kIsKernelArgument<const int*> && !kIsKernelArgument<void*>);
  static_assert(!kIsKernelArgument<const char*> && !kIsKernelArgument<cl_mem*>);
  CHECK(kIsKernelArgument<cl_mem>);
  CHECK_FALSE(kIsKernelArgument<float*>);
}

// The guard around clCreateCommandQueue (grader/allowlist/opencl_guards.cpp) reports each queue the
// student's code creates here (common/opencl/opencl_device.cpp).
extern "C" void gpulab_student_queue_created(cl_command_queue queue);

TEST_CASE(
    "the OpenCL device's synchronisation, and so the end of a timed launch, waits for every queue student code "
    "created") {
  const auto device = gpulab::open_device("opencl", "");
  const gpulab::OpenCLLab& lab = gpulab::opencl::lab(*device);
  cl_int status = CL_SUCCESS;
  cl_event gate = clCreateUserEvent(lab.context(), &status);
  REQUIRE(status == CL_SUCCESS);
  cl_event work = nullptr;
  std::thread opener;
  // The timed launch, as a student's function: on a queue of its own, work that cannot finish
  // before a gate opens 300 ms later; the queue released, the work not waited for.
  const gpulab::LaunchTiming timing = device->time([&] {
    cl_command_queue student = clCreateCommandQueue(lab.context(), lab.device(), 0, &status);
    REQUIRE(status == CL_SUCCESS);
    gpulab_student_queue_created(student);  // as the guard around clCreateCommandQueue does
    REQUIRE(clEnqueueMarkerWithWaitList(student, 1, &gate, &work) == CL_SUCCESS);
    REQUIRE(clFlush(student) == CL_SUCCESS);
    clReleaseCommandQueue(student);
    opener = std::thread([gate] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      clSetUserEventStatus(gate, CL_COMPLETE);
    });
  });
  cl_int state = CL_QUEUED;
  clGetEventInfo(work, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state, nullptr);
  opener.join();
  CHECK(state == CL_COMPLETE);
  CHECK(timing.wall_ms >= 250);  // the wait is inside the timed region, and it counts
  CHECK(timing.counted_ms() == timing.wall_ms);
  clReleaseEvent(work);
  clReleaseEvent(gate);
  device->synchronize();  // nothing left: the finished queue was let go
}

TEST_CASE(
    "the OpenCL ICD dispatch table, through which a call skips the allowlist and the guards, is a refused header") {
  const auto patterns =
      gpulab::cli::load_header_patterns(std::filesystem::path(GPULAB_REPO) / "grader" / "allowlist" / "headers.txt");
  const std::vector<std::string> headers{"/usr/include/CL/cl_icd.h", "/usr/include/CL/cl_layer.h",
                                         "/usr/include/CL/cl.h", "/usr/include/CL/cl_ext.h"};
  std::vector<std::string> refused;
  for (const auto& r : gpulab::cli::refused_headers(headers, patterns, "/repo/common/include"))
    refused.push_back(r.header);
  CHECK(refused == std::vector<std::string>{"/usr/include/CL/cl_icd.h", "/usr/include/CL/cl_layer.h"});
}
