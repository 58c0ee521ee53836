#include "schedules/lowering/job/job_step.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "schedules/pipeline/forward_backward_pairs.hpp"
#include "sim/checked.hpp"
#include "sim/critical_path.hpp"
#include "sim/engine.hpp"

namespace stepsim {

const char* job_op_kind_name(JobOpKind k) {
  switch (k) {
    case JobOpKind::Forward: return "forward";
    case JobOpKind::Backward: return "backward";
    case JobOpKind::BackwardWeight: return "weight gradient";
    case JobOpKind::InPassComm: return "TP/CP/EP collectives";
    case JobOpKind::PpSend: return "PP sends";
    case JobOpKind::DpComm: return "DP/ZeRO collectives";
    case JobOpKind::Optimizer: return "optimizer";
    case JobOpKind::Input: return "input wait";
    case JobOpKind::Other: return "other";
  }
  return "?";
}

namespace {
// Seconds to integer nanoseconds, rounded up (a cost is never shortened to zero by rounding).
Time ns(double seconds) { return seconds <= 0 ? 0 : time_from_ns(std::ceil(seconds * 1e9), "a step's phase"); }

constexpr double kBucketParams = 40e6;  // Megatron DDP bucket (40M elements)
}  // namespace

JobCommPlan plan_job_comm(const JobStepSpec& spec) {
  const JobLayout& l = spec.layout;
  const ClusterSpec& c = spec.cluster;
  JobCommPlan plan;
  plan.paths = group_paths(c, l);
  plan.chunks = chunk_costs(spec.model, l, c);
  for (const auto& ch : plan.chunks) {
    StageCost s;
    s.forward = ns(ch.forward.compute());
    // A full backward's input gradient has its weight gradient beside it; a split one's does not.
    const PassSeconds split = ch.backward_input + ch.deferred_weight_grad;
    s.backward_input = ns(split.compute());
    s.backward_weight = ns(ch.backward_weight.compute());
    s.backward = time_add(ns(ch.backward_input.compute()), s.backward_weight, "a backward (input + weight)");
    s.forward_comm = ns(ch.forward.comm());
    s.backward_comm = ns(ch.backward_input.comm());
    s.backward_input_comm = ns(split.comm());
    // The stream's waits: on the host's MoE work and on activations' copies.
    s.forward_host = ns(ch.forward.host + ch.forward.offload);
    s.backward_host = ns(ch.backward_input.host + ch.backward_input.offload);
    s.activation = ch.activation;
    plan.stages.push_back(s);
  }
  // PP message: the boundary activation b s h, split over TP ranks (SC21 sec. 4.1 scatter/gather).
  plan.pp_message = bytes_from(static_cast<double>(l.micro_batch) * static_cast<double>(spec.model.seq) / l.cp *
                                   static_cast<double>(spec.model.shape.hidden) * 2 / l.tp,
                               "a pipeline message");
  plan.pp_inter_node = plan.paths.pp.inter_node;
  plan.pp_latency = plan.paths.pp.step_latency;
  plan.pp_message_time = transfer_time(plan.pp_message, static_cast<std::int64_t>(plan.paths.pp.bytes_per_second));
  // DP: members are the dp x cp ranks holding the same weights (CP ranks reduce gradients too),
  // and with DualPipe both devices of a pipeline that hold a stage; an expert's weights are on
  // ep times fewer (HeldParameters).
  plan.dp_inter_node = plan.paths.dp.inter_node;
  plan.device_chunks = device_chunks(l);
  for (int d = 0; d < l.pp; ++d) {
    std::vector<Time> red;
    Time gather = 0;
    const auto& held = plan.device_chunks[static_cast<std::size_t>(d)];
    // Holding the first chunk and the last (DualPipe's device 0), the last one's embedding copy is
    // the first one's tensor: its gradient is reduced (and its weights gathered) once, with it.
    const int last = static_cast<int>(plan.chunks.size()) - 1;
    const bool both_ends =
        last > 0 && std::count(held.begin(), held.end(), 0) && std::count(held.begin(), held.end(), last);
    for (int k : held) {
      HeldParameters p = held_parameters(plan.chunks[static_cast<std::size_t>(k)]);
      if (both_ends && k == last) p.dense -= plan.chunks[static_cast<std::size_t>(k)].embedding_copy;
      if (l.zero == 0) {
        red.push_back(ns(replica_collective_seconds(Collective::AllReduce, p, l.grad_bytes, l, plan.paths)));
      } else {
        red.push_back(ns(replica_collective_seconds(Collective::ReduceScatter, p, l.grad_bytes, l, plan.paths)));
        const double bytes = gathered_bytes_per_parameter(l, plan.chunks[static_cast<std::size_t>(k)]);
        gather += ns(replica_collective_seconds(Collective::AllGather, p, bytes, l, plan.paths));
      }
    }
    plan.dp_reduce.push_back(red);
    plan.dp_gather.push_back(gather);
    plan.optimizer.push_back(ns(optimizer_seconds(l, c, held_parameters(held, plan.chunks))));
  }
  return plan;
}

namespace {

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
      u.regather = ns(regather);
      u.regather_bytes = replica_collective_bytes(Collective::AllGather, again, bytes, l, "a ZeRO-3 gather");
    }
    const double reduce = replica_collective_seconds(Collective::ReduceScatter, params, l.grad_bytes, l, cp.paths);
    // Prefetched collectives run under the compute; each slows it by the contention share of
    // the overlap (the next unit's gather under the forward; a gather and a reduce-scatter under
    // the backward; not under the host's waits, when the GPU runs nothing).
    const double ov = l.overlap_param_gather && members > 1 ? k : 0.0;
    u.forward = ns(f.compute() + f.comm() + ov * std::min(f.kernels(), gather) + waits.first);
    // Kept from the forward, a layer's weights are not gathered again beside its backward.
    const double backward_gathers = l.keep_gathered ? 0.0 : gather + regather;
    u.backward_input =
        ns(b.compute() + b.comm() + ov * std::min(b.kernels(), backward_gathers + reduce) + waits.second);
    u.gather = ns(gather);
    u.reduce = ns(reduce);
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

}  // namespace

namespace {
// The in-pass collectives' time on the critical path, `total`, split into TP, CP and EP in
// proportion to `weights` (each kind's time in the passes), in whole nanoseconds that add up to
// it: cut at the cumulative floors (as pipeline_spec.cpp shares a device's time between its
// chunks), so a kind whose weight is 0 gets nothing.
void set_exposure(JobStepResult& r, Time total, const std::array<Time, 3>& weights) {
  const __int128 sum = static_cast<__int128>(weights[0]) + weights[1] + weights[2];
  std::array<Time, 3> parts{};
  if (sum > 0 && total > 0) {
    __int128 before = 0;
    Time cut = 0;
    for (std::size_t i = 0; i < 3; ++i) {
      before += weights[i];
      const auto next = static_cast<Time>(static_cast<__int128>(total) * before / sum);
      parts[i] = next - cut;
      cut = next;
    }
  }
  r.exposed_tp = parts[0];
  r.exposed_cp = parts[1];
  r.exposed_ep = parts[2];
}

// How long [from, to) finds a resource idle: `busy` its intervals in start order (a resource never
// overlaps itself, so their ends are in order too).
Time idle_within(const std::vector<Interval>& busy, Time from, Time to) {
  Time idle = to - from;
  auto it = std::partition_point(busy.begin(), busy.end(), [&](const Interval& i) { return i.end <= from; });
  for (; it != busy.end() && it->start < to; ++it) idle -= std::min(to, it->end) - std::max(from, it->start);
  return idle;
}

// A communication on the critical path is exposed while the compute stream that waits for it
// stands idle; the rest of its time ran under compute, hidden (docs/job.md "Exposed
// communication"). The stream that waits: its consumer's (the lowest-numbered compute op
// depending on it, or on the zero-length join after it on its own resource: its device's next
// op, a message's receiver, the optimizer after the gradients); for an op whose result no compute
// op waits for (the last gradients' reduce-scatter), the stream its resource's other ops feed (its
// device's); else the path's next compute op's, else the path's last one's.
class Exposure {
 public:
  Exposure(const OpGraph& g, const Timeline& t, const std::vector<CriticalStep>& chain)
      : g_(g), t_(t), chain_(chain), compute_(g.resource_count()), fed_(g.resource_count(), kNone) {
    for (ResourceId x = 0; x < g.resource_count(); ++x)
      compute_[x] = g.resource(x).name.find("compute") != std::string::npos;
    for (OpId op = 0; op < g.op_count(); ++op)
      if (const ResourceId res = g.op_resource(op); !compute_[res] && fed_[res] == kNone)
        g.for_each_successor(op, [&](OpId s) {
          if (compute_[g.op_resource(s)] && fed_[res] == kNone) fed_[res] = g.op_resource(s);
        });
    on_path_.assign(chain.size(), kNone);
    for (std::size_t i = chain.size(); i-- > 0;) {
      const ResourceId res = g.op_resource(chain[i].op);
      on_path_[i] = compute_[res] ? res : i + 1 < chain.size() ? on_path_[i + 1] : kNone;
    }
    for (std::size_t i = 1; i < chain.size(); ++i)
      if (on_path_[i] == kNone) on_path_[i] = on_path_[i - 1];  // past the last compute op: its stream
  }

  // The exposed part of the path's i-th op.
  Time of(std::size_t i) {
    const OpId op = chain_[i].op;
    const ResourceId consumer = consumer_stream(op), device = fed_[g_.op_resource(op)];
    const ResourceId stream = consumer != kNone ? consumer : device != kNone ? device : on_path_[i];
    if (stream == kNone) return g_.op_duration(op);
    auto [it, added] = busy_.try_emplace(stream);
    if (added) it->second = resource_intervals(g_, t_, stream);
    return idle_within(it->second, t_.start[op], t_.end(g_, op));
  }

 private:
  static constexpr ResourceId kNone = ~ResourceId{0};

  ResourceId consumer_stream(OpId op) const {
    ResourceId found = kNone;
    OpId lowest = kNoOp;
    const auto look = [&](OpId s) {
      if (compute_[g_.op_resource(s)] && s < lowest) {
        lowest = s;
        found = g_.op_resource(s);
      }
    };
    g_.for_each_successor(op, look);
    if (found == kNone)
      g_.for_each_successor(op, [&](OpId s) {
        if (g_.op_resource(s) == g_.op_resource(op) && g_.op_duration(s) == 0) g_.for_each_successor(s, look);
      });
    return found;
  }

  const OpGraph& g_;
  const Timeline& t_;
  const std::vector<CriticalStep>& chain_;
  std::vector<bool> compute_;                         // per resource: a compute stream
  std::vector<ResourceId> fed_;                       // per resource: the compute stream its ops feed
  std::vector<ResourceId> on_path_;                   // per path op: the path's next (or last) compute stream
  std::map<ResourceId, std::vector<Interval>> busy_;  // compute streams' intervals, read once
};
}  // namespace

// What a compute op waits on activations' copies to or from the host (offload_activations): its
// chunk's waits on the pipeline path, its layer's on the FSDP path (units: the embedding, the
// layers, the head); 0 for any other op, and for the ops the job step adds past the lowering's
// (its DP collectives, the input's wait), which have no lowering info.
Time offload_wait(const JobStepRun& run, OpId op) {
  const JobCommPlan& cp = run.comm;
  if (run.spec.layout.offload_activations <= 0) return 0;
  if (run.pipeline) {
    if (op >= run.pipeline->info.size()) return 0;
    const PipeOpInfo x = run.pipeline->info[op];
    const auto chunk = [&](int stage) -> const ChunkCost& { return cp.chunks[static_cast<std::size_t>(stage)]; };
    if (x.kind == PipeOp::Forward) return ns(chunk(x.stage).forward.offload);
    if (x.kind == PipeOp::Backward || x.kind == PipeOp::BackwardInput) return ns(chunk(x.stage).backward_input.offload);
    if (x.kind == PipeOp::Overlap)
      return ns(chunk(x.stage).forward.offload) + ns(chunk(x.stage2()).backward_input.offload);
    return 0;
  }
  if (op >= run.fsdp->info.size()) return 0;
  const DpOpInfo& x = run.fsdp->info[op];
  const ActivationOffload& a = cp.chunks.front().offload;
  const auto layer = static_cast<std::size_t>(x.unit - 1);
  if (x.unit < 1 || layer >= a.forward_waits.size()) return 0;
  if (x.kind == DpOp::Forward) return ns(a.forward_waits[layer]);
  if (x.kind == DpOp::Backward || x.kind == DpOp::BackwardInput) return ns(a.backward_waits[layer]);
  return 0;
}

// The critical path summed per kind of op and per resource, and the exposed communication by
// kind read from it; `tail` is time appended after the graph (the FSDP path's optimizer). The
// compute stream's waits on activations' copies count as the host link's.
void critical_shares(JobStepRun& run, bool fsdp, Time tail) {
  const OpGraph& g = run.graph();
  const Timeline& t = run.timeline;
  const JobLayout& l = run.spec.layout;
  const ClusterSpec& c = run.spec.cluster;
  JobStepResult& r = run.result;
  // Critical path: time per kind of op and per resource; waits (latency) count as their own.
  const auto chain = critical_path(g, t);
  Exposure exposed(g, t, chain);
  std::map<std::string, Time> by_kind, by_res;
  Time tp_c = 0, cp_c = 0, ep_c = 0;
  for (const auto& ch : run.comm.chunks) {
    // A split schedule's input gradients wait for the TP collectives its weight gradients hid.
    tp_c += ns(ch.forward.tp + ch.backward_input.tp + (run.plan.split_backward ? ch.deferred_weight_grad.tp : 0));
    cp_c += ns(ch.forward.cp + ch.backward_input.cp);
    ep_c += ns(ch.forward.ep + ch.backward_input.ep);
  }
  Time in_pass = 0, prev_end = 0;
  for (std::size_t i = 0; i < chain.size(); ++i) {
    const OpId op = chain[i].op;
    const JobOpKind k = run.kinds[op];
    const Time d = g.op_duration(op);
    by_kind[job_op_kind_name(k)] += d;
    // Between the end of one op of the path and the start of the next: the first's latency (no
    // resource works then; the table by resource names it too, so that it adds up to the step).
    if (t.start[op] > prev_end) {
      by_kind["waits (latency)"] += t.start[op] - prev_end;
      by_res["waits (latency)"] += t.start[op] - prev_end;
    }
    prev_end = t.end(g, op);
    const std::string& rn = g.resource(g.op_resource(op)).name;
    const bool dp_res = rn.find(" dp") != std::string::npos || rn.rfind("card ", 0) == 0 || rn.rfind("host ", 0) == 0;
    std::string cls = rn.find("compute") != std::string::npos       ? "compute stream"
                      : dp_res                                      ? "data-parallel network"
                      : rn.find("collectives") != std::string::npos ? "intra-pass collectives (TP/CP/EP links)"
                      : rn.find("link") != std::string::npos        ? "pipeline links"
                                                                    : rn;
    by_res[cls] += d;
    if (const Time w = std::min(d, offload_wait(run, op)); w > 0) {
      by_kind[job_op_kind_name(k)] -= w;
      by_kind["activations to and from the host"] += w;
      by_res[cls] -= w;
      by_res["host link (activations)"] += w;
    }
    if (k == JobOpKind::InPassComm) in_pass += exposed.of(i);
    if (k == JobOpKind::PpSend) r.exposed_pp += exposed.of(i);
    if (k == JobOpKind::DpComm) r.exposed_dp += exposed.of(i);
  }
  set_exposure(r, in_pass, {tp_c, cp_c, ep_c});
  if (fsdp) {
    // In-pass collectives ride inside the FSDP path's compute ops: their share of the compute
    // on the critical path is the TP/CP/EP exposure.
    const ChunkCost lp = LayerStack(run.spec.model, l, c).layers(0, run.spec.model.shape.layers);  // all layers
    const double comm = lp.forward.comm() + lp.backward_input.comm();
    const double all = comm + lp.forward.compute() + lp.backward_input.compute() + lp.backward_weight.compute();
    const Time compute_on_path = by_kind["forward"] + by_kind["backward"];
    if (all > 0 && comm > 0) {
      const double sh = comm / all;
      const Time moved = static_cast<Time>(static_cast<double>(compute_on_path) * sh);
      set_exposure(r, moved,
                   {ns(lp.forward.tp + lp.backward_input.tp), ns(lp.forward.cp + lp.backward_input.cp),
                    ns(lp.forward.ep + lp.backward_input.ep)});
    }
  }
  if (tail > 0) {
    by_kind[job_op_kind_name(JobOpKind::Optimizer)] += tail;
    by_res["compute stream"] += tail;
  }
  const Time total = std::max<Time>(1, r.step_time);
  for (const auto& [k, v] : by_kind)
    r.critical_by_kind.push_back({k, v, static_cast<double>(v) / static_cast<double>(total)});
  for (const auto& [k, v] : by_res)
    r.critical_by_resource.push_back({k, v, static_cast<double>(v) / static_cast<double>(total)});
  auto by_time = [](const CriticalShare& a, const CriticalShare& b) {
    return a.time != b.time ? a.time > b.time : a.what < b.what;
  };
  std::sort(r.critical_by_kind.begin(), r.critical_by_kind.end(), by_time);
  std::sort(r.critical_by_resource.begin(), r.critical_by_resource.end(), by_time);
}

namespace {
// The schedule's action lists for the layout's pipeline; SpecError at the layout key at fault.
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
}  // namespace

namespace {

// MFU's peak: the one the layers' GEMMs run at (FP8's, FP4's under nvfp4, else BF16's).
double mfu_peak(const JobLayout& l, const AcceleratorSpec& a) {
  const double low = l.fp8 ? a.low_precision_peak(l.fp8_recipe) : 0;
  return low > 0 ? low : a.peak_bf16;
}

// One layer's passes on one GPU for one micro-batch, as the result reports them: the model's layer
// (a hybrid's softmax one, a hybrid pattern's mean), each kind of a hybrid's, the host waits (a
// pattern's MoE layer's), the MoE block alone, and the softmax attention layer's tiles.
void layer_figures(const JobModel& m, const JobLayout& l, const ClusterSpec& c, JobStepResult& r) {
  const auto pass_seconds = [](const LayerPasses& p, double& forward, double& backward) {
    forward = p.forward.compute() + p.forward.comm();
    backward = p.backward_input.compute() + p.backward_input.comm() + p.backward_weight.compute();
  };
  const auto host_seconds = [](const LayerPasses& p) { return p.forward.host + p.backward_input.host; };
  // The parts pass_seconds sums: the weight gradients' compute, not their collectives.
  const auto add_parts = [&](const LayerPasses& p, double share) {
    PassSeconds weight = p.backward_weight;
    weight.tp = weight.cp = weight.ep = 0;
    r.layer_forward += p.forward * share;
    r.layer_backward += (p.backward_input + weight) * share;
  };
  const auto add_kind = [&](const char* what, const JobModel& kind) {
    JobStepResult::KindLayer k{what};
    const LayerPasses p = layer_passes(kind, l, c);
    pass_seconds(p, k.forward_s, k.backward_s);
    r.kind_layers.push_back(k);
    return p;
  };
  if (!m.hybrid_pattern.empty()) {
    // The pattern's kinds, each a layer of one block: the model itself is none of them.
    for (const auto& [symbol, what] : hybrid_pattern_blocks()) {
      const int n = pattern_layers_in(m, symbol, 0, m.shape.layers);
      if (n == 0) continue;
      const JobModel kind = layer_kind_model(m, layer_kind(m, static_cast<int>(m.hybrid_pattern.find(symbol))));
      const LayerPasses p = add_kind(what, kind);
      r.layer_forward_s += n * r.kind_layers.back().forward_s / m.shape.layers;
      r.layer_backward_s += n * r.kind_layers.back().backward_s / m.shape.layers;
      add_parts(p, static_cast<double>(n) / m.shape.layers);
      r.layer_host_s = std::max(r.layer_host_s, host_seconds(p));
      if (const LayerWork w = layer_work(kind, l); w.attention_tiles.keys_per_query > 0)
        r.attention_tiles = w.attention_tiles;
    }
  } else {
    r.attention_tiles = layer_work(m, l).attention_tiles;
    const LayerPasses lp = layer_passes(m, l, c);
    pass_seconds(lp, r.layer_forward_s, r.layer_backward_s);
    add_parts(lp, 1.0);
    r.layer_host_s = host_seconds(lp);
    if (!m.every_layer_linear() && linear_layers_in(m, 0, m.shape.layers) > 0) {
      add_kind("softmax", m);
      add_kind("Gated DeltaNet", linear_layer_model(m));
    }
  }
  pass_seconds(moe_block_passes(m, l, c), r.moe_block_forward_s, r.moe_block_backward_s);
}

JobStepRun run_once(const JobStepSpec& spec) {
  JobStepRun run;
  run.spec = spec;
  const JobLayout& l = spec.layout;
  const ClusterSpec& c = spec.cluster;
  run.comm = plan_job_comm(spec);
  const bool fsdp = l.zero >= 3;
  if (!fsdp) {
    run.plan = job_pipeline_plan(l);
    check_placement(run.plan, run.comm);
    run_pipeline_path(run);
  } else {
    run_fsdp_path(run);
  }
  const OpGraph& g = run.graph();
  const Timeline& t = run.timeline;
  JobStepResult& r = run.result;
  // The FSDP path's optimizer follows the graph's end (see run_fsdp_path).
  const Time tail = fsdp ? run.comm.optimizer[0] : 0;
  r.step_time = t.makespan + tail;
  r.gpus = l.ranks();
  r.simulated_devices = fsdp ? 1 : l.pp;
  r.ops = static_cast<std::int64_t>(g.op_count());
  r.microbatches = l.microbatches();
  const double step_s = to_s(r.step_time);
  const StepFlops fl = step_flops(spec.model, l);
  const double peak = mfu_peak(l, c.accelerator);
  r.tokens_per_s_per_gpu =
      static_cast<double>(l.global_batch) * static_cast<double>(spec.model.seq) / step_s / static_cast<double>(r.gpus);
  r.model_tflops_per_gpu = fl.model / step_s / static_cast<double>(r.gpus) / 1e12;
  r.hardware_tflops_per_gpu = fl.hardware / step_s / static_cast<double>(r.gpus) / 1e12;
  r.mfu = r.model_tflops_per_gpu * 1e12 / peak;
  r.hfu = r.hardware_tflops_per_gpu * 1e12 / peak;

  // Bubble: the share of the step in which neither a device's compute stream nor its in-pass
  // collectives work (an overlapped pair runs the two at once).
  const auto busy = resource_busy(g, t);
  double idle = 0;
  if (!fsdp) {
    const PipelineProgram& prog = *run.pipeline;
    Time busiest = -1;
    for (int d = 0; d < prog.devices; ++d) {
      const auto k = static_cast<std::size_t>(d);
      const Time b = prog.comm.empty() ? busy[prog.compute[k]]
                                       : busy_union(resource_intervals(g, t, prog.compute[k]),
                                                    resource_intervals(g, t, prog.comm[k]));
      idle += 1.0 - static_cast<double>(b) / static_cast<double>(r.step_time);
      if (b > busiest) {  // the lowest rank on ties
        busiest = b;
        r.busiest_rank = d;
      }
    }
    r.bubble = idle / prog.devices;
    r.stage_imbalance =
        std::max(0.0, r.bubble - (1.0 - static_cast<double>(busiest) / static_cast<double>(r.step_time)));
  } else {
    r.bubble = 1.0 - static_cast<double>(busy[run.fsdp->compute[0]] + tail) / static_cast<double>(r.step_time);
  }

  critical_shares(run, fsdp, tail);

  // Memory: activations at the pipeline's simulated peak (messages included) on the worst device.
  std::vector<Bytes> act_peaks;
  if (!fsdp) {
    const PipelineStats st = measure(run.plan, *run.pipeline, t);
    for (const auto& d : st.devices) act_peaks.push_back(d.peak_memory);
  }
  r.memory_by_rank = job_memory_by_rank(spec.model, l, run.comm.chunks, act_peaks);
  r.memory = most_loaded(r.memory_by_rank);
  r.capacity = c.accelerator.usable_memory;
  layer_figures(spec.model, l, c, r);
  return run;
}

}  // namespace

JobStepRun run_job_step(const JobStepSpec& spec) {
  JobStepRun run = run_once(spec);
  // recompute_layers: auto was counted by the analytic memory, a lower bound: while the simulated
  // peak is over, one layer more of each chunk, up to every layer.
  if (spec.layout.fewest_recompute) {
    JobStepSpec s = spec;
    const int most = most_chunk_layers(s.model, s.layout);
    while (run.result.memory.total() > run.result.capacity && s.layout.partial_recompute()) {
      const int n = s.layout.recompute_layers + 1;
      s.layout.recompute_layers = n >= most ? -1 : n;
      run = run_once(s);
    }
  }
  // offload_activations: auto likewise: one layer more on the host while the simulated peak is over.
  if (spec.layout.fewest_offloaded) {
    JobStepSpec s = spec;
    while (run.result.memory.total() > run.result.capacity && s.layout.offload_activations + 1 < s.model.shape.layers) {
      ++s.layout.offload_activations;
      run = run_once(s);
    }
  }
  return run;
}

}  // namespace stepsim
