#pragma once
// What an MoE layer run looks like to people and scripts: tables, a JSON summary, a Chrome trace.
// Everything is derived from the MoeLayerRun (loads, program, timeline, stats); nothing re-runs.
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/reports/trace_writer.hpp"
#include "schedules/lowering/moe/moe_layer.hpp"

namespace stepsim::cli {

nlohmann::ordered_json moe_summary_json(const MoeLayerRun& run, const std::string& variant);
// The layer's routing, then one row per card, then the phases.
std::string moe_run_text(const MoeLayerRun& run);
// One row per variant; expert compute and layer time relative to the first row.
std::string moe_compare_text(const std::vector<std::pair<std::string, const MoeLayerRun*>>& runs);
// A process per card with its compute stream (one slice per expert) and its link (dispatch,
// combine); the barriers on an "all-to-all" track.
void moe_trace(TraceWriter& out, const MoeLayerRun& run);

}  // namespace stepsim::cli
