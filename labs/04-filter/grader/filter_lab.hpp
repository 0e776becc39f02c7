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

// The harness's own kernel of a task's design, for the staff_fraction bound (timed in the same run,
// so the bound scales with the GPU as the task does): "box_tiled", the tiled box filter of the
// skeleton's TODOs (a 32 x 8 tile with its halo, row sums then column sums); "median5", the 5x5
// median of the reference (two channels per 32-bit word, forgetful selection, 2 x 2 outputs per
// thread). Both filter `in` into `out` as the task's contract says.
using StaffLaunch = std::function<void(Buffer& in, Buffer& out, int width, int height, int radius)>;
StaffLaunch staff_filter(Device& device, const std::string& function);

}  // namespace gpulab::labs
