#pragma once
// The parts of a job step's lowering (job_step.hpp: the order, the communication plan, the op
// emission) and the reading of its run, as run_job_step (job_step.cpp) calls them.
#include "schedules/lowering/job/job_step.hpp"

namespace stepsim {

// Part 1 (job_order.cpp): the schedule's action lists for the layout's pipeline (SpecError at the
// layout key at fault), and the check that its placement is the one the communication plan costed.
PipelinePlan job_pipeline_plan(const JobLayout& l);
void check_placement(const PipelinePlan& plan, const JobCommPlan& comm);

// Part 3 (job_emission.cpp): the ops of the step on the engine, run: the pipeline path (the stage
// ops, sends and in-pass collectives, then each device's DP collectives and optimizer), or the
// ZeRO-3 path through the data-parallel lowering. Each fills run.pipeline or run.fsdp, run.kinds
// and run.timeline.
void run_pipeline_path(JobStepRun& run);
void run_fsdp_path(JobStepRun& run);

// What limits the step (job_critical_path.cpp): the critical path summed per kind of op and per
// resource, and the exposed communication by kind read from it; `tail` is time appended after the
// graph (the FSDP path's optimizer).
void critical_shares(JobStepRun& run, bool fsdp, Time tail);

}  // namespace stepsim
