#include "schedules/pipeline_spec.hpp"

#include <fmt/format.h>

namespace stepsim {

PipelinePlan plan_for(const PipelineSpec& spec) {
  if (spec.stages < 1) throw SpecError("pipeline.stages", "stages must be at least 1");
  if (spec.microbatches < 1) throw SpecError("pipeline.microbatches", "microbatches must be at least 1");
  if (spec.virtual_stages < 1) throw SpecError("pipeline.virtual_stages", "virtual_stages must be at least 1");
  PipelinePlan plan;
  if (spec.schedule == "custom") {
    if (static_cast<int>(spec.custom_actions.size()) != spec.stages)
      throw SpecError("pipeline.actions", fmt::format("custom schedule lists {} devices, pipeline has {} stages",
                                                      spec.custom_actions.size(), spec.stages));
    std::vector<int> placement(static_cast<std::size_t>(spec.stages) * spec.virtual_stages);
    for (std::size_t c = 0; c < placement.size(); ++c) placement[c] = static_cast<int>(c % spec.stages);
    plan = single_route_plan(spec.stages, placement, spec.microbatches, spec.custom_split_backward);
    plan.actions = spec.custom_actions;
  } else {
    const ScheduleFamily* family = find_schedule(spec.schedule);
    if (!family) {
      std::string known;
      for (const auto& n : schedule_names()) known += (known.empty() ? "" : ", ") + n;
      throw SpecError("pipeline.schedule", fmt::format("unknown schedule '{}' (known: {})", spec.schedule, known));
    }
    const ScheduleRequest req{spec.stages, spec.microbatches, spec.virtual_stages};
    if (auto why = family->check(req)) throw SpecError("pipeline.schedule", fmt::format("{}: {}", family->name, *why));
    plan = family->build(req);
  }
  const auto problems = check_plan(plan);
  if (!problems.empty()) {
    std::string text;
    for (const auto& p : problems) text += "\n  " + p;
    throw SpecError(spec.schedule == "custom" ? "pipeline.actions" : "pipeline.schedule",
                    fmt::format("schedule '{}' is not a valid plan:{}", spec.schedule, text));
  }
  return plan;
}

PipelineCosts costs_for(const PipelineSpec& spec, const PipelinePlan& plan) {
  const auto need = [&](const std::vector<Time>& v, const char* key) {
    if (static_cast<int>(v.size()) != spec.stages)
      throw SpecError(fmt::format("pipeline.time.{}", key),
                      fmt::format("schedule '{}' needs time.{} ({} values, got {})", spec.schedule, key, spec.stages, v.size()));
  };
  need(spec.forward, "forward");
  need(spec.update, "update");
  bool have_split = spec.backward_input.size() == static_cast<std::size_t>(spec.stages) &&
                    spec.backward_weight.size() == static_cast<std::size_t>(spec.stages);
  if (plan.split_backward) {
    need(spec.backward_input, "backward_input");
    need(spec.backward_weight, "backward_weight");
  } else if (!have_split) {
    need(spec.backward, "backward");
  }

  PipelineCosts costs;
  costs.update = spec.update;
  costs.latency = spec.latency;
  costs.bandwidth = spec.bandwidth;
  costs.message = spec.message;
  costs.overlap_fb = spec.overlap_fb;
  if (spec.wrap_latency && spec.stages > 1) {
    costs.hop_latency[{spec.stages - 1, 0}] = *spec.wrap_latency;
    costs.hop_latency[{0, spec.stages - 1}] = *spec.wrap_latency;
  }
  // Virtual stage c is a 1/v share of the device that runs it.
  const int v = plan.stages / spec.stages;
  costs.stages.resize(plan.stages);
  for (int c = 0; c < plan.stages; ++c) {
    const int d = plan.routes[0][c] % spec.stages;
    StageCost& sc = costs.stages[c];
    const bool have_b = spec.backward.size() == static_cast<std::size_t>(spec.stages);
    sc.forward = spec.forward[d] / v;
    sc.backward_input = have_split ? spec.backward_input[d] / v : 0;
    sc.backward_weight = have_split ? spec.backward_weight[d] / v : 0;
    sc.backward = have_b ? spec.backward[d] / v : sc.backward_input + sc.backward_weight;
    sc.activation = d < static_cast<int>(spec.activation.size()) ? spec.activation[d] / v : 0;
  }
  return costs;
}

PipelineRun simulate_pipeline(const PipelineSpec& spec) {
  PipelineRun run;
  run.plan = plan_for(spec);
  const ScheduleFamily* family = find_schedule(spec.schedule);
  run.schedule = family ? family->name : spec.schedule;
  run.program = lower(run.plan, costs_for(spec, run.plan));
  run.timeline = stepsim::run(run.program->graph);
  run.stats = measure(run.plan, *run.program, run.timeline);
  return run;
}

}  // namespace stepsim
