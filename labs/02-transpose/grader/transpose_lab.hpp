// 02-transpose: the student's functions, as the driver calls them on either backend.
#pragma once
#include <functional>
#include <string>

#include "gpulab/device.hpp"

namespace gpulab::labs {

// Transposes `in` (rows x cols, row-major) into `out` (cols x rows).
using TransposeLaunch = std::function<void(Buffer& in, Buffer& out, int rows, int cols)>;
TransposeLaunch bind_transpose(Device& device, const std::string& function);

}  // namespace gpulab::labs
