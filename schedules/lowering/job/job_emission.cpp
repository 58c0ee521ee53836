#include "schedules/lowering/job/job_step_parts.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "sim/engine.hpp"

namespace stepsim {

// Part 3 (job_step.hpp): the step's ops on the engine, and the run. The pipeline path lowers the
// plan's action lists (schedules/pipeline.hpp's lower()) and appends each device's DP collectives
// and optimizer on its own "dp" resource; ZeRO-3 goes through the data-parallel lowering.
namespace {

constexpr double kBucketParams = 40e6;  // Megatron DDP bucket (40M elements)

JobOpKind kind_of(PipeOp kind) {
  switch (kind) {
    case PipeOp::Forward: return JobOpKind::Forward;
    case PipeOp::Backward:
    case PipeOp::BackwardInput:
    case PipeOp::Overlap: return JobOpKind::Backward;
    case PipeOp::BackwardWeight: return JobOpKind::BackwardWeight;
    case PipeOp::Update: return JobOpKind::Optimizer;
    case PipeOp::SendForward:
    case PipeOp::SendBackward: return JobOpKind::PpSend;
    case PipeOp::Comm: return JobOpKind::InPassComm;
  }
  return JobOpKind::Other;
}

JobOpKind kind_of(const DpOpInfo& x) {
  switch (x.kind) {
    case DpOp::Input: return JobOpKind::Input;
    case DpOp::Forward: return JobOpKind::Forward;
    case DpOp::Backward:
    case DpOp::BackwardInput: return JobOpKind::Backward;
    case DpOp::BackwardWeight: return JobOpKind::BackwardWeight;
    case DpOp::Gather:
    case DpOp::ReduceScatter:
    case DpOp::AllReduce: return JobOpKind::DpComm;
    case DpOp::Join: return JobOpKind::Other;
  }
  return JobOpKind::Other;
}

using AddOp = std::function<OpId(ResourceId, Time, JobOpKind, std::string)>;

// A gradient reduction of one device: the backward op that completes the gradients (of a stage;
// of a stage and micro-batch when ZeRO 2 reduces every micro-batch), the op before it on the
// device, and whether it is its stage's last.
struct Reduction {
  OpId op, before;
  int stage, micro;
  bool last;
};
struct DeviceReductions {
  std::vector<Reduction> order;  // in program order
  OpId last_compute = kNoOp, update = kNoOp;
};

// The order: walks device d's program for the last backward-like op of each stage (or of each
// stage and micro-batch) and the op before it.
DeviceReductions gradient_reductions(const PipelineProgram& prog, int d, bool every_micro) {
  const OpGraph& g = prog.graph;
  std::map<std::pair<int, int>, std::pair<OpId, OpId>> last_bwd;  // (stage, micro or 0) -> (op, previous op)
  DeviceReductions r;
  OpId prev = kNoOp;
  for (OpId op = g.first_on(prog.compute[d]); op != kNoOp; op = g.next_on_resource(op)) {
    const PipeOpInfo& x = prog.info[op];
    if (x.kind == PipeOp::Update) {
      r.update = op;
      break;
    }
    if (x.kind == PipeOp::Backward || x.kind == PipeOp::BackwardInput || x.kind == PipeOp::BackwardWeight)
      last_bwd[{x.stage, every_micro ? x.micro : 0}] = {op, prev};
    if (x.kind == PipeOp::Overlap) last_bwd[{x.stage2(), every_micro ? x.micro2 : 0}] = {op, prev};
    r.last_compute = op;
    prev = op;
  }
  for (const auto& [key, ops] : last_bwd) r.order.push_back({ops.first, ops.second, key.first, key.second, false});
  std::sort(r.order.begin(), r.order.end(), [](const Reduction& a, const Reduction& b) { return a.op < b.op; });
  std::map<int, std::size_t> last_of_stage;
  for (std::size_t i = 0; i < r.order.size(); ++i) last_of_stage[r.order[i].stage] = i;
  for (const auto& [stage, i] : last_of_stage) r.order[i].last = true;
  return r;
}

// An op's kernels: its duration less the host waits in it (a collective beside them takes no SMs).
Time kernel_time(const JobStepRun& run, OpId op) {
  const PipelineProgram& prog = *run.pipeline;
  const PipeOpInfo& x = prog.info[op];
  const auto host = [&](int stage, bool forward) {
    const StageCost& c = run.comm.stages[static_cast<std::size_t>(stage)];
    return forward ? c.forward_host : c.backward_host;
  };
  Time h = 0;
  if (x.kind == PipeOp::Backward || x.kind == PipeOp::BackwardInput) h = host(x.stage, false);
  if (x.kind == PipeOp::Overlap) h = host(x.stage, true) + host(x.stage2(), false);
  return std::max<Time>(0, prog.graph.op_duration(op) - h);
}

// Device d's DP collectives, on its own "dp" resource: per chunk the gradient reduction (during
// the chunk's last backward with overlap, else after the device's last compute), before the
// optimizer; the parameter gather after it. ZeRO 2 accumulating the shard reduces every
// micro-batch's gradients of a chunk as its backward ends (during it with overlap, else before
// the device's next op).
void emit_dp_device(JobStepRun& run, int d, const AddOp& add) {
  const JobLayout& l = run.spec.layout;
  const JobCommPlan& cp = run.comm;
  PipelineProgram& prog = *run.pipeline;
  OpGraph& g = prog.graph;
  const bool every_micro = l.reduces_every_micro_batch();
  const DeviceReductions reductions = gradient_reductions(prog, d, every_micro);
  const OpId update = reductions.update;
  // The op that ends a pass, its in-pass collectives included (successors wait for it).
  auto ends = [&](OpId op) { return prog.end_of_pass(op); };
  const ResourceId dpr = g.add_resource(fmt::format("d{} dp", d));
  std::optional<ResourceId> slowdown;  // made if an earlier micro-batch's reduction slows a backward
  const auto& held = cp.device_chunks[static_cast<std::size_t>(d)];
  for (const auto& [op, before, stage, micro, last] : reductions.order) {
    const auto v = static_cast<std::size_t>(std::find(held.begin(), held.end(), stage) - held.begin());
    const Time red = cp.dp_reduce[static_cast<std::size_t>(d)].at(v);
    const auto& ch = cp.chunks[static_cast<std::size_t>(stage)];
    const std::string what =
        every_micro ? fmt::format("chunk {} micro {}", stage, micro) : fmt::format("chunk {}", stage);
    if (l.overlap_grad_reduce) {
      // Buckets fill during the chunk's last backward: the reduction may start with it, and
      // the last bucket (40M parameters) can only go once the backward is done.
      const double frac = std::min(1.0, kBucketParams / std::max<double>(1.0, static_cast<double>(ch.parameters)));
      const Time tail = static_cast<Time>(std::ceil(static_cast<double>(red) * frac));
      // The reduction under the backward slows it by the contention share of the overlap;
      // the delay shows where the backward ends, before the last bucket.
      const double under = std::min(static_cast<double>(red - tail), static_cast<double>(kernel_time(run, op)));
      const Time slow = static_cast<Time>(std::ceil(under * run.spec.cluster.accelerator.efficiency.contention));
      const OpId r1 = add(dpr, red - tail, JobOpKind::DpComm, fmt::format("dp reduce {} d{}", what, d));
      if (before != kNoOp) g.add_dep(before, r1);
      const OpId r2 =
          add(dpr, tail + (last ? slow : 0), JobOpKind::DpComm, fmt::format("dp reduce {} last bucket d{}", what, d));
      g.add_dep(ends(op), r2);
      g.add_dep(r2, update);
      // An earlier micro-batch's reduction: the backward it slowed delays the device's next op,
      // not the step's end (its last bucket runs beside that op).
      if (!last && slow > 0) {
        if (!slowdown) slowdown = g.add_resource(fmt::format("d{} dp slowdown", d));
        const OpId delay = add(*slowdown, slow, JobOpKind::DpComm, fmt::format("dp contention {} d{}", what, d));
        g.add_dep(ends(op), delay);
        g.add_dep(delay, g.next_on_resource(op));
      }
    } else {
      // Not overlapped: after the device's last compute; reducing every micro-batch, after each
      // backward, the device waiting for it before its next op.
      const OpId r1 = add(dpr, red, JobOpKind::DpComm, fmt::format("dp reduce {} d{}", what, d));
      g.add_dep(ends(every_micro ? op : reductions.last_compute), r1);
      if (const OpId next = g.next_on_resource(op); every_micro && next != kNoOp && next != update) g.add_dep(r1, next);
      g.add_dep(r1, update);
    }
  }
  if (cp.dp_gather[d] > 0) {
    const OpId ag = add(dpr, cp.dp_gather[d], JobOpKind::DpComm, fmt::format("dp param gather d{}", d));
    g.add_dep(update, ag);
  }
}

}  // namespace

void run_pipeline_path(JobStepRun& run) {
  const JobStepSpec& spec = run.spec;
  const JobLayout& l = spec.layout;
  const JobCommPlan& cp = run.comm;
  PipelineCosts costs;
  costs.stages = cp.stages;
  costs.update = cp.optimizer;
  costs.latency = cp.pp_latency;
  costs.bandwidth = static_cast<std::int64_t>(cp.paths.pp.bytes_per_second);
  costs.message = cp.pp_message;
  costs.blocking_sends = !l.overlap_pp;
  costs.overlap_pairs = l.overlap_pairs;
  costs.pair_contention = spec.cluster.accelerator.efficiency.contention;
  if (!run.plan.split_backward)
    for (auto& s : costs.stages) s.backward_input = s.backward_weight = s.backward_input_comm = 0;
  run.pipeline = lower(run.plan, costs);
  PipelineProgram& prog = *run.pipeline;
  OpGraph& g = prog.graph;
  run.kinds.reserve(prog.info.size());
  for (OpId op = 0; op < prog.info.size(); ++op) run.kinds.push_back(kind_of(prog.info.kind(op)));
  auto names = std::make_shared<std::vector<std::string>>();
  const std::size_t base = prog.info.size();
  auto add = [&](ResourceId r, Time dur, JobOpKind k, std::string name) {
    const OpId id = g.add_op(r, dur);
    run.kinds.push_back(k);
    names->push_back(std::move(name));
    return id;
  };
  // Input wait before every device's first op.
  if (spec.input_wait > 0) {
    const ResourceId in = g.add_resource("input");
    const OpId op = add(in, spec.input_wait, JobOpKind::Input, "input wait");
    for (int d = 0; d < prog.devices; ++d) g.add_dep(op, g.first_on(prog.compute[d]));
  }
  if (l.weight_replicas() > 1)
    for (int d = 0; d < prog.devices; ++d) emit_dp_device(run, d, add);
  g.set_namer([info = &prog.info, names, base](OpId op) -> std::string {
    if (op >= base) return (*names)[op - base];
    const PipeOpInfo& x = (*info)[op];
    return fmt::format("{}{}{} d{}", x.stage, pipe_op_letter(x.kind), x.micro, x.device);
  });
  try {
    run.timeline = stepsim::run(g);
  } catch (const GraphError& e) {
    if (!costs.blocking_sends) throw;
    throw SpecError("layout.overlap.pp", fmt::format("with blocking pipeline sends (overlap.pp false) schedule '{}' "
                                                     "deadlocks ({}); its order needs asynchronous sends: set pp true",
                                                     l.schedule, e.what()));
  }
}

namespace {
// The data-parallel lowering's plan for the FSDP path, its units still to add: the shard group,
// its hosts and link, the micro-batches, prefetch.
void start_fsdp_plan(const JobStepSpec& spec, const JobCommPlan& cp, DataParallelPlan& p) {
  const JobLayout& l = spec.layout;
  p.cards = l.dp * l.cp;
  p.cards_per_host = std::max(1, spec.cluster.node.gpus / (l.tp * l.cp));
  p.microbatches = static_cast<int>(l.microbatches());
  p.zero3 = true;
  p.prefetch = l.overlap_param_gather ? 2 : 0;
  p.keep_gathered = l.keep_gathered;
  p.input_wait = spec.input_wait;
  p.link = cp.paths.dp.inter_node || (l.dp_replicate > 1 && cp.paths.dp_replica.inter_node) ? LinkKind::HostNic
                                                                                            : LinkKind::PeerLink;
  p.link_bandwidth = static_cast<std::int64_t>(cp.paths.dp.ring_bytes_per_second);
}
}  // namespace

void run_fsdp_path(JobStepRun& run) {
  const JobStepSpec& spec = run.spec;
  const JobLayout& l = spec.layout;
  const ClusterSpec& c = spec.cluster;
  const JobCommPlan& cp = run.comm;
  const LayerStack stack(spec.model, l, c);
  const int layers = spec.model.shape.layers;
  const int members = l.dp * l.cp;
  DataParallelPlan& p = run.fsdp_plan;
  start_fsdp_plan(spec, cp, p);
  const double k = c.accelerator.efficiency.contention;
  // What DeepSpeed's rerun forward of a recomputed layer fetches again: every module but the
  // last, whose backward follows its rerun at once (its coordinator's reuse distance keeps it).
  const std::int64_t kept_at_rerun = zero3_kept_at_rerun(spec.model, l);
  // `bytes`: what a gathered parameter moves (gathered_bytes_per_parameter: 2, less in FP8).
  // `waits`: the stream's waits on activations' copies after the forward and before the backward
  // (offload_activations).
  auto unit = [&](std::string name, const PassSeconds& f, const PassSeconds& b, const HeldParameters& params,
                  double bytes, bool recomputed, std::pair<double, double> waits = {}) {
    DataParallelPlan::Unit u;
    u.name = std::move(name);
    const double gather = replica_collective_seconds(Collective::AllGather, params, bytes, l, cp.paths);
    double regather = 0;
    if (recomputed && l.zero3_fetch == Zero3Fetch::Module && !l.keep_gathered) {
      const HeldParameters again{std::max<std::int64_t>(0, params.dense - (params.expert > 0 ? 0 : kept_at_rerun)),
                                 params.expert};
      regather = replica_collective_seconds(Collective::AllGather, again, bytes, l, cp.paths);
      u.regather = phase_ns(regather);
      u.regather_bytes = replica_collective_bytes(Collective::AllGather, again, bytes, l, "a ZeRO-3 gather");
    }
    const double reduce = replica_collective_seconds(Collective::ReduceScatter, params, l.grad_bytes, l, cp.paths);
    // Prefetched collectives run under the compute; each slows it by the contention share of
    // the overlap (the next unit's gather under the forward; a gather and a reduce-scatter under
    // the backward; not under the host's waits, when the GPU runs nothing).
    const double ov = l.overlap_param_gather && members > 1 ? k : 0.0;
    u.forward = phase_ns(f.compute() + f.comm() + ov * std::min(f.kernels(), gather) + waits.first);
    // Kept from the forward, a layer's weights are not gathered again beside its backward.
    const double backward_gathers = l.keep_gathered ? 0.0 : gather + regather;
    u.backward_input =
        phase_ns(b.compute() + b.comm() + ov * std::min(b.kernels(), backward_gathers + reduce) + waits.second);
    u.gather = phase_ns(gather);
    u.reduce = phase_ns(reduce);
    u.gather_bytes = replica_collective_bytes(Collective::AllGather, params, bytes, l, "a ZeRO-3 gather");
    u.reduce_bytes =
        replica_collective_bytes(Collective::ReduceScatter, params, l.grad_bytes, l, "a ZeRO-3 reduce-scatter");
    u.has_gather = u.has_reduce = members > 1;
    p.units.push_back(u);
  };
  // Embedding and head from the chunk costs (the single chunk minus its layers; the chunk's waits
  // on offloaded activations go to the layers they follow or precede).
  const auto& ch = cp.chunks.front();
  const ChunkCost all = stack.layers(0, layers);
  PassSeconds ef = ch.forward + all.forward * -1.0;
  PassSeconds eb = ch.backward_input + all.backward_input * -1.0 + ch.backward_weight + all.backward_weight * -1.0;
  ef.offload = eb.offload = 0;
  const std::int64_t vh = spec.model.shape.vocab * spec.model.shape.hidden / l.tp;
  unit("embedding", PassSeconds{}, PassSeconds{}, {vh, 0}, 2, false);
  const std::vector<bool> recomputed = recomputed_layers(layers, l);
  const ActivationOffload& offload = ch.offload;
  for (int n = 0; n < layers; ++n) {
    const ChunkCost one = stack.layers(n, 1);
    const auto i = static_cast<std::size_t>(n);
    unit(fmt::format("layer {}", n), one.forward, one.backward_input + one.backward_weight, held_parameters(one),
         gathered_bytes_per_parameter(l, one), recomputed[i],
         offload.layers > 0 ? std::pair{offload.forward_waits[i], offload.backward_waits[i]} : std::pair{0.0, 0.0});
  }
  unit("head", ef, eb, {spec.model.shape.tied_embeddings ? 0 : vh, 0}, 2, false);
  run.fsdp = lower_data_parallel(p);
  for (const auto& x : run.fsdp->info) run.kinds.push_back(kind_of(x));
  // lower_data_parallel() finalizes its graph: the optimizer on the card's shard, which runs
  // after the card's last reduction, is added to the step after the run (run_job_step).
  OpGraph& g = run.fsdp->graph;
  run.timeline = stepsim::run(g);
}

}  // namespace stepsim
