#include "models/plan.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "models/compute.hpp"
#include "models/deadline.hpp"
#include "models/step_memory.hpp"
#include "models/stragglers.hpp"
#include "sim/checked.hpp"

namespace stepsim {

int PlanSpec::max_cards() const {
  const std::int64_t mb = std::max(microbatch_sequences, 1);
  // Cards are counted in an int: a batch that could keep more busy keeps every card a plan takes.
  return static_cast<int>(
      std::clamp<std::int64_t>(sequences_per_step / mb, 1, std::numeric_limits<int>::max()));
}

PlanCase cards_case(int cards, std::string name) {
  PlanCase c;
  c.cards = cards;
  c.name = std::move(name);
  return c;
}

PlanSpec with_case(const PlanSpec& spec, const PlanCase& c) {
  PlanSpec s = spec;
  if (c.efficiency) s.efficiency = *c.efficiency;
  if (c.exposed_comm) s.exposed_comm = *c.exposed_comm;
  if (c.input_wait) s.input_wait = *c.input_wait;
  if (c.zero_stage) s.zero_stage = *c.zero_stage;
  if (c.recompute) s.recompute = *c.recompute;
  return s;
}

namespace {

std::int64_t tokens_per_microbatch(const PlanSpec& spec) {
  return spec.sequence * std::max(spec.microbatch_sequences, 1);
}

StepMemoryInputs step_memory_inputs(const PlanSpec& spec, int cards) {
  StepMemoryInputs in;
  in.resident = resident_state(spec.model.parameters, spec.format, spec.zero_stage, cards);
  in.prefetch = spec.prefetch;
  if (spec.workspace) {
    in.workspace = spec.workspace;
    return in;
  }
  const std::int64_t tokens = tokens_per_microbatch(spec);
  if (spec.model.shape) {
    const TransformerConfig& c = *spec.model.shape;
    const ParameterCount p = count_parameters(c);
    in.layers = c.layers;
    in.per_layer =
        layer_activation_bytes(transformer_layer_activations(c), spec.recompute, tokens, spec.activation_bytes);
    if (spec.zero_stage >= 3) {
      in.gathered_layer = p.per_layer * spec.format.weights;
      in.gathered_embedding = p.embedding * spec.format.weights;
      in.gathered_head = (c.tied_embeddings ? p.embedding : p.lm_head) * spec.format.weights;
    }
    if (spec.zero_stage >= 2) {
      in.layer_gradient = p.per_layer * spec.format.gradients;
      in.embedding_gradient = p.embedding * spec.format.gradients;
      in.head_gradient = p.lm_head * spec.format.gradients;
    }
    in.logits = 2 * tokens * c.vocab * spec.logit_bytes;  // logits and their gradient
  } else {
    in.layers = spec.model.layers;
    in.per_layer = layer_activation_bytes(uniform_layer_activations(spec.model.saved_arrays, spec.model.width),
                                          spec.recompute, tokens, spec.activation_bytes);
  }
  return in;
}

}  // namespace

MemoryPlan plan_memory(const PlanSpec& spec, int cards) {
  MemoryPlan m;
  const StepMemoryInputs in = step_memory_inputs(spec, cards);
  m.resident = in.resident;
  m.per_layer = in.per_layer;
  m.saved_activations = in.per_layer.saved * in.layers;
  m.sequence = step_memory_sequence(in);
  m.peak = peak_memory(m.sequence);
  m.planned = to_int64(static_cast<double>(m.peak.peak) * (1.0 + spec.margin)).value_or(INT64_MAX);  // saturates
  m.usable = spec.usable;
  return m;
}

StepCommSource spec_step_comm(const PlanSpec& spec) {
  return given_step_comm(spec.exposed_comm, spec.model.parameters * spec.format.weights, spec.link_bandwidth);
}

namespace {

TimePlan plan_time(const PlanSpec& spec, int cards, int microbatches, const StepCommSource& comm) {
  TimePlan t;
  t.steps = steps_for(spec.tokens, spec.tokens_per_step());
  t.flops_per_token = spec.flops_per_token ? *spec.flops_per_token
                      : spec.model.shape   ? training_flops_per_token(*spec.model.shape, spec.sequence)
                                           : 0.0;
  t.flops_per_sequence = flops_of(t.flops_per_token, spec.sequence);
  t.flops_per_step = flops_of(t.flops_per_sequence, spec.sequences_per_step);
  // The busiest card sets the step: it runs `microbatches` micro-batches.
  t.flops_per_card =
      flops_of(t.flops_per_sequence, static_cast<std::int64_t>(microbatches) * spec.microbatch_sequences);
  const double peak = spec.accelerator.peak_bf16_flops;
  t.compute = compute_time(t.flops_per_card, 1, peak, spec.efficiency);
  if (spec.straggler_sigma > 0) {
    const Time sigma = time_from_ns(spec.straggler_sigma * static_cast<double>(t.compute), "the straggler spread");
    t.straggler = expected_slowest(t.compute, sigma, cards) - t.compute;
  }
  t.comm =
      comm(StepShape{cards, microbatches, t.compute / std::max(microbatches, 1), spec.efficiency, spec.input_wait});
  t.input_wait = spec.input_wait;
  t.step = t.compute + t.straggler + t.comm.exposed + t.input_wait;

  t.checkpoint_bytes = spec.checkpoint_bytes.value_or(recoverable_state_bytes(spec.model.parameters, spec.format));
  t.checkpoint.save = transfer_time(t.checkpoint_bytes, spec.storage_bandwidth);
  t.checkpoint.restore = spec.restore;
  const Interruptions job{spec.card_mtbf, cards, spec.rollback_every};
  t.job_mtbf = job.mean_time_between();
  t.optimal_interval = optimal_checkpoint_interval(t.checkpoint, job);
  t.interval = spec.interval.value_or(t.optimal_interval);
  t.overhead = checkpoint_overhead(t.checkpoint, t.interval, job);
  t.checkpoint_write_rate = checkpoint_write_rate(t.checkpoint_bytes, t.interval);
  const double L = t.overhead.total();

  t.base_training = base_training_time(t.steps, t.step);
  t.completion = completion_time(spec.reserved, t.steps, t.step, L);
  t.deadline = spec.deadline;
  t.plain_budget = step_budget(spec.deadline, spec.reserved, t.steps, 0.0);
  t.budget = step_budget(spec.deadline, spec.reserved, t.steps, L);
  // What compute may take so that the step fits the budget; stragglers scale with compute.
  const double straggle = t.compute > 0 ? 1.0 + static_cast<double>(t.straggler) / static_cast<double>(t.compute) : 1.0;
  const Time compute_allowed = time_from_ns(
      std::trunc(static_cast<double>(t.budget - t.comm.exposed - t.input_wait) / straggle), "the compute time allowed");
  t.efficiency_needed = efficiency_needed(t.flops_per_card, 1, peak, compute_allowed);
  t.comm_may_grow_to = t.budget - t.compute - t.straggler - t.input_wait;
  return t;
}

}  // namespace

PlanResult evaluate_plan(const PlanSpec& shared, const PlanCase& c, const StepCommSource& comm) {
  const PlanSpec spec = with_case(shared, c);
  PlanResult r;
  r.name = c.name.empty() ? fmt::format("{} cards", c.cards) : c.name;
  r.cards = c.cards;
  r.hosts = static_cast<int>(ceil_div(c.cards, std::max(spec.cards_per_host, 1)));  // <= cards: fits
  r.efficiency = spec.efficiency;
  r.zero_stage = spec.zero_stage;
  r.recompute = spec.recompute;
  r.given_workspace = spec.workspace.has_value();
  const std::int64_t per_round = static_cast<std::int64_t>(c.cards) * std::max(spec.microbatch_sequences, 1);
  if (spec.timed() && per_round > 0) {
    r.microbatches_per_card = static_cast<int>((spec.sequences_per_step + per_round - 1) / per_round);
    r.uneven = spec.sequences_per_step % per_round != 0;
  }
  r.memory = plan_memory(spec, c.cards);
  if (spec.timed()) {
    // Without a source, the stand-in built from this case's own inputs: a case's or a sweep
    // point's exposed_comm then counts (a source built from the shared inputs would ignore it).
    r.time = plan_time(spec, c.cards, r.microbatches_per_card, comm ? comm : spec_step_comm(spec));
  }
  return r;
}

MemoryLevers memory_levers(const PlanSpec& spec, int cards) {
  MemoryLevers lv;
  const MemoryPlan now = plan_memory(spec, cards);
  lv.over = now.planned - now.usable;
  // More cards shrink only the sharded state, so the planned memory falls with the card count:
  // binary search for the fewest that fit.
  const int limit = spec.timed() ? spec.max_cards() : (1 << 20);
  if (cards < limit && plan_memory(spec, limit).fits()) {
    int lo = cards + 1, hi = limit;
    while (lo < hi) {
      const int mid = lo + (hi - lo) / 2;
      if (plan_memory(spec, mid).fits())
        hi = mid;
      else
        lo = mid + 1;
    }
    lv.cards = lo;
    lv.planned_at_cards = plan_memory(spec, lo).planned;
    const int host = std::max(spec.cards_per_host, 1);
    const std::int64_t whole = ceil_div(lo, host) * host;  // lo, host ints: no overflow in int64
    if (whole <= limit) {
      lv.whole_host_cards = static_cast<int>(whole);
      lv.planned_at_whole_hosts = plan_memory(spec, whole).planned;
    }
  }
  // Sharding over a group of one card changes nothing.
  for (int stage = spec.zero_stage + 1; cards > 1 && stage <= 3; ++stage) {
    PlanSpec s = spec;
    s.zero_stage = stage;
    const MemoryPlan m = plan_memory(s, cards);
    lv.options.push_back({fmt::format("ZeRO-{}", stage), m.planned, m.fits()});
  }
  if (!spec.workspace) {
    for (RecomputeKind k : {RecomputeKind::Selective, RecomputeKind::Full}) {
      PlanSpec s = spec;
      s.recompute = RecomputePolicy{k, 0};
      const MemoryPlan m = plan_memory(s, cards);
      if (m.planned < now.planned) lv.options.push_back({"recompute " + s.recompute.label(), m.planned, m.fits()});
    }
  }
  return lv;
}

DeadlineLevers deadline_levers(const PlanSpec& spec, const PlanCase& c, const StepCommSource& comm) {
  DeadlineLevers lv;
  const PlanResult now = evaluate_plan(spec, c, comm);
  if (now.time) lv.efficiency_needed = now.time->efficiency_needed;
  for (std::int64_t d = static_cast<std::int64_t>(c.cards) + 1; d <= spec.max_cards(); ++d) {
    PlanCase more = c;
    more.cards = static_cast<int>(d);  // <= max_cards(), an int
    more.name.clear();
    const PlanResult r = evaluate_plan(spec, more, comm);
    if (!r.ok()) continue;
    if (!lv.cards) {
      lv.cards = more.cards;
      lv.completion_at_cards = r.time ? r.time->completion : 0;
    }
    if (d % std::max(spec.cards_per_host, 1) == 0) {
      lv.whole_host_cards = more.cards;
      lv.completion_at_whole_hosts = r.time ? r.time->completion : 0;
      break;
    }
  }
  return lv;
}

}  // namespace stepsim
