#pragma once
// `stepsim search FILE` (layout search over a `search:` scenario) and `stepsim search merge`.
#include <CLI/CLI.hpp>

namespace stepsim::cli {

void add_search_command(CLI::App& app);

}  // namespace stepsim::cli
