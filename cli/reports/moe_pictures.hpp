#pragma once
// Pictures of an MoE layer run (`run --html`, `run --gantt`, and the same for `compare`): per card
// its compute stream (one bar per local expert, the expert id on the bar) and, below it, its link
// (the dispatch and combine all-to-all shares). Built from the MoeLayerRun; nothing re-runs. The
// zero-time barriers are not drawn: the link bars show where each all-to-all ends.
#include <string>
#include <utility>
#include <vector>

#include "cli/reports/charts.hpp"
#include "schedules/lowering/moe/moe_layer.hpp"

namespace stepsim::cli {

TimelineChart moe_timeline(const MoeLayerRun& run);

// The runs (the base layer, then the variants of `compare`) on one time axis.
std::string moe_html_report(const std::string& title, const std::string& description, const std::string& text_report,
                            const std::vector<std::pair<std::string, const MoeLayerRun*>>& runs);
std::string moe_gantt_text(const std::vector<std::pair<std::string, const MoeLayerRun*>>& runs, int width);

}  // namespace stepsim::cli
