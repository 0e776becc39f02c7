// The OpenCL backend, for the CLI's device list and the labs' OpenCL bindings.
#pragma once
#include <memory>
#include <vector>

#include "gpulab/device.hpp"
#include "gpulab/student/opencl.hpp"

namespace gpulab::opencl {

std::vector<DeviceInfo> list_devices();
std::unique_ptr<Device> open_device(const DeviceInfo& info);
cl_mem memory(Buffer& buffer);
// The lab handle student launch functions receive: queue, context and the built kernels.
const OpenCLLab& lab(Device& device);
// A kernel of the harness's own (a calibration baseline), built from `source` once per device.
// The device owns it.
cl_kernel harness_kernel(Device& device, const std::string& source, const char* name);
// Replaces the compiler's placeholder for the source ("<source>", "<kernel>", "input.cl", ...)
// with the student's file name, so build logs read "transpose.cl:12:5: error: ...".
std::string name_source_in_log(const std::string& log, const std::string& file);

}  // namespace gpulab::opencl
