#include "schedules/lowering/pipeline/pipeline_spec.hpp"
#include "sim/checked.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

namespace stepsim {

namespace {

// Calls f(action-kind, stage, micro) for every simple action of a list, both halves of pairs.
template <class F>
void for_each_simple(const std::vector<std::vector<Action>>& lists, F&& f) {
  for (int d = 0; d < static_cast<int>(lists.size()); ++d)
    for (const Action& a : lists[d]) {
      if (a.kind == ActionKind::OverlapFB) {
        f(d, ActionKind::Forward, a.stage, a.micro);
        f(d, a.kind2, a.stage2, a.micro2);
      } else {
        f(d, a.kind, a.stage, a.micro);
      }
    }
}

// A hand-written schedule says where each stage runs by where its actions are listed (as
// PyTorch's _validate_schedule infers stage_index_to_group_rank). A stage's home is the device
// holding most of its actions (ties: the lower device). A micro-batch whose actions for the stage
// sit on another device, by majority with ties going home, takes that device instead: this is
// how mirrored routes (DualPipe) are expressed. Distinct per-micro-batch placements are routes.
// Actions listed on a device other than the one chosen are then reported by check_plan.
PipelinePlan custom_plan(const PipelineSpec& spec) {
  const int p = spec.stages, m = spec.microbatches;
  int stages = p;  // at least one stage per device; more if the actions name them
  bool split = false;
  for_each_simple(spec.custom_actions, [&](int, ActionKind k, int s, int) {
    // Stage s needs s + 1 stages, which must fit the int a stage count is held in.
    if (s >= std::numeric_limits<int>::max())
      throw SpecError("pipeline.actions", fmt::format("stage {} is too large (stages are numbered 0 to {})", s,
                                                      std::numeric_limits<int>::max() - 1));
    stages = std::max(stages, s + 1);
    split = split || k == ActionKind::BackwardInput || k == ActionKind::BackwardWeight;
  });
  const std::int64_t virtual_total = static_cast<std::int64_t>(p) * spec.virtual_stages;  // both ints: fits
  if (spec.virtual_stages > 0 && stages != virtual_total)
    throw SpecError("pipeline.virtual_stages",
                    fmt::format("the custom actions name {} stages, but stages x virtual_stages = {} x {} = {}", stages,
                                p, spec.virtual_stages, virtual_total));
  // votes[s][d] over the stage; per[(s, i)][d] for one micro-batch.
  std::vector<std::vector<int>> votes(stages, std::vector<int>(p, 0));
  std::map<std::pair<int, int>, std::vector<int>> per;
  for_each_simple(spec.custom_actions, [&](int d, ActionKind, int s, int i) {
    if (s < 0 || i < 0 || i >= m) return;  // check_plan reports it
    ++votes[s][d];
    auto& v = per[{s, i}];
    v.resize(p, 0);
    ++v[d];
  });
  const auto majority = [&](const std::vector<int>& v, int prefer) {
    int best = prefer;
    for (int d = 0; d < p; ++d)
      if (v[d] > v[best]) best = d;
    return best;
  };
  std::vector<int> home(stages);
  for (int s = 0; s < stages; ++s) {
    const auto most = std::max_element(votes[s].begin(), votes[s].end());  // first of the largest
    home[s] = *most > 0 ? static_cast<int>(most - votes[s].begin()) : s % p;
  }
  PipelinePlan plan;
  plan.devices = p;
  plan.stages = stages;
  plan.microbatches = m;
  plan.split_backward = split || spec.custom_split_backward;
  std::map<std::vector<int>, int> route_ids;
  for (int i = 0; i < m; ++i) {
    std::vector<int> route = home;
    for (int s = 0; s < stages; ++s) {
      auto it = per.find({s, i});
      if (it != per.end()) route[s] = majority(it->second, home[s]);
    }
    auto [rit, fresh] = route_ids.try_emplace(route, static_cast<int>(plan.routes.size()));
    if (fresh) plan.routes.push_back(route);
    plan.route_of_micro.push_back(rit->second);
  }
  if (plan.routes.empty()) plan.routes.push_back(home);
  plan.actions = spec.custom_actions;
  return plan;
}

// Layers of each of `chunks` virtual stages (throws SpecError on a bad split).
std::vector<std::int64_t> chunk_layer_counts(const PipelineSpec& spec, int chunks) {
  std::vector<std::int64_t> counts;
  if (!spec.chunk_layers.empty()) {
    if (static_cast<int>(spec.chunk_layers.size()) != chunks)
      throw SpecError("pipeline.chunk_layers", fmt::format("lists {} chunks, but schedule '{}' runs {} virtual stages",
                                                           spec.chunk_layers.size(), spec.schedule, chunks));
    std::int64_t sum = 0;
    for (int n : spec.chunk_layers) {
      if (n < 1) throw SpecError("pipeline.chunk_layers", "every chunk needs at least one layer");
      counts.push_back(n);
      sum += n;
    }
    if (spec.layers && sum != *spec.layers)
      throw SpecError("pipeline.chunk_layers",
                      fmt::format("adds up to {} layers, but layers is {}", sum, *spec.layers));
    return counts;
  }
  if (!spec.layers) return std::vector<std::int64_t>(chunks, 1);
  if (*spec.layers < chunks)
    throw SpecError("pipeline.layers", fmt::format("{} layers cannot be cut into {} chunks (schedule '{}')",
                                                   *spec.layers, chunks, spec.schedule));
  for (int c = 0; c < chunks; ++c) counts.push_back(*spec.layers / chunks + (c < *spec.layers % chunks ? 1 : 0));
  return counts;
}

// Floor of value * num / den without overflow.
std::int64_t scaled(std::int64_t value, std::int64_t num, std::int64_t den) {
  return static_cast<std::int64_t>(static_cast<__int128>(value) * num / den);
}

}  // namespace

PipelinePlan plan_for(const PipelineSpec& spec) {
  if (spec.stages < 1) throw SpecError("pipeline.stages", "stages must be at least 1");
  if (spec.microbatches < 1) throw SpecError("pipeline.microbatches", "microbatches must be at least 1");
  if (spec.virtual_stages < 0) throw SpecError("pipeline.virtual_stages", "virtual_stages must be at least 1");
  PipelinePlan plan;
  if (spec.schedule == "custom") {
    if (static_cast<int>(spec.custom_actions.size()) != spec.stages)
      throw SpecError("pipeline.actions", fmt::format("custom schedule lists {} devices, pipeline has {} stages",
                                                      spec.custom_actions.size(), spec.stages));
    plan = custom_plan(spec);
  } else {
    const ScheduleFamily* family = find_schedule(spec.schedule);
    if (!family) {
      throw SpecError("pipeline.schedule", fmt::format("unknown schedule '{}' (known: {})", spec.schedule,
                                                       fmt::join(schedule_names(), ", ")));
    }
    const ScheduleRequest req{spec.stages, spec.microbatches, spec.virtual_stages};
    if (auto why = family->check(req)) throw SpecError("pipeline.schedule", fmt::format("{}: {}", family->name, *why));
    try {
      plan = family->build(req);
    } catch (const std::length_error& e) {  // more virtual stages than an action holds
      throw SpecError("pipeline.stages", fmt::format("{}: {}", family->name, e.what()));
    }
  }
  const auto problems = check_plan(plan);
  if (!problems.empty()) {
    // One line: the first problem, and how many more (a bad list can have thousands).
    const std::string more = problems.size() > 1 ? fmt::format(" (and {} more)", problems.size() - 1) : "";
    throw SpecError(spec.schedule == "custom" ? "pipeline.actions" : "pipeline.schedule",
                    fmt::format("schedule '{}' is not a valid plan: {}{}", spec.schedule, problems.front(), more));
  }
  return plan;
}

PipelineCosts costs_for(const PipelineSpec& spec, const PipelinePlan& plan) {
  const auto need = [&](const std::vector<Time>& v, const char* key) {
    if (static_cast<int>(v.size()) != spec.stages)
      throw SpecError(
          fmt::format("pipeline.time.{}", key),
          fmt::format("schedule '{}' needs time.{} ({} values, got {})", spec.schedule, key, spec.stages, v.size()));
  };
  // Which backward forms the plan uses: full B (alone or in an overlapped pair), split I/W.
  bool uses_full = false, uses_split = false;
  for_each_simple(plan.actions, [&](int, ActionKind k, int, int) {
    uses_full = uses_full || k == ActionKind::Backward;
    uses_split = uses_split || k == ActionKind::BackwardInput || k == ActionKind::BackwardWeight;
  });
  need(spec.forward, "forward");
  need(spec.update, "update");
  const bool have_split = spec.backward_input.size() == static_cast<std::size_t>(spec.stages) &&
                          spec.backward_weight.size() == static_cast<std::size_t>(spec.stages);
  const bool have_b = spec.backward.size() == static_cast<std::size_t>(spec.stages);
  if (uses_split) {
    need(spec.backward_input, "backward_input");
    need(spec.backward_weight, "backward_weight");
  }
  if (uses_full && !have_split) need(spec.backward, "backward");

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

  // Chunk c runs on device routes[0][c] and gets its share of that device's per-stage values.
  // With mirrored routes (DualPipe) the first route places stage s on device s, so stage s costs
  // the scenario's stage-s values on either device.
  // Shares are cut at cumulative layer boundaries (floor(value * layers so far / device layers)),
  // so a device's chunks add up to its value exactly, in integer nanoseconds and bytes.
  const auto layers = chunk_layer_counts(spec, plan.stages);
  std::vector<std::int64_t> device_layers(spec.stages, 0), before(plan.stages, 0);
  for (int c = 0; c < plan.stages; ++c) {
    const int d = plan.routes[0][c];
    before[c] = device_layers[d];
    device_layers[d] += layers[c];
  }
  costs.stages.resize(plan.stages);
  for (int c = 0; c < plan.stages; ++c) {
    const int d = plan.routes[0][c];
    const auto share = [&](std::int64_t value) {
      return scaled(value, before[c] + layers[c], device_layers[d]) - scaled(value, before[c], device_layers[d]);
    };
    StageCost& sc = costs.stages[c];
    sc.forward = share(spec.forward[d]);
    sc.backward_input = have_split ? share(spec.backward_input[d]) : 0;
    sc.backward_weight = have_split ? share(spec.backward_weight[d]) : 0;
    // Splitting a backward never changes its work: where B = I + W for the device, a chunk's B
    // is its I + W (shares of B, I and W are rounded separately otherwise).
    const bool b_is_sum = have_split && (!have_b || checked_add(spec.backward_input[d], spec.backward_weight[d]) ==
                                                        std::optional<Time>(spec.backward[d]));
    sc.backward = b_is_sum ? time_add(sc.backward_input, sc.backward_weight, "a backward (input + weight)")
                  : have_b ? share(spec.backward[d])
                           : 0;
    sc.activation = d < static_cast<int>(spec.activation.size()) ? share(spec.activation[d]) : 0;
  }
  return costs;
}

PipelineRun simulate_pipeline(const PipelineSpec& spec, MemoryDetail memory) {
  PipelineRun run;
  run.plan = plan_for(spec);
  const ScheduleFamily* family = find_schedule(spec.schedule);
  run.schedule = family ? family->name : spec.schedule;
  run.program = lower(run.plan, costs_for(spec, run.plan));
  run.timeline = stepsim::run(run.program->graph);
  run.stats = measure(run.plan, *run.program, run.timeline, memory);
  return run;
}

const std::vector<LevelCurve>& memory_curves(const PipelineRun& run, std::vector<LevelCurve>& storage) {
  if (!run.stats.memory.empty()) return run.stats.memory;
  storage = pipeline_memory(run.plan, *run.program, run.timeline);
  return storage;
}

}  // namespace stepsim
