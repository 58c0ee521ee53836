#include "schedules/lowering/job/job_step_parts.hpp"

#include <algorithm>
#include <array>
#include <map>

#include "sim/critical_path.hpp"
#include "sim/engine.hpp"

namespace stepsim {

// What limits the step: the critical path through the executed op graph (sim/critical_path.hpp),
// summed per kind of op and per resource, and the exposed communication by kind read from it.
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
    if (x.kind == PipeOp::Forward) return phase_ns(chunk(x.stage).forward.offload);
    if (x.kind == PipeOp::Backward || x.kind == PipeOp::BackwardInput)
      return phase_ns(chunk(x.stage).backward_input.offload);
    if (x.kind == PipeOp::Overlap)
      return phase_ns(chunk(x.stage).forward.offload) + phase_ns(chunk(x.stage2()).backward_input.offload);
    return 0;
  }
  if (op >= run.fsdp->info.size()) return 0;
  const DpOpInfo& x = run.fsdp->info[op];
  const ActivationOffload& a = cp.chunks.front().offload;
  const auto layer = static_cast<std::size_t>(x.unit - 1);
  if (x.unit < 1 || layer >= a.forward_waits.size()) return 0;
  if (x.kind == DpOp::Forward) return phase_ns(a.forward_waits[layer]);
  if (x.kind == DpOp::Backward || x.kind == DpOp::BackwardInput) return phase_ns(a.backward_waits[layer]);
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
    tp_c += phase_ns(ch.forward.tp + ch.backward_input.tp + (run.plan.split_backward ? ch.deferred_weight_grad.tp : 0));
    cp_c += phase_ns(ch.forward.cp + ch.backward_input.cp);
    ep_c += phase_ns(ch.forward.ep + ch.backward_input.ep);
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
                   {phase_ns(lp.forward.tp + lp.backward_input.tp), phase_ns(lp.forward.cp + lp.backward_input.cp),
                    phase_ns(lp.forward.ep + lp.backward_input.ep)});
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

}  // namespace stepsim
