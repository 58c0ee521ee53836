#pragma once
// The `job:` section of a scenario: a whole training run (steps, failures, checkpoints) with an
// optional input pipeline and straggler model. Read once into plain structs; intervals given as
// durations are kept as durations until the step time is known (it may come from the stragglers).
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "cli/input/input.hpp"
#include "cli/input/job_step_input.hpp"
#include "models/input_pipeline.hpp"
#include "models/job.hpp"
#include "models/plan.hpp"
#include "models/stragglers_sim.hpp"

namespace stepsim::cli {

struct JobScenario {
  JobSpec run;  // run.profile and run.checkpoint.every_steps are set by resolve_job()
  std::int64_t steps = 0;
  std::optional<Time> step_time;            // absent: E[step] from the stragglers
  std::optional<Time> every;                // checkpoint interval as a duration...
  std::optional<std::int64_t> every_steps;  // ...or as steps...
  bool every_young = false;                 // ...or Young's optimum for the job's pause and MTBF (`young`)
  std::vector<Time> compare;                // extra intervals to sweep (durations)
  int runs = 1000;
  std::uint64_t seed = 1;
  std::optional<InputSpec> input;
  std::optional<StragglerSpec> stragglers;
  // The scenario's plan supplies cards and step time: one job per plan case (see cmd_job.cpp).
  bool per_plan_case = false;
  // The scenario's job_step supplies the step time: simulated before the runs (analyse_job).
  bool step_from_job_step = false;
  // ... and with variants, one job per variant, the base first: each its own step, cards (unless
  // the job gives `cards`: every case's), steps from `tokens` and checkpoint size (cmd_job.cpp).
  bool per_variant = false;
  bool cards_given = false;  // `cards` in the job: the cards whose failures count, in every case
  std::optional<std::int64_t> tokens;  // the run's tokens, where given (beside a job step)
  bool size_from_state = false;        // the checkpoint's size is the job step's recoverable state
  // The key the steps were given by (`tokens` beside a job step), for a message about them.
  std::string steps_key = "steps";
};

// Reads `job:`; `src` is the scenario's source (for list elements' file:line errors). With the
// scenario's `plan` (a timed plan with cases), keys the job leaves out come from it: steps, card
// MTBF, restore, deadline, reserved days, the checkpoint's size, storage bandwidth and interval;
// without `step_time` and `cards`, one job runs per plan case with the case's cards and step time.
// With the scenario's `job_step` instead, the job runs that step: its step time (simulated, unless
// `step_time` is given), its GPUs as the cards, its recoverable state as the checkpoint's size,
// and `tokens` (or `steps`) at its global batch of sequences per step; with the job step's
// variants, one job per variant, each with its own (JobScenario::per_variant).
JobScenario read_job(const Reader& r, std::shared_ptr<const Source> src, const PlanSpec* plan = nullptr,
                     const JobStepScenario* job_step = nullptr);

}  // namespace stepsim::cli
