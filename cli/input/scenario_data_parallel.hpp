#pragma once
// The `data_parallel:` scenario section: one DataParallelSpec, plus named variants (the same
// keys, applied over it) that `stepsim compare` runs side by side.
#include <string>
#include <utility>
#include <vector>

#include "cli/input/input.hpp"
#include "schedules/lowering/data_parallel/data_parallel_spec.hpp"

namespace stepsim::cli {

using DataParallelScenario = SpecWithVariants<DataParallelSpec>;

DataParallelScenario read_data_parallel(const Reader& r);

}  // namespace stepsim::cli
