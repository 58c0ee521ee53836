#pragma once
// Lowering a data-parallel plan to an OpGraph, and measuring the timeline it produces.
//
// Each simulated card has a compute stream (program order): per micro-batch the units' forward
// ops in order, then their backward ops in reverse (one op, or dX and dW in the plan's order).
// Collectives are ops on the resource a card's traffic is limited by: its own link lane (PCIe,
// or the peer link inside one P2P host), or its host's NIC when that is slower (then one op per
// host serves all its cards). Link resources run in program order = the order the rank issues
// collectives, which every rank must share (NCCL's rule for one communicator).
//
// Issue rules:
//  * ZeRO-3: the gather for the k-th unit computation of the step (forward and backward counted
//    in compute order, across micro-batches) is issued when computation k - prefetch starts,
//    i.e. after computation k - prefetch - 1 ends (at the step start if there is none, after the
//    input wait). Prefetch 0: issued only when the unit is needed. The computation waits for it.
//    The ReduceScatter of a unit's gradient is issued when its gradient op (dW, or the fused
//    backward) ends, every micro-batch. Nothing waits for it but the end of the step.
//  * DDP: gradients are bucketed in the order they are produced; a bucket's AllReduce is issued
//    when its last gradient is produced, in the last micro-batch only (no_sync accumulation).
//  * At one issue point a reduction is issued before a gather (the backward hook that launches
//    the reduction runs before the next unit's pre-hook prefetches).
//
// Ranks: when the plan is fold-able (no per-rank variation) one representative card (card 0,
// on host 0) is simulated: every rank's timeline is the same, since each collective starts on
// all members together. Otherwise every card is simulated and each collective gets a zero-
// duration join op (on a "collectives" resource) that waits for every member's issue point and
// every member link's previous collective, so members start together as a ring does.
#include <memory>
#include <string>
#include <vector>

#include "schedules/lowering/data_parallel/data_parallel_spec.hpp"
#include "sim/op_graph.hpp"

namespace stepsim {

enum class DpOp : std::uint8_t {
  Input,
  Forward,
  Backward,
  BackwardInput,
  BackwardWeight,
  Gather,
  ReduceScatter,
  AllReduce,
  Join
};

// 16 bytes: an unfolded step holds one per op (16,384 cards: 25 million). An AllReduce names the
// last unit of its gradient bucket (DataParallelProgram::bucket_of gives the bucket).
struct DpOpInfo {
  DpOp kind = DpOp::Forward;
  bool for_backward = false;  // a gather for the backward pass
  bool on_host = false;       // `where` is a host (NIC ops), else a card (compute, input and lane ops)
  std::int32_t where = -1;    // -1: neither (a join)
  std::int32_t micro = -1;
  std::int32_t unit = -1;
};
static_assert(sizeof(DpOpInfo) == 16);

struct DataParallelProgram {
  OpGraph graph;
  std::vector<DpOpInfo> info;       // per op
  std::vector<int> cards;           // simulated card ids
  std::vector<ResourceId> compute;  // per simulated card
  std::vector<ResourceId> lane;     // per simulated card (its link lane; unused when on NIC)
  std::vector<ResourceId> input;    // per simulated card (none without an input wait)
  std::vector<int> hosts;           // simulated host ids (NIC resources)
  std::vector<ResourceId> nic;      // per simulated host, when collectives run on the NIC
  std::vector<int> card_host;       // per simulated card: index into hosts
  std::vector<OpId> last_compute;   // per simulated card
  int collectives = 0;              // per card per step
  Bytes bytes_per_card = 0;
  std::vector<int> bucket_ending;  // per unit: the gradient bucket whose last unit it is, or -1

  // The gradient bucket an AllReduce reduces (-1 for any other op).
  int bucket_of(const DpOpInfo& x) const {
    return x.kind == DpOp::AllReduce && x.unit >= 0 ? bucket_ending[static_cast<std::size_t>(x.unit)] : -1;
  }
};

inline constexpr ResourceId kNoResource = ~ResourceId{0};

// Lowering runs in three parts, each a plain value that can be checked on its own (the shape of
// the pipeline lowering: order, then messages, then ops):
//   data_parallel_order       -> DpComputeOrder    the compute sequence, the same on every card
//   data_parallel_collectives -> DpCollective list the collectives in issue order (check_collectives)
//   emit_data_parallel        -> DataParallelProgram  resources, ops and dependencies

// One unit computation of the step in compute order: a unit's forward or backward in a micro-batch.
struct DpPosition {
  int micro = 0;
  int unit = 0;
  bool backward = false;
  bool operator==(const DpPosition&) const = default;
};

// Where in a card's compute sequence (index of the op in program order) a position's ops sit.
struct DpPositionOps {
  int first = 0, grad = -1, last = 0;  // grad: the op whose end produces the unit's gradient (-1 forward)
  bool operator==(const DpPositionOps&) const = default;
};

struct DpComputeOrder {
  std::vector<DpPosition> positions;  // per micro-batch: forwards in unit order, backwards reversed
  std::vector<DpPositionOps> ops;     // per position
  int ops_per_card = 0;               // compute ops in one card's sequence
};

// A collective as every rank issues it: the same list, in the same order, on every card.
struct DpCollective {
  DpOp kind = DpOp::Gather;
  Time duration = 0;
  Bytes wire_bytes = 0;
  int issue_after = -1;  // compute sequence index it is issued after; -1 = at the step start
  int rank = 0;          // at one issue point: reductions (0) before gathers (1)
  int consumer = -1;     // position whose first op waits for it; -1 = none
  int micro = -1, unit = -1, bucket = -1;
  bool for_backward = false;
  bool operator==(const DpCollective&) const = default;
};

DpComputeOrder data_parallel_order(const DataParallelPlan& plan);
// Sorted by (issue_after, rank), stable: the order every rank issues them in.
std::vector<DpCollective> data_parallel_collectives(const DataParallelPlan& plan, const DpComputeOrder& order);
// Problems with a collective plan, one line each (empty = fine): issue order not sorted, an issue
// point or consumer out of range, a collective its consumer would have to wait for after it starts.
std::vector<std::string> check_collectives(const DpComputeOrder& order, const std::vector<DpCollective>& colls);

// The program lives on the heap: its graph's namer refers to its op table.
std::shared_ptr<DataParallelProgram> emit_data_parallel(const DataParallelPlan& plan, const DpComputeOrder& order,
                                                        const std::vector<DpCollective>& colls);
// The three parts in a row.
std::shared_ptr<DataParallelProgram> lower_data_parallel(const DataParallelPlan& plan);

// Per-rank and step numbers from a finished timeline.
DataParallelResult measure_data_parallel(const DataParallelPlan& plan, const DataParallelProgram& prog,
                                         const Timeline& t);

}  // namespace stepsim
