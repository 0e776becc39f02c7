// 00-hello: the student's function, as the driver calls it on either backend. Unlike later labs it
// takes host memory: managing device memory is the point of the exercise.
#pragma once
#include <functional>
#include <string>

#include "gpulab/device.hpp"

namespace gpulab::labs {

// result[i] = text[i] + offsets[i] for i < n, computed on the device.
using HelloLaunch = std::function<void(const char* text, const int* offsets, char* result, int n)>;
HelloLaunch bind_hello(Device& device, const std::string& function);

}  // namespace gpulab::labs
