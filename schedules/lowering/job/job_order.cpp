#include "schedules/lowering/job/job_step_parts.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "schedules/pipeline/forward_backward_pairs.hpp"

namespace stepsim {

// Part 1: the schedule's action lists for the layout's pipeline; SpecError at the layout key at fault.
PipelinePlan job_pipeline_plan(const JobLayout& l) {
  PipelineSpec ps;
  ps.stages = l.pp;
  ps.microbatches = static_cast<int>(l.microbatches());
  ps.schedule = l.schedule;
  const ScheduleFamily* fam = find_schedule(l.schedule);
  ps.virtual_stages = fam && fam->takes_virtual_stages ? l.vpp : 0;
  if (static_cast<std::int64_t>(l.pp) * std::max(1, ps.virtual_stages) > kMaxPipelineStages)
    throw SpecError("layout.pp", fmt::format("pp {} x virtual_stages {} is too many: a pipeline has at most {} stages",
                                             l.pp, std::max(1, ps.virtual_stages), kMaxPipelineStages));
  if (fam && !fam->takes_virtual_stages && l.vpp > 1)
    throw SpecError("layout.virtual_stages", fmt::format("schedule '{}' runs one chunk per device; virtual_stages {} "
                                                         "needs interleaved-1f1b",
                                                         l.schedule, l.vpp));
  try {
    PipelinePlan plan = plan_for(ps);
    return l.overlap_ep_a2a ? pair_forward_backward(std::move(plan)) : plan;
  } catch (const SpecError& e) { throw SpecError("layout.schedule", e.what()); }
}

// The schedule's placement must be the one the communication plan costed (device_chunks): each
// stage on a device that holds it, on every route.
void check_placement(const PipelinePlan& plan, const JobCommPlan& comm) {
  if (plan.stages != static_cast<int>(comm.chunks.size()))
    throw std::logic_error(
        fmt::format("job lowering: schedule has {} stages, costs {}", plan.stages, comm.chunks.size()));
  for (const auto& route : plan.routes)
    for (int s = 0; s < plan.stages; ++s) {
      const auto& held = comm.device_chunks.at(static_cast<std::size_t>(route[static_cast<std::size_t>(s)]));
      if (std::find(held.begin(), held.end(), s) == held.end())
        throw std::logic_error(fmt::format("job lowering: stage {} placed on device {} that does not hold it", s,
                                           route[static_cast<std::size_t>(s)]));
    }
}

}  // namespace stepsim
