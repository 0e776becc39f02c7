// 04-filter: the student's filters, as the driver calls them on either backend.
#pragma once
#include <functional>
#include <string>

#include "gpulab/device.hpp"

namespace gpulab::labs {

// Filters `in` (width x height RGBA8 pixels) into `out`. `temp` is a scratch image of the same
// size (the gaussian's intermediate); `radius` is the filter's (the medians ignore it: theirs is fixed).
using FilterLaunch = std::function<void(Buffer& in, Buffer& temp, Buffer& out, int width, int height, int radius)>;
FilterLaunch bind_filter(Device& device, const std::string& function);

}  // namespace gpulab::labs
