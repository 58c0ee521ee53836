#pragma once
// Pictures of an rl run (`run --html`, `run --gantt`): per loop variant a timeline with a track per
// worker (generation: a bar per stretch of a trajectory generated with one policy version, the
// trajectory id on it, and the weight syncs; verification; learning: a bar per batch), all loops
// on one time axis; per switch order of the shared card a track of its steps; per weight
// distribution a track per sender link. Built from the RlRun; nothing re-runs.
#include <string>
#include <vector>

#include "cli/reports/timeline_pages.hpp"
#include "schedules/lowering/rl/rl_run.hpp"

namespace stepsim::cli {

std::vector<TitledTimeline> rl_timelines(const RlRun& run);
// The bars those timelines draw: a generation stretch, a verification, a learning batch, a weight
// sync that takes time, a shared card's step, a send (a trajectory's many generation ops are one bar
// per policy version).
std::size_t rl_drawn_bars(const RlRun& run);

std::string rl_html_report(const std::string& title, const std::string& description, const std::string& text_report,
                           const RlRun& run);
std::string rl_gantt_text(const RlRun& run, int width);

}  // namespace stepsim::cli
