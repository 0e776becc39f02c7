// 08-nbody: the student's functions and the harness's naive kernel, as the driver calls them on
// either backend.
#pragma once
#include <functional>
#include <string>

#include "gpulab/device.hpp"

namespace gpulab::labs {

// accel[i] (ax, ay, az, 0) = the softened gravitational acceleration of body i from all n bodies
// (x, y, z, mass): float4 buffers of n elements each.
using NbodyLaunch = std::function<void(Buffer& bodies, Buffer& accel, int n, float softening2)>;
NbodyLaunch bind_nbody(Device& device, const std::string& function);

// The harness's own naive kernel (one thread per body, bodies read from global memory, a square root
// and a division per interaction): the naive_speedup baseline.
NbodyLaunch harness_naive_nbody(Device& device);

}  // namespace gpulab::labs
