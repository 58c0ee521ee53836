#pragma once
// DataParallelSpec: a data-parallel (DDP or ZeRO-3 / FSDP) training step as plain values, and the
// functions that simulate it: spec -> plan (integer costs, buckets, where collectives run) ->
// program (OpGraph, schedules/data_parallel.hpp) -> timeline (engine) -> result.
//
// A planner builds a spec in code, e.g. the book's design case (reference section 2 and 4):
//   DataParallelSpec s;
//   s.model = *find_transformer("qwen3-8b");
//   s.accelerator = *find_accelerator("rtx4090");
//   s.cards = 48; s.microbatches = 8; s.efficiency = 0.4; s.input_wait = 500 * kMillisecond;
//   DataParallelResult r = simulate_data_parallel(s);   // r.step_time, r.exposed_comm, ...
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/collectives.hpp"
#include "models/hardware.hpp"
#include "models/step_timing.hpp"
#include "models/transformer.hpp"
#include "schedules/lowering/spec_error.hpp"
#include "sim/engine.hpp"
#include "sim/timeline.hpp"

namespace stepsim {

// Order of a layer's two backward halves (figure 10-25/10-26). Fused runs them as one op.
// dX first lets the layer below start its backward sooner; dW first lets this layer's gradient
// start communicating sooner.
enum class BackwardOrder : std::uint8_t { Fused, InputFirst, WeightFirst };
std::string_view backward_order_name(BackwardOrder o);  // "fused", "dx_first", "dw_first"
std::optional<BackwardOrder> parse_backward_order(std::string_view text);

// One piece of the model the step runs in turn (a decoder layer, the embedding, the LM head),
// given explicitly instead of derived from a model (the toy examples). Times are for one
// micro-batch on one card.
struct DataParallelUnit {
  std::string name;
  Time forward = 0;
  Time backward_input = 0;     // dX (a unit given one fused `backward` keeps it all here)
  Time backward_weight = 0;    // dW
  bool backward_split = true;  // false: only a fused backward was given
  Bytes weights = 0;           // bytes an AllGather assembles (ZeRO-3)
  Bytes gradients = 0;         // bytes reduced (ReduceScatter for ZeRO-3, AllReduce bucket for DDP)
  std::optional<Time> gather;  // explicit collective durations, instead of the cost model
  std::optional<Time> reduce;  // (DDP: such a unit is a bucket of its own)
};

struct DataParallelSpec {
  // --- the work: a transformer (compute from FLOPs) or explicit units (which win if given)
  std::optional<TransformerConfig> model;
  std::vector<DataParallelUnit> units;
  Accelerator accelerator;  // peak FLOP/s, PCIe (host_link), peer link
  double efficiency = 0.4;  // achieved fraction of peak
  std::int64_t sequence_length = 8192;
  int microbatch_size = 1;  // sequences per micro-batch
  int weight_bytes = 2;     // bytes per parameter gathered (BF16)
  int gradient_bytes = 2;   // bytes per parameter reduced (BF16; 4 for FP32 gradients)

  // --- the cluster
  int cards = 1;
  Host host{8, 8, 25'000'000'000, false};  // 8 cards, eight 200 Gbit/s NICs (section 2)
  std::int64_t link_bandwidth = 0;         // per card, each direction; 0 = accelerator.host_link
  Time alpha = 0;                          // start-up latency per collective

  // --- the schedule
  int zero_stage = 3;                      // 0 = DDP (AllReduce buckets), 3 = ZeRO-3 / FSDP
  int microbatches = 1;                    // gradient accumulation steps per optimizer step
  int prefetch = 4;                        // ZeRO-3: a gather may start this many units ahead (0 = when needed)
  bool keep_gathered = false;              // ZeRO-3: keep forward's gathered weights for the backward
  Bytes bucket_size = 25LL * 1024 * 1024;  // DDP bucket cap (PyTorch's default 25 MiB)
  BackwardOrder backward_order = BackwardOrder::Fused;
  Time input_wait = 0;  // per step, before the first gather can be issued

  // --- per-rank variation: card -> compute time multiplier (a straggler); any entry unfolds
  std::map<int, double> stragglers;
  bool fold = true;  // simulate one representative rank when all ranks are identical
};

// Where each card's collective traffic is limited (the slowest resource it crosses).
enum class LinkKind : std::uint8_t { Pcie, PeerLink, HostNic };
std::string_view link_kind_name(LinkKind k);  // "PCIe", "peer link", "host NIC"

// A spec turned into integer costs: what the lowering (schedules/data_parallel.hpp) consumes.
struct DataParallelPlan {
  struct Unit {
    std::string name;
    Time forward = 0, backward_input = 0, backward_weight = 0;
    Time gather = 0, reduce = 0;               // collective durations; 0 with has_* false = none
    Bytes gather_bytes = 0, reduce_bytes = 0;  // per card on the wire
    bool has_gather = false, has_reduce = false;
    // ZeRO-3: a second gather before the unit's backward, of the weights a recomputed unit's
    // rerun forward fetched again (DeepSpeed's hooks fire on the rerun too); 0 without one.
    Time regather = 0;
    Bytes regather_bytes = 0;
  };
  struct Bucket {
    std::vector<int> units;  // in the order their gradients are produced
    Time duration = 0;
    Bytes bytes = 0;       // gradient bytes in the bucket
    Bytes wire_bytes = 0;  // per card on the wire
  };
  int cards = 1;
  int cards_per_host = 1;
  int microbatches = 1;
  bool zero3 = true;
  int prefetch = 0;
  bool keep_gathered = false;
  BackwardOrder order = BackwardOrder::Fused;
  Time input_wait = 0;
  std::vector<Unit> units;      // forward order
  std::vector<Bucket> buckets;  // DDP
  LinkKind link = LinkKind::Pcie;
  std::int64_t link_bandwidth = 0;    // effective bytes/s each collective runs at
  std::vector<double> compute_scale;  // per card; empty = all 1
  bool fold = true;                   // ranks identical and folding allowed
};

// Resolves a spec. Throws SpecError naming the data_parallel key at fault.
DataParallelPlan plan_data_parallel(const DataParallelSpec& spec);

// What the planner and reports need from one simulated step.
struct DataParallelRankStats {
  int card = 0;
  Time compute_busy = 0;  // sum of the card's compute ops
  Time link_busy = 0;     // sum of the collectives on the resource its traffic is limited by
  Time end = 0;           // its last compute or collective done
  Time exposed = 0;       // end - input_wait - compute_busy: compute stream waiting on communication
};

struct DataParallelResult {
  int cards = 0;
  int simulated_ranks = 0;  // 1 when identical ranks were folded
  bool folded = false;
  Time step_time = 0;     // makespan of the step
  Time compute_time = 0;  // per card, the slowest card's compute busy time
  Time link_time = 0;     // per card, sum of its collectives' durations
  Time exposed_comm = 0;  // step_time - input_wait - compute_time
  Time input_wait = 0;
  Bytes bytes_per_card = 0;         // sent (and received) per card per step
  Bytes gather_bytes_per_pass = 0;  // one AllGather of every unit, per card (ZeRO-3)
  Bytes reduce_bytes_per_pass = 0;  // one reduction of every gradient, per card
  int collectives_per_card = 0;
  LinkKind link = LinkKind::Pcie;
  std::int64_t link_bandwidth = 0;
  std::vector<DataParallelRankStats> ranks;  // simulated ranks
};

struct DataParallelProgram;  // schedules/data_parallel.hpp

struct DataParallelRun {
  DataParallelPlan plan;
  std::shared_ptr<DataParallelProgram> program;
  Timeline timeline;
  DataParallelResult result;
};

// Simulates one step, keeping the graph and timeline for traces and tables.
// Throws SpecError for a spec that cannot run.
DataParallelRun run_data_parallel(const DataParallelSpec& spec);

// The planner's entry point: one step's times, nothing else kept.
DataParallelResult simulate_data_parallel(const DataParallelSpec& spec);

// The planner's step-communication seam (models/step_timing.hpp) answered by simulation: for
// each StepShape the planner asks about, `base` with the shape's cards, micro-batches,
// efficiency and input wait is simulated, and its link time and exposed communication returned.
StepCommSource data_parallel_step_comm(DataParallelSpec base);

}  // namespace stepsim
