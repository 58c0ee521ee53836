#pragma once
// One mixture-of-experts layer on the engine (section 10.3.3, figure 10-27): the tokens' rows go
// to their experts by an all-to-all, every card runs its experts, the results come back by a
// second all-to-all. The busiest card sets the finish time.
//
// Graph (rules stated once; tests rely on them):
//  * Per card two program-order resources: "card c" (its compute stream) and "card c link" (its
//    all-to-all traffic, both directions at once). One more resource, "all-to-all", holds two
//    zero-time barrier ops: a collective all-to-all finishes for everybody when the last card's
//    share has moved, and no card can start the next phase before that.
//  * dispatch(c) on card c's link takes max(rows sent, rows received) x row_bytes / bandwidth
//    (full duplex). The tokens are spread evenly over the cards and the router does not care
//    where a token lives, so expert e's kept rows come from the cards in equal shares (the first
//    kept mod cards cards one more); the share from e's own card stays local.
//  * barrier "dispatched" waits for every dispatch; card c then runs one op per local expert, in
//    expert id order, of computed rows x row_time (padding included under a capacity factor).
//  * barrier "combine" waits for every card's last expert; combine(c) on card c's link moves the
//    results back (the dispatch traffic reversed, so the same duration). The layer is done when
//    the last combine is: finish = max over cards.
#include <memory>
#include <string>
#include <vector>

#include "models/moe_routing.hpp"
#include "schedules/lowering/spec_error.hpp"
#include "sim/engine.hpp"

namespace stepsim {

struct MoeLayerSpec {
  MoeLayerShape shape;
  MoeRoutingSpec routing;
  int cards = 1;  // expert-parallel group; E must divide evenly
  ExpertPlacement placement = ExpertPlacement::Contiguous;
  Time row_time = 0;                // one row through one expert (forward)
  Bytes row_bytes = 0;              // one row on the wire (hidden x 2 B for BF16)
  std::int64_t link_bandwidth = 0;  // bytes/s per card, each direction; 0: the all-to-all is instant
};

struct MoeCardTraffic {
  std::int64_t rows_sent = 0, rows_received = 0;  // dispatch; combine is the reverse
};

struct MoeLayerProgram {
  OpGraph graph;
  std::vector<ResourceId> compute, link;  // per card
  ResourceId barrier = 0;
  std::vector<OpId> dispatch, combine;  // per card
  OpId dispatched = kNoOp, combine_ready = kNoOp;
  std::vector<std::vector<OpId>> expert_ops;  // per card, in run order
  std::vector<int> op_expert;                 // per op: expert id, or -1
  std::vector<MoeCardTraffic> traffic;        // per card
};

struct MoeCardStats {
  std::int64_t rows = 0;  // rows computed (padding included)
  Time compute = 0;       // busy time of the compute stream
  Time waiting = 0;       // from its last expert to the combine barrier (waiting for the busiest)
  MoeCardTraffic traffic;
};

struct MoeLayerStats {
  Time layer = 0;           // makespan: the last combine done
  Time dispatch = 0;        // the dispatch all-to-all (barrier time)
  Time expert_compute = 0;  // from the dispatch barrier to the last expert done
  Time combine = 0;         // from the combine barrier to the last combine done
  int busiest_card = 0;     // most rows (lowest id on ties)
  double mean_card_rows = 0;
  double imbalance = 1;  // busiest card's rows / mean card rows
  std::vector<MoeCardStats> cards;
};

struct MoeLayerRun {
  MoeLayerSpec spec;
  ExpertLoads loads;
  std::unique_ptr<MoeLayerProgram> program;
  Timeline timeline;
  MoeLayerStats stats;
};

// Lowering runs in three parts, each a plain value that can be checked on its own:
//   moe_expert_order -> MoeExpertOrder  which card runs which experts, in what order
//   moe_comm_plan    -> MoeCommPlan     each card's all-to-all traffic and time (check_comm_plan)
//   emit_moe_layer   -> MoeLayerProgram resources, ops and dependencies

struct MoeExpertOrder {
  std::vector<int> card;                   // per expert: the card it runs on
  std::vector<std::vector<int>> per_card;  // per card: its experts in run order (id order)
};

struct MoeCommPlan {
  std::vector<MoeCardTraffic> traffic;  // per card, dispatch direction
  std::vector<Time> all_to_all;         // per card: its dispatch time; the combine takes the same
};

MoeExpertOrder moe_expert_order(const MoeLayerSpec& spec);
// Throws SpecError when a card's expert compute or all-to-all would not fit in a century.
MoeCommPlan moe_comm_plan(const MoeLayerSpec& spec, const ExpertLoads& loads, const MoeExpertOrder& order);
// Problems with a plan, one line each (empty = fine): sizes, rows sent and received that do not
// balance, or that differ from the kept rows not already on their expert's card.
std::vector<std::string> check_comm_plan(const MoeLayerSpec& spec, const ExpertLoads& loads,
                                         const MoeExpertOrder& order, const MoeCommPlan& plan);
std::unique_ptr<MoeLayerProgram> emit_moe_layer(const MoeLayerSpec& spec, const ExpertLoads& loads,
                                                const MoeExpertOrder& order, const MoeCommPlan& plan);
// Throws SpecError whose key is relative to the moe section ("routing.loads", "cards", ...).
// Checks the spec, then the three parts in a row.
std::unique_ptr<MoeLayerProgram> build_moe_layer(const MoeLayerSpec& spec, const ExpertLoads& loads);
MoeLayerRun simulate_moe_layer(const MoeLayerSpec& spec);

}  // namespace stepsim
