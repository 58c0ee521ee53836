#pragma once
// The capacity and deadline planner (the book's "deadline design desk", sections 10.1-10.6):
// for a training task on a number of cards, how much memory each card needs, how long a step
// takes, what checkpointing costs, and whether the run finishes by the deadline.
//
// PlanSpec is a plain struct of inputs (read from a scenario's `plan:` section); evaluate_plan
// combines the pieces: training_state + activations + step_memory (memory), compute, the
// StepCommSource seam (communication; see step_timing.hpp), checkpoint, stragglers, deadline.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/activations.hpp"
#include "models/checkpoint.hpp"
#include "models/hardware.hpp"
#include "models/memory_timeline.hpp"
#include "models/step_timing.hpp"
#include "models/training_state.hpp"
#include "models/transformer.hpp"

namespace stepsim {

struct PlanModel {
  std::string name;
  std::int64_t parameters = 0;
  std::optional<TransformerConfig> shape;  // a transformer: activations and FLOPs from its shapes
  // Without a shape (a model given by its parameter count, like the resource-bill chapter's):
  // `saved_arrays` arrays of `width` per token saved in each of `layers` layers.
  int layers = 0;
  std::int64_t width = 0;
  int saved_arrays = 0;
};

// One column of the plan table: a card count and what differs from the shared inputs.
struct PlanCase {
  std::string name;
  int cards = 1;
  std::optional<double> efficiency;
  std::optional<Time> exposed_comm;
  std::optional<Time> input_wait;
  std::optional<int> zero_stage;
  std::optional<RecomputePolicy> recompute;
};

struct PlanSpec {
  PlanModel model;
  Accelerator accelerator;
  int cards_per_host = 8;

  // Task. tokens == 0: a memory-only plan (no step time, no deadline).
  std::int64_t tokens = 0;
  std::int64_t sequence = 0;            // tokens per sequence
  std::int64_t sequences_per_step = 0;  // global batch
  int microbatch_sequences = 1;         // sequences a card processes at once

  Time deadline = 0;  // from the start
  Time reserved = 0;  // start-up, evaluation and planned pauses inside the deadline

  // Memory.
  StateFormat format;
  int zero_stage = 0;
  std::optional<Bytes> workspace;  // given activations + buffers; otherwise derived from shapes
  RecomputePolicy recompute;
  int activation_bytes = 2;  // bytes per saved activation element (BF16)
  int logit_bytes = 2;
  int prefetch = 1;   // ZeRO-3 layers gathered ahead
  double margin = 0;  // planning margin on the peak (0.25 = 25%)
  Bytes usable = 0;   // per card

  // Compute.
  double efficiency = 0.4;
  std::optional<double> flops_per_token;  // otherwise from the shape (training_flops_per_token)

  // Step waits beside compute. exposed_comm feeds the stand-in StepCommSource.
  Time exposed_comm = 0;
  Time input_wait = 0;
  std::int64_t link_bandwidth = 0;  // each card's link for the ZeRO-3 link time
  double straggler_sigma = 0;       // per-card compute standard deviation, fraction of compute

  // Checkpoints and interruptions.
  std::optional<Bytes> checkpoint_bytes;  // otherwise the recoverable state (14 B/param)
  std::int64_t storage_bandwidth = 0;
  Time restore = 0;
  std::optional<Time> interval;  // otherwise Young's optimum
  Time card_mtbf = 0;
  std::optional<Time> rollback_every;

  std::vector<PlanCase> cases;

  bool timed() const { return tokens > 0; }
  std::int64_t tokens_per_step() const { return sequence * sequences_per_step; }
  // The most cards the global batch can keep busy: one micro-batch each.
  int max_cards() const;
};

// A case that differs from the shared inputs only in its card count.
PlanCase cards_case(int cards, std::string name = "");

// The shared inputs with a case's differences applied.
PlanSpec with_case(const PlanSpec& spec, const PlanCase& c);

struct MemoryPlan {
  ResidentState resident;
  LayerActivationBytes per_layer;  // one micro-batch (derived mode)
  Bytes saved_activations = 0;     // all layers' saved activations, one micro-batch
  MemorySequence sequence;
  MemoryPeak peak;
  Bytes planned = 0;  // peak x (1 + margin)
  Bytes usable = 0;
  bool fits() const { return planned <= usable; }
};

struct TimePlan {
  std::int64_t steps = 0;
  double flops_per_token = 0, flops_per_sequence = 0, flops_per_step = 0, flops_per_card = 0;
  Time compute = 0;    // per card per step
  Time straggler = 0;  // expected wait for the slowest card
  StepComm comm;
  Time input_wait = 0;
  Time step = 0;  // compute + straggler + exposed communication + input wait

  CheckpointCost checkpoint;
  Bytes checkpoint_bytes = 0;        // what one save writes
  double checkpoint_write_rate = 0;  // bytes/s the storage must take on average (bytes / interval)
  Time interval = 0;
  Time optimal_interval = 0;
  Time job_mtbf = 0;
  CheckpointOverhead overhead;

  Time base_training = 0;  // steps x step
  Time completion = 0;     // reserved + steps x step x (1 + L)
  Time deadline = 0;
  Time plain_budget = 0;         // (deadline - reserved) / steps
  Time budget = 0;               // (deadline - reserved) / (steps (1 + L))
  double efficiency_needed = 0;  // to make step == budget
  Time comm_may_grow_to = 0;     // exposed communication with step == budget
  bool meets() const { return completion <= deadline; }
};

struct PlanResult {
  std::string name;
  int cards = 0;
  int hosts = 0;
  int microbatches_per_card = 0;  // accumulation steps of the busiest card
  bool uneven = false;            // the batch does not divide evenly over the cards
  double efficiency = 0;
  int zero_stage = 0;
  RecomputePolicy recompute;
  bool given_workspace = false;  // activations and buffers given, not derived
  MemoryPlan memory;
  std::optional<TimePlan> time;
  bool ok() const { return memory.fits() && (!time || time->meets()); }
};

MemoryPlan plan_memory(const PlanSpec& spec, int cards);
// `comm` empty: the stand-in spec_step_comm of the spec with the case applied (its exposed_comm).
PlanResult evaluate_plan(const PlanSpec& spec, const PlanCase& c, const StepCommSource& comm);
// The stand-in communication source built from the spec (see given_step_comm).
StepCommSource spec_step_comm(const PlanSpec& spec);

// What would make a plan that does not fit in memory fit.
struct MemoryLevers {
  Bytes over = 0;            // planned - usable
  std::optional<int> cards;  // fewest cards that fit (same ZeRO stage), if any
  Bytes planned_at_cards = 0;
  std::optional<int> whole_host_cards;  // fewest whole hosts' worth of cards that fit
  Bytes planned_at_whole_hosts = 0;
  struct Option {
    std::string change;  // "ZeRO-3", "recompute full"
    Bytes planned = 0;
    bool fits = false;
  };
  std::vector<Option> options;  // higher ZeRO stages, stronger recompute
};
MemoryLevers memory_levers(const PlanSpec& spec, int cards);

// What would make a plan that misses the deadline meet it.
struct DeadlineLevers {
  double efficiency_needed = 0;
  std::optional<int> cards;  // fewest cards (up to max_cards) that meet it and fit
  Time completion_at_cards = 0;
  std::optional<int> whole_host_cards;  // fewest whole hosts' worth of cards that do
  Time completion_at_whole_hosts = 0;
};
DeadlineLevers deadline_levers(const PlanSpec& spec, const PlanCase& c, const StepCommSource& comm);

}  // namespace stepsim
