#pragma once
// `stepsim search FILE --export OUT.yaml [--pick N,...]`: a layout the search listed written as a
// job_step scenario (the search's model and hardware, the layout's card count, every layout key
// it ran with), which `stepsim run` simulates to the same step, to the nanosecond, and which
// `--trace`, `--html` and a `job:` section then take further; several, the others as its variants.
#include <cstdint>
#include <string>
#include <vector>

#include "cli/input/search_input.hpp"

namespace stepsim::cli {

// Which layouts: the listed ones `picks` names (from 1), or with `cards` the per-card table's
// best at those counts (soonest to finish, else fastest). The first is the scenario's step; the
// others, if any, its `variants:` (each the keys where it differs), which `stepsim compare` runs
// beside it.
struct ExportChoice {
  std::vector<int> picks = {1};
  std::vector<std::int64_t> cards;
};

// Searched around a job step (SearchSpec::around), its own layout is exported too, the variant
// `own`, so that `compare` puts it beside the search's, unless it is one of those `choice` names.
bool exports_own_layout(const SearchResult& r, const ExportChoice& choice);

// The scenario text for the layouts `choice` names in the search `sc`, run with the --set
// overrides `sets` (named in its header). `out_path` is where it will be written: the `file:`
// paths of the model and hardware are rewritten relative to its folder. Throws InputError at
// --pick for a pick past the listed layouts or named twice, at --cards for a count not searched,
// named twice or without a layout that fits, at --export when none fits at all.
std::string search_layout_scenario(const SearchScenario& sc, const std::vector<std::string>& sets,
                                   const SearchResult& r, const ExportChoice& choice, const std::string& out_path);

// What can be refused before the search: a pick past the listing's length (--top), a card count
// the search does not take, a value named twice. InputError at --pick / --cards.
void check_export_choice(const SearchSpec& spec, const ExportChoice& choice);

}  // namespace stepsim::cli
