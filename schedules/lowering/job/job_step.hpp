#pragma once
// A training step of a job (model + cluster + layout) lowered onto the one engine, in three
// parts that can each be checked alone:
//   1. order:  the pipeline schedule's action lists (schedules/registry.hpp) for pp stages,
//              m = global_batch / (micro_batch x dp) micro-batches and the virtual stages;
//   2. comm plan: per chunk its compute times and in-pass TP / CP / EP collectives, the PP
//              message and the link it crosses, and per device the DP / ZeRO collectives;
//   3. emission: schedules/pipeline.hpp's lower() builds the stage ops, sends and in-pass
//              collectives; the DP collectives and the optimizer are appended on a per-device
//              "dp" resource. ZeRO-3 (pp = 1) goes through the data-parallel lowering instead
//              (schedules/data_parallel.hpp): per-layer gathers prefetched, reduce-scatters.
// Ranks fold: one pipeline (pp devices) is simulated; data-parallel, context-parallel and
// tensor-parallel peers run the same ops at the same times, so their collectives cost by the
// ring model over the group's members and the step of 12,288 GPUs is the step of one pipeline.
#include <memory>
#include <string>
#include <vector>

#include "models/job_memory.hpp"
#include "models/layer_costs.hpp"
#include "schedules/lowering/data_parallel/data_parallel.hpp"
#include "schedules/lowering/pipeline/pipeline_spec.hpp"
#include "sim/checked.hpp"

namespace stepsim {

struct JobStepSpec {
  JobModel model;
  ClusterSpec cluster;
  JobLayout layout;
  Time input_wait = 0;  // per step, before the first micro-batch (data loading)
  int reshard_tp = 0;   // reports only: the checkpoint of this layout loaded at this TP (0: not asked)
};

// Kinds of op, for reports and the critical path.
enum class JobOpKind : std::uint8_t {
  Forward,
  Backward,
  BackwardWeight,
  InPassComm,
  PpSend,
  DpComm,
  Optimizer,
  Input,
  Other
};
const char* job_op_kind_name(JobOpKind k);

// Part 2: the communication plan (integer times, ns).
struct JobCommPlan {
  std::vector<ChunkCost> chunks;  // per virtual stage (costs in seconds)
  std::vector<StageCost> stages;  // per virtual stage (integer ns, compute and in-pass comm)
  Time pp_message_time = 0;       // one boundary message on its link
  Time pp_latency = 0;
  Bytes pp_message = 0;
  bool pp_inter_node = false;
  // Per device (pipeline rank): the chunks it holds (device_chunks), its DP gradient reduction
  // per chunk it holds, and the parameter gather after the optimizer (ZeRO-1,2).
  std::vector<std::vector<int>> device_chunks;  // [device] chunk indices, ascending
  std::vector<std::vector<Time>> dp_reduce;     // [device][chunk on device]
  std::vector<Time> dp_gather;                  // [device]
  std::vector<Time> optimizer;                  // [device]
  Time dp_bucket_tail = 0;                      // share of a reduction left after the last bucket
  bool dp_inter_node = false;
  GroupPaths paths;
};
JobCommPlan plan_job_comm(const JobStepSpec& spec);

// A cost in seconds as a phase of the step in simulated time: rounded up to the next nanosecond (a
// cost is never shortened to zero by rounding), 0 for none; past the time limit, TimeOverflowError
// naming "a step's phase".
inline Time phase_ns(double seconds) { return time_from_seconds_up(seconds, "a step's phase"); }

struct CriticalShare {
  std::string what;
  Time time = 0;
  double share = 0;
};

struct JobStepResult {
  Time step_time = 0;
  std::int64_t gpus = 0;
  int simulated_devices = 0;
  std::int64_t ops = 0;
  std::int64_t microbatches = 0;
  double tokens_per_s_per_gpu = 0;
  double model_tflops_per_gpu = 0, hardware_tflops_per_gpu = 0;
  double mfu = 0, hfu = 0;
  double bubble = 0;  // mean over devices of (step - busy compute - its in-pass comm) / step
  // The bubble's part owed to uneven stages: (the busiest rank's busy time - the mean's) / step, so
  // that bubble = the busiest rank's idle share + stage_imbalance. 0 without a pipeline.
  double stage_imbalance = 0;
  int busiest_rank = 0;  // the pipeline rank busiest (its compute and in-pass collectives)
  // Exposed communication by kind: time the critical path spends in it.
  Time exposed_tp = 0, exposed_pp = 0, exposed_dp = 0, exposed_cp = 0, exposed_ep = 0;
  JobMemory memory;                       // the most loaded pipeline rank
  std::vector<JobMemory> memory_by_rank;  // every pipeline rank (one, without a pipeline)
  Bytes capacity = 0;
  std::vector<CriticalShare> critical_by_kind, critical_by_resource;
  // Per-layer forward / backward on one GPU for one micro-batch, for Korthikanti Table 4: the
  // model's layer (a Gated DeltaNet hybrid's softmax one; a hybrid pattern's mean layer).
  double layer_forward_s = 0, layer_backward_s = 0;
  // The same passes by kind of kernel and exposed collective (their sums are the two above): the
  // backward's input and weight gradients and any recompute together; a hybrid pattern's, the
  // mean over its layers.
  PassSeconds layer_forward, layer_backward;
  // A hybrid's kinds of layer, each forward / backward: softmax and Gated DeltaNet; a hybrid
  // pattern's Mamba-2, attention, MLP and MoE layers (empty for a model of one kind).
  struct KindLayer {
    std::string what;
    double forward_s = 0, backward_s = 0;
  };
  std::vector<KindLayer> kind_layers;
  // The softmax attention layer's core as the kernel's tiles see it (the model's layer, a
  // hybrid's attention one; keys_per_query 0: no softmax attention).
  AttentionTiles attention_tiles;
  // An MoE layer's MoE block alone, forward / backward (moe_block_passes; 0 for a dense model).
  double moe_block_forward_s = 0, moe_block_backward_s = 0;
  // The host waits of an MoE layer's passes, forward and backward (efficiency.moe_host_per_expert
  // x its experts a GPU), in layer_forward_s and layer_backward_s: 0 for a dense model or a host
  // kept ahead.
  double layer_host_s = 0;
};

struct JobStepRun {
  JobStepSpec spec;
  PipelinePlan plan;
  JobCommPlan comm;
  std::unique_ptr<PipelineProgram> pipeline;  // pp path
  std::shared_ptr<DataParallelProgram> fsdp;  // ZeRO-3 path
  DataParallelPlan fsdp_plan;
  std::vector<JobOpKind> kinds;  // per op
  Timeline timeline;
  JobStepResult result;
  const OpGraph& graph() const { return pipeline ? pipeline->graph : fsdp->graph; }
};

// Throws SpecError (key below `job_step.layout`) for a layout the schedule cannot run.
JobStepRun run_job_step(const JobStepSpec& spec);

}  // namespace stepsim
