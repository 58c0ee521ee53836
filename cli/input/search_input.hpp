#pragma once
// The `search:` section of a scenario (docs/search.md): a job_step whose layout values may be
// lists or `auto`, a range of card counts, and optionally the run to finish by a deadline.
//
//   search:
//     model: {file: models/gpt3-175b.yaml}
//     hardware: {file: hardware/a100-calibrated.yaml, gpus: 1024}   # or [32, 48], or {from, to, step}
//     layout: {tp: auto, pp: auto, virtual_stages: auto, micro_batch: [1, 2], recompute: auto,
//              schedule: auto, zero: [0, 1], global_batch: 1536, ...}
//     task: {tokens: 100e9, deadline: 30d, reserved: 5d}
//     checkpoint: {bandwidth: 7GB/s, restore: 120s, interval: 1800s, card_mtbf: 337d}
//     top: 10
//     rank: time            # time, cost (cards x time) or days
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "cli/input/input.hpp"
#include "schedules/lowering/search/layout_search.hpp"
#include "sim/time.hpp"

namespace stepsim::cli {

struct SearchScenario {
  std::string file, name, description;
  SearchSpec spec;
  std::shared_ptr<const Source> source;
  // Searched around a job step: the file as written (source is the search made of it), where
  // `job_step.*` keys have their lines.
  std::shared_ptr<const Source> step_source;
  // An error of the job step's own layout, found when it runs (a schedule its blocking sends
  // deadlock): refused at its key under `job_step.layout`, as `stepsim run` refuses it.
  [[noreturn]] void fail_step(const SpecError& e) const;
  // A figure past what time or bytes can hold, found while searching: refused at the section.
  [[noreturn]] void fail_section(const OverflowError& e) const;
};

// The layout keys a search around a job step opens (`auto`): how the model is split over the
// GPUs, what is kept and recomputed, and the pipeline's order. DP is what the cards leave; every
// other key stays as the step has it.
inline constexpr std::array<const char*, 8> kAroundKeys = {
    "tp", "pp", "virtual_stages", "schedule", "micro_batch", "recompute", "zero", "sequence_parallel"};

// A file with a `search:` section, or a job_step scenario searched around its step (its model,
// hardware and fixed layout keys, kAroundKeys opened; SearchSpec::around its own layout).
// Throws InputError (file:line: key: message).
SearchScenario load_search(const std::string& file, const std::vector<std::string>& overrides = {});
SearchScenario parse_search(const std::string& text, const std::string& name,
                            const std::vector<std::string>& overrides = {});

// The most candidates a search may enumerate (bad input beyond it: no unbounded work).
inline constexpr std::int64_t kMaxSearchSpace = 20'000'000;

}  // namespace stepsim::cli
