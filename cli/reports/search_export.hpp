#pragma once
// `stepsim search FILE --export OUT.yaml [--pick N]`: one layout the search listed, written as a
// job_step scenario (the search's model and hardware, the layout's card count, every layout key
// it ran with), which `stepsim run` simulates to the same step, to the nanosecond, and which
// `--trace`, `--html` and a `job:` section then take further.
#include <string>
#include <vector>

#include "cli/input/search_input.hpp"

namespace stepsim::cli {

// The scenario text for the `pick`-th (from 1) layout of `r.top` of the search `sc` run with the
// --set overrides `sets` (named in its header). `out_path` is where it will be written: the
// `file:` paths of the model and hardware are rewritten relative to its folder. Throws InputError
// at --pick when the search listed fewer layouts, at --export when none fits.
std::string search_layout_scenario(const SearchScenario& sc, const std::vector<std::string>& sets,
                                   const SearchResult& r, int pick, const std::string& out_path);

}  // namespace stepsim::cli
