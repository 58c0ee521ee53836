#pragma once
// What an rl run looks like to people and scripts: tables, a JSON summary, a Chrome trace.
// Everything is derived from the RlRun (programs, timelines, stats); nothing re-runs.
#include <string>

#include <nlohmann/json.hpp>

#include "cli/reports/trace_writer.hpp"
#include "schedules/lowering/rl/rl_run.hpp"

namespace stepsim::cli {

nlohmann::ordered_json rl_summary_json(const RlRun& run, const RlSpec& scenario);
std::string rl_run_text(const RlRun& run, const RlSpec& scenario);
// Per loop variant: a process per stage with a track per worker (trajectory segments by policy
// version, syncs, learner batches), queue lengths as counters, publishes on a "weights" track.
// Per switch order: the card's steps and its memory counter. Per distribution: a track per
// sender link.
void rl_trace(TraceWriter& out, const RlRun& run);

}  // namespace stepsim::cli
