#pragma once
// `stepsim search FILE --export OUT.yaml [--pick N]`: one layout the search listed, written as a
// job_step scenario (the search's model and hardware, the layout's card count, every layout key
// it ran with), which `stepsim run` simulates to the same step, to the nanosecond, and which
// `--trace`, `--html` and a `job:` section then take further.
#include <cstdint>
#include <string>
#include <vector>

#include "cli/input/search_input.hpp"

namespace stepsim::cli {

// Which layout: the `pick`-th listed (from 1), or with `cards` the per-card table's best at that
// count (soonest to finish, else fastest).
struct ExportChoice {
  int pick = 1;
  std::int64_t cards = 0;
};

// The scenario text for the layout `choice` names in the search `sc`, run with the --set
// overrides `sets` (named in its header). `out_path` is where it will be written: the `file:`
// paths of the model and hardware are rewritten relative to its folder. Throws InputError at
// --pick when the search listed fewer layouts, at --cards for a count not searched or without a
// layout that fits, at --export when none fits at all.
std::string search_layout_scenario(const SearchScenario& sc, const std::vector<std::string>& sets,
                                   const SearchResult& r, const ExportChoice& choice, const std::string& out_path);

}  // namespace stepsim::cli
