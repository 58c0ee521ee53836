#include "schedules/lowering/pipeline/pipeline.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace stepsim {

Time PipelineCosts::latency_between(int src, int dst) const {
  auto it = hop_latency.find({src, dst});
  return it == hop_latency.end() ? latency : it->second;
}

char pipe_op_letter(PipeOp kind) {
  switch (kind) {
    case PipeOp::Forward: return 'F';
    case PipeOp::Backward: return 'B';
    case PipeOp::BackwardInput: return 'I';
    case PipeOp::BackwardWeight: return 'W';
    case PipeOp::Overlap: return 'O';
    case PipeOp::Update: return 'U';
    case PipeOp::SendForward: return 'f';
    case PipeOp::SendBackward: return 'b';
    case PipeOp::Comm: return 'c';
  }
  return '?';
}

namespace {
PipeOp pipe_kind(ActionKind k) {
  switch (k) {
    case ActionKind::Forward: return PipeOp::Forward;
    case ActionKind::Backward: return PipeOp::Backward;
    case ActionKind::BackwardInput: return PipeOp::BackwardInput;
    case ActionKind::BackwardWeight: return PipeOp::BackwardWeight;
    case ActionKind::OverlapFB: return PipeOp::Overlap;
  }
  return PipeOp::Forward;
}

std::string name_of(const PipeOpInfo& x) {
  switch (x.kind) {
    case PipeOp::Update: return fmt::format("update d{}", x.device);
    case PipeOp::SendForward: return fmt::format("send {}F{} d{}->d{}", x.stage, x.micro, x.device, x.peer);
    case PipeOp::SendBackward: return fmt::format("send {}B{} d{}->d{}", x.stage, x.micro, x.device, x.peer);
    case PipeOp::Overlap: return fmt::format("{}F{}+{}B{}", x.stage, x.micro, x.stage2, x.micro2);
    case PipeOp::Comm: return fmt::format("comm {}:{} d{}", x.stage, x.micro, x.device);
    default: return fmt::format("{}{}{}", x.stage, pipe_op_letter(x.kind), x.micro);
  }
}
}  // namespace

std::unique_ptr<PipelineProgram> lower(const PipelinePlan& plan, const PipelineCosts& costs) {
  const int p = plan.devices, S = plan.stages, m = plan.microbatches;
  if (static_cast<int>(costs.stages.size()) != S)
    throw std::invalid_argument(fmt::format("costs for {} stages, plan has {}", costs.stages.size(), S));
  if (static_cast<int>(costs.update.size()) != p)
    throw std::invalid_argument(fmt::format("update times for {} devices, plan has {}", costs.update.size(), p));

  auto holder = std::make_unique<PipelineProgram>();
  PipelineProgram& prog = *holder;
  prog.devices = p;
  OpGraph& g = prog.graph;
  for (int d = 0; d < p; ++d) prog.compute.push_back(g.add_resource(fmt::format("d{} compute", d)));
  bool has_comm = false;
  for (const auto& c : costs.stages) has_comm = has_comm || c.forward_comm > 0 || c.backward_comm > 0;
  if (has_comm)
    for (int d = 0; d < p; ++d) prog.comm.push_back(g.add_resource(fmt::format("d{} collectives", d)));
  // The in-pass collective that ends each action (a successor waits for it, not for the compute),
  // and per device the last one, which the device's next compute op waits for.
  std::vector<OpId> done_of;
  std::vector<OpId> last_comm(p, kNoOp);
  std::vector<std::pair<OpId, OpId>> pending_deps;

  const auto idx = [m](int s, int i) { return static_cast<std::size_t>(s) * m + i; };
  std::vector<OpId> fwd(static_cast<std::size_t>(S) * m, kNoOp), bwd(fwd.size(), kNoOp), wgt(fwd.size(), kNoOp);

  auto add = [&](ResourceId r, Time dur, Time lat, PipeOpInfo info) {
    const OpId id = g.add_op(r, dur, lat);
    prog.info.push_back(info);
    return id;
  };

  // Compute ops in each device's action order: the program order of its compute stream. They are
  // dealt round-robin over the devices (every device's k-th action, then the (k+1)-th), so that
  // ops running at about the same time sit near each other in memory: the engine then walks its
  // per-op records nearly sequentially instead of in p far-apart streams.
  std::size_t longest = 0;
  for (const auto& list : plan.actions) longest = std::max(longest, list.size());
  for (std::size_t k = 0; k <= longest; ++k) {
    for (int d = 0; d < p; ++d) {
      const auto& list = plan.actions[d];
      if (k == list.size()) {
        const OpId u = add(prog.compute[d], costs.update[d], 0, {PipeOp::Update, static_cast<std::int16_t>(d), -1, -1, -1});
        if (last_comm[d] != kNoOp) pending_deps.emplace_back(last_comm[d], u);
      }
      if (k >= list.size()) continue;
      const Action& a = list[k];
      const StageCost& c = costs.stages.at(a.stage);
      Time dur = 0;
      switch (a.kind) {
        case ActionKind::Forward: dur = c.forward; break;
        case ActionKind::Backward: dur = c.backward; break;
        case ActionKind::BackwardInput: dur = c.backward_input; break;
        case ActionKind::BackwardWeight: dur = c.backward_weight; break;
        case ActionKind::OverlapFB: {
          const StageCost& c2 = costs.stages.at(a.stage2);
          dur = costs.overlap_fb ? *costs.overlap_fb
                                 : c.forward + (a.kind2 == ActionKind::Backward ? c2.backward : c2.backward_input);
          break;
        }
      }
      PipeOpInfo info{pipe_kind(a.kind), static_cast<std::int16_t>(d), -1, a.stage, a.micro, a.stage2, a.micro2};
      OpId op = add(prog.compute[d], dur, 0, info);
      if (has_comm) {
        if (last_comm[d] != kNoOp) pending_deps.emplace_back(last_comm[d], op);
        Time comm = 0;
        switch (a.kind) {
          case ActionKind::Forward: comm = c.forward_comm; break;
          case ActionKind::Backward:
          case ActionKind::BackwardInput: comm = c.backward_comm; break;
          case ActionKind::BackwardWeight: break;
          case ActionKind::OverlapFB: comm = c.forward_comm + costs.stages.at(a.stage2).backward_comm; break;
        }
        if (comm > 0) {
          const OpId cop = add(prog.comm[d], comm, 0, {PipeOp::Comm, static_cast<std::int16_t>(d), -1, a.stage, a.micro});
          pending_deps.emplace_back(op, cop);
          last_comm[d] = cop;
          if (done_of.size() <= cop) done_of.resize(cop + 1, kNoOp);
          done_of[op] = cop;
        }
      }
      switch (a.kind) {
        case ActionKind::Forward: fwd[idx(a.stage, a.micro)] = op; break;
        case ActionKind::Backward:
        case ActionKind::BackwardInput: bwd[idx(a.stage, a.micro)] = op; break;
        case ActionKind::BackwardWeight: wgt[idx(a.stage, a.micro)] = op; break;
        case ActionKind::OverlapFB:
          fwd[idx(a.stage, a.micro)] = op;
          bwd[idx(a.stage2, a.micro2)] = op;
          break;
      }
    }
  }

  std::map<std::pair<int, int>, ResourceId> links;
  auto link = [&](int src, int dst) {
    auto [it, fresh] = links.try_emplace({src, dst}, 0);
    if (fresh) {
      it->second = g.add_resource(fmt::format("link d{}->d{}", src, dst), Discipline::Fifo);
      prog.link_ends[it->second] = {src, dst};
    }
    return it->second;
  };
  auto dep = [&](OpId before, OpId after) {
    if (before == after)
      throw GraphError(fmt::format("{} would wait on itself", name_of(prog.info[before])));
    g.add_dep(before, after);
  };
  for (const auto& [before, after] : pending_deps) dep(before, after);
  // A pass is done for its successors once its in-pass collectives are.
  const auto done = [&](OpId op) { return op < done_of.size() && done_of[op] != kNoOp ? done_of[op] : op; };
  auto hold = [&](std::uint32_t counter, std::int64_t amount, Mark from, Mark until) {
    prog.holds.push_back({counter, amount, from, until});
  };
  const Time msg_time = transfer_time(costs.message, costs.bandwidth);
  // A message from `from` (on device src) to `to` (on device dst); same device: a plain dependency.
  auto message = [&](OpId from, OpId to, int src, int dst, bool forward, int stage, int micro) {
    if (src == dst) { dep(from, to); return; }
    const PipeOpInfo info{forward ? PipeOp::SendForward : PipeOp::SendBackward, static_cast<std::int16_t>(src),
                          static_cast<std::int16_t>(dst), stage, micro};
    const OpId send = add(link(src, dst), msg_time, costs.latency_between(src, dst), info);
    dep(from, send);
    dep(send, to);
    prog.consumer[send] = to;
    (forward ? prog.forward_messages : prog.backward_messages)++;
    hold(PipelineProgram::memory_counter(dst), costs.message, {send, OpPoint::Done}, {to, OpPoint::Start});
  };

  for (int i = 0; i < m; ++i) {
    for (int s = 0; s < S; ++s) {
      const OpId f = fwd[idx(s, i)], b = bwd[idx(s, i)], w = wgt[idx(s, i)];
      const int dev = plan.device_of(s, i);
      if (s > 0) message(done(fwd[idx(s - 1, i)]), f, plan.device_of(s - 1, i), dev, true, s - 1, i);
      if (s + 1 < S) message(done(bwd[idx(s + 1, i)]), b, plan.device_of(s + 1, i), dev, false, s + 1, i);
      dep(done(f), b);
      // A split backward keeps the activations until W; a full one until B.
      const OpId last = w != kNoOp ? w : b;
      if (w != kNoOp) dep(b, w);
      hold(PipelineProgram::memory_counter(dev), costs.stages[s].activation, {f, OpPoint::Start}, {last, OpPoint::End});
      hold(PipelineProgram::resident_counter(dev), 1, {f, OpPoint::Start}, {last, OpPoint::End});
    }
  }

  g.set_namer([&info = prog.info](OpId op) { return name_of(info[op]); });
  return holder;
}

PipelineStats measure(const PipelinePlan& plan, const PipelineProgram& program, const Timeline& timeline) {
  const OpGraph& g = program.graph;
  PipelineStats st;
  st.step_time = timeline.makespan;
  st.forward_messages = program.forward_messages;
  st.backward_messages = program.backward_messages;
  const auto busy = resource_busy(g, timeline);
  auto levels = sweep_levels(g, timeline, program.holds, 2 * static_cast<std::size_t>(program.devices));
  const auto copies = plan.stage_copies_per_device();
  double idle_sum = 0;
  for (int d = 0; d < program.devices; ++d) {
    DeviceStats ds;
    ds.id = d;
    ds.busy = busy[program.compute[d]];
    ds.idle = st.step_time - ds.busy;
    ds.peak_memory = levels[PipelineProgram::memory_counter(d)].peak;
    ds.peak_memory_time = levels[PipelineProgram::memory_counter(d)].peak_time;
    ds.peak_resident = static_cast<int>(levels[PipelineProgram::resident_counter(d)].peak);
    ds.stage_copies = copies[d];
    ds.parameter_copies = plan.stages > 0 ? static_cast<double>(copies[d]) * plan.devices / plan.stages : 0.0;
    idle_sum += st.step_time > 0 ? static_cast<double>(ds.idle) / static_cast<double>(st.step_time) : 0.0;
    st.devices.push_back(ds);
    st.memory.push_back(std::move(levels[PipelineProgram::memory_counter(d)]));
  }
  st.bubble_fraction = program.devices > 0 ? idle_sum / program.devices : 0.0;
  return st;
}

}  // namespace stepsim
