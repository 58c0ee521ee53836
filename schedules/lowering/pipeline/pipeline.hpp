#pragma once
// From a schedule's action lists to an OpGraph, and from the Timeline back to the figures a
// pipeline user asks for (step time, idle, peak memory, resident micro-batches, messages).
//
// Lowering rules (reference section 1 / figures 10-17 to 10-24):
//  * F(s,i) waits for F(s-1,i)'s output to arrive; B(s,i) (or I(s,i)) waits for B(s+1,i)'s
//    output and for F(s,i); W(s,i) waits for I(s,i).
//  * A message between stages on different devices is an op on the directed link
//    (src -> dst): it occupies the link for message / bandwidth and arrives `latency` later.
//    Links serve messages first come, first served.
//  * Each device ends with its optimizer update.
//  * Memory per device: a micro-batch's activations are held from its F's start until its B
//    ends (its W ends where the backward is split); a received message is held from its
//    arrival until the op that consumes it starts.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "schedules/pipeline/action.hpp"
#include "sim/level.hpp"
#include "sim/op_graph.hpp"
#include "sim/timeline.hpp"

namespace stepsim {

struct StageCost {
  Time forward = 0;
  Time backward = 0;         // full backward (B)
  Time backward_input = 0;   // I, for split schedules
  Time backward_weight = 0;  // W, for split schedules
  Bytes activation = 0;      // held per resident micro-batch
  // Collectives inside the pass that the compute stream waits for (a job's TP / CP / EP), run
  // after it on the device's "collectives" resource; 0 = none (no op is added). An overlapped
  // F&B pair runs its two halves' collectives beside its compute instead (PipelineCosts::
  // pair_contention).
  Time forward_comm = 0;
  Time backward_comm = 0;
  Time backward_input_comm = 0;  // of I, split: its weight gradient not beside it (0: backward_comm's)
  // Of forward and of backward (full or input), the time the stream waits on the host with no
  // kernel running (a job's MoE host waits): collectives beside it there take no SMs from the compute.
  Time forward_host = 0;
  Time backward_host = 0;
};

struct PipelineCosts {
  std::vector<StageCost> stages;                    // per virtual stage
  std::vector<Time> update;                         // per device
  Time latency = 0;                                 // per message, every hop unless overridden
  std::int64_t bandwidth = 0;                       // bytes/s; 0 = messages take no link time beyond latency
  Bytes message = 0;                                // bytes of one boundary message
  std::map<std::pair<int, int>, Time> hop_latency;  // (src, dst) device overrides
  std::optional<Time> overlap_fb;                   // duration of an overlapped F&B pair; default F + B
  // Blocking point-to-point, as Megatron-LM's without --overlap-p2p-communication (batched
  // isend/irecv, then wait): each device exchanges its messages at points of its program, after
  // every action or after the pairs the plan names (PipelinePlan::paired_with_next). A message
  // moves once its sender has reached the exchange after its producer and its receiver the
  // exchange before its consumer (NCCL's send and receive meet), and each device waits at its
  // exchange until the exchange's messages are done. Default: sends run beside the compute.
  bool blocking_sends = false;
  // An overlapped F&B pair (DualPipe) runs each half's in-pass collectives while the other half
  // computes: they start with the pair's compute and the pair ends when both are done (DeepSeek-V3
  // report sec. 3.2.1 and figure 4: a forward chunk's and a backward chunk's all-to-all and PP
  // traffic hidden under each other's compute). The compute gives up SMs to the communication:
  // its kernels are slowed by this share of the time the two overlap (the job's contention
  // efficiency; not the host waits, StageCost::forward_host).
  // Without `overlap_pairs` a pair's collectives run after its compute, as any action's.
  bool overlap_pairs = true;
  double pair_contention = 0;

  Time latency_between(int src, int dst) const;
};

enum class PipeOp : std::uint8_t {
  Forward,
  Backward,
  BackwardInput,
  BackwardWeight,
  Overlap,
  Update,
  SendForward,
  SendBackward,
  Comm
};

// What an op of a pipeline graph means. A send's receiving device and an overlapped pair's
// backward stage share a field (an op is never both). Devices and virtual stages fit 16 bits
// (lower() checks).
struct PipeOpInfo {
  PipeOp kind;
  std::int16_t device;  // the device that runs it (for sends: the sender)
  std::int16_t other;   // sends: the receiving device; an overlapped pair: its backward half's stage
  std::int16_t stage;
  std::int32_t micro;
  std::int32_t micro2 = -1;  // an overlapped pair: its backward half's micro-batch

  int peer() const { return other; }
  int stage2() const { return other; }
};

// Every op's PipeOpInfo, by op id, in 12 bytes an op (a large step holds one per op): the
// backward micro-batch of an overlapped pair, the only field other ops lack, is kept apart.
class PipeOpInfos {
 public:
  void reserve(std::size_t ops) { ops_.reserve(ops); }
  void push_back(const PipeOpInfo& x) {
    if (x.kind == PipeOp::Overlap) pair_micro2_.emplace_back(static_cast<OpId>(ops_.size()), x.micro2);
    ops_.push_back({x.kind, x.device, x.other, x.stage, x.micro});
  }
  std::size_t size() const { return ops_.size(); }
  PipeOp kind(OpId op) const { return ops_[op].kind; }
  PipeOpInfo operator[](OpId op) const {
    const Stored& s = ops_[op];
    return {s.kind, s.device, s.other, s.stage, s.micro, s.kind == PipeOp::Overlap ? pair_micro2(op) : -1};
  }

 private:
  struct Stored {
    PipeOp kind;
    std::int16_t device, other, stage;
    std::int32_t micro;
  };
  static_assert(sizeof(Stored) == 12);
  std::int32_t pair_micro2(OpId op) const;
  std::vector<Stored> ops_;
  std::vector<std::pair<OpId, std::int32_t>> pair_micro2_;  // overlapped pairs' ops, in op id order
};

char pipe_op_letter(PipeOp kind);
// The op's name as errors and traces print it ("1F3", "send 1F3 d1->d2", "update d0"): written
// at `at` (room for kPipeOpNameMax bytes), returning its end; or appended to `out`.
constexpr std::size_t kPipeOpNameMax = 96;
char* write_pipe_op_name(char* at, const PipeOpInfo& x);
void append_pipe_op_name(std::string& out, const PipeOpInfo& x);

struct PipelineProgram {
  OpGraph graph;
  PipeOpInfos info;
  std::vector<ResourceId> compute;  // per device
  std::vector<ResourceId> comm;     // per device: its in-pass collectives (only with *_comm costs)
  int devices = 0;
  int microbatches = 0;
  int forward_messages = 0;
  int backward_messages = 0;
  OpId first_send = 0;  // messages are emitted after every compute op: no send has a lower id
  // Link resources and the (source, destination) devices they join.
  std::map<ResourceId, std::pair<int, int>> link_ends;

  // What memory the step holds (the lowering rules above), kept as the ops that bound each hold
  // rather than as a list of holds (which took 32 bytes per op): per (stage, micro-batch), at
  // stage * microbatches + micro, the op whose start takes its activations and the op whose end
  // frees them; the bytes of one stage's activations; the bytes of a message, held from its
  // send's done time until its consumer starts.
  struct Activation {
    OpId from, until;
  };
  std::vector<Activation> activations;
  std::vector<Bytes> activation_bytes;  // per virtual stage
  Bytes message_bytes = 0;

  // The op whose end completes the action that `op` runs, its in-pass collectives included:
  // op itself, the collectives op after it, or an overlapped pair's join (lower() adds them).
  std::vector<OpId> pass_end;  // per op; empty when no action has in-pass collectives
  OpId end_of_pass(OpId op) const { return op < pass_end.size() && pass_end[op] != kNoOp ? pass_end[op] : op; }

  // The op that consumes a send's message: its first successor (the lowering adds that
  // dependency right after the send; after the graph is finalized).
  OpId consumer_of(OpId send) const { return graph.targets()[graph.records()[send].first_succ]; }
  static bool is_send(PipeOp kind) { return kind == PipeOp::SendForward || kind == PipeOp::SendBackward; }
};

// Throws std::invalid_argument if plan and costs disagree (sizes), GraphError on an action that
// would wait on itself. Returned on the heap: the graph's namer points into the program.
// The plan's action lists are released once the compute ops exist (their order is the program's
// compute streams; at a million ops they are 12 bytes per op, the largest thing freed before the
// messages are added): lower a copy to keep them. Placement (routes) stays.
std::unique_ptr<PipelineProgram> lower(PipelinePlan& plan, const PipelineCosts& costs);

struct DeviceStats {
  int id;
  Time busy;
  Time idle;
  Bytes peak_memory;
  Time peak_memory_time;
  int peak_resident;
  int stage_copies;  // virtual stages (model chunks) the device holds parameters for
  // Parameters held, in units of one device's share under one stage per device (1/p of the
  // model, every virtual stage counted as an equal 1/S slice): stage_copies * p / S. 1 for
  // 1F1B and interleaved 1F1B (v chunks of 1/v each), 2 for DualPipe (stages i and p-1-i).
  double parameter_copies;
};

struct PipelineStats {
  Time step_time;
  double bubble_fraction;  // mean over devices of idle / step time
  int forward_messages, backward_messages;
  std::vector<DeviceStats> devices;
  std::vector<LevelCurve> memory;  // per device, its memory bytes over time: MemoryDetail::Curves only
};

// What measure keeps of each device's memory: its peak, or its whole curve too. The curves of a
// large step are 16 bytes per op, and only a trace or a chart draws them; asking for them here
// spares gathering the same changes twice (pipeline_memory below).
enum class MemoryDetail { Peaks, Curves };

// Computes each device's memory one device at a time.
PipelineStats measure(const PipelinePlan& plan, const PipelineProgram& program, const Timeline& timeline,
                      MemoryDetail detail = MemoryDetail::Peaks);

// Per device, its memory bytes over time.
std::vector<LevelCurve> pipeline_memory(const PipelinePlan& plan, const PipelineProgram& program,
                                        const Timeline& timeline);

}  // namespace stepsim
