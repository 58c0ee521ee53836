#include "schedules/lowering/pipeline/pipeline.hpp"
#include "sim/checked.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <span>
#include <stdexcept>

#include <fmt/format.h>

namespace stepsim {

std::int32_t PipeOpInfos::pair_micro2(OpId op) const {
  const auto it = std::lower_bound(pair_micro2_.begin(), pair_micro2_.end(), op,
                                   [](const std::pair<OpId, std::int32_t>& p, OpId x) { return p.first < x; });
  return it != pair_micro2_.end() && it->first == op ? it->second : -1;
}

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
// The pieces of an op's name, written forward from `p` (no capacity checks: the caller's room
// holds the longest name, five numbers of at most 20 characters and 16 of text).
char* put_number(char* p, std::int64_t v) { return std::to_chars(p, p + 20, v).ptr; }
template <std::size_t N>
char* put_text(char* p, const char (&text)[N]) {
  std::memcpy(p, text, N - 1);
  return p + N - 1;
}
// "aXb", the shape of every slot name ("1F3", "0:2").
char* put_pair(char* p, std::int64_t a, char x, std::int64_t b) {
  p = put_number(p, a);
  *p++ = x;
  return put_number(p, b);
}
}  // namespace

// The op names of deadlock messages and traces, written without a format string (a trace names
// every op): "update d0", "send 1F3 d1->d2", "send 2B3 d2->d1", "0F3+5B1", "1F3", "1W3".
char* write_pipe_op_name(char* p, const PipeOpInfo& x) {
  switch (x.kind) {
    case PipeOp::Update: return put_number(put_text(p, "update d"), x.device);
    case PipeOp::SendForward:
    case PipeOp::SendBackward:
      p = put_pair(put_text(p, "send "), x.stage, x.kind == PipeOp::SendForward ? 'F' : 'B', x.micro);
      p = put_number(put_text(p, " d"), x.device);
      return put_number(put_text(p, "->d"), x.peer());
    case PipeOp::Overlap:
      p = put_pair(p, x.stage, 'F', x.micro);
      *p++ = '+';
      return put_pair(p, x.stage2(), 'B', x.micro2);
    case PipeOp::Comm:
      p = put_pair(put_text(p, "comm "), x.stage, ':', x.micro);
      return put_number(put_text(p, " d"), x.device);
    default: return put_pair(p, x.stage, pipe_op_letter(x.kind), x.micro);
  }
}

void append_pipe_op_name(std::string& out, const PipeOpInfo& x) {
  char name[kPipeOpNameMax];
  out.append(name, write_pipe_op_name(name, x));
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
  std::string out;
  append_pipe_op_name(out, x);
  return out;
}
}  // namespace

namespace {

// The in-pass collectives of a split backward's input-gradient half.
Time input_comm(const StageCost& c) { return c.backward_input_comm > 0 ? c.backward_input_comm : c.backward_comm; }

// The in-pass collectives (a job's TP / CP / EP) of an action, 0 for none.
Time action_comm(const Action& a, const PipelineCosts& costs) {
  const StageCost& c = costs.stages.at(a.stage);
  switch (a.kind) {
    case ActionKind::Forward: return c.forward_comm;
    case ActionKind::Backward: return c.backward_comm;
    case ActionKind::BackwardInput: return input_comm(c);
    case ActionKind::BackwardWeight: return 0;
    case ActionKind::OverlapFB: {
      const StageCost& c2 = costs.stages.at(a.stage2);
      return c.forward_comm + (a.kind2 == ActionKind::Backward ? c2.backward_comm : input_comm(c2));
    }
  }
  return 0;
}

// An overlapped pair's compute: its forward and its backward (full, or input where split).
Time compute_of_pair(const Action& a, const PipelineCosts& costs) {
  const StageCost& c2 = costs.stages.at(a.stage2);
  return time_add(costs.stages.at(a.stage).forward, a.kind2 == ActionKind::Backward ? c2.backward : c2.backward_input,
                  "an overlapped forward + backward");
}

Time action_duration(const Action& a, const PipelineCosts& costs) {
  const StageCost& c = costs.stages.at(a.stage);
  switch (a.kind) {
    case ActionKind::Forward: return c.forward;
    case ActionKind::Backward: return c.backward;
    case ActionKind::BackwardInput: return c.backward_input;
    case ActionKind::BackwardWeight: return c.backward_weight;
    case ActionKind::OverlapFB: {
      if (costs.overlap_fb) return *costs.overlap_fb;
      const Time compute = compute_of_pair(a, costs);
      if (!costs.overlap_pairs) return compute;
      // Its collectives run beside it and take their share of the SMs where its kernels run
      // (PipelineCosts::pair_contention): not while it waits on the host.
      const Time host = costs.stages.at(a.stage).forward_host + costs.stages.at(a.stage2).backward_host;
      const Time kernels = std::max<Time>(0, compute - host);
      const double under = static_cast<double>(std::min(kernels, action_comm(a, costs)));
      return time_add(compute, static_cast<Time>(std::ceil(under * costs.pair_contention)), "an overlapped pair");
    }
  }
  return 0;
}

// Op emission: the compute ops in action order, then per (micro-batch, stage) the messages and
// dependencies between them, and what memory each holds.
class PipeEmitter {
 public:
  PipeEmitter(const PipelinePlan& plan, const PipelineCosts& costs, PipelineProgram& prog)
      : plan_(plan),
        costs_(costs),
        prog_(prog),
        g_(prog.graph),
        m_(plan.microbatches),
        fwd_(static_cast<std::size_t>(plan.stages) * plan.microbatches, kNoOp),
        bwd_(fwd_.size(), kNoOp),
        wgt_(plan.split_backward ? fwd_.size() : 0, kNoOp),
        msg_time_(transfer_time(costs.message, costs.bandwidth)) {}

  // The counts are known before anything is added: reserve once instead of growing (growth
  // copies and, at millions of ops, faults in twice the pages).
  void reserve() {
    const int p = plan_.devices, S = plan_.stages;
    std::size_t compute_ops = static_cast<std::size_t>(p), sends = 0, deps = 0;
    const std::size_t per_send = costs_.blocking_sends ? 5 : 2;  // see message()
    for (const auto& list : plan_.actions) compute_ops += list.size();
    for (int i = 0; i < m_; ++i)
      for (int s = 0; s < S; ++s) {
        const int dev = plan_.device_of(s, i);
        if (s > 0) {
          const bool hop = plan_.device_of(s - 1, i) != dev;
          sends += hop;
          deps += hop ? per_send : 1;
        }
        if (s + 1 < S) {
          const bool hop = plan_.device_of(s + 1, i) != dev;
          sends += hop;
          deps += hop ? per_send : 1;
        }
        deps += plan_.split_backward ? 2 : 1;  // F -> B, and B -> W where split (an upper bound)
      }
    g_.reserve(compute_ops + sends, deps);
    prog_.info.reserve(compute_ops + sends);
  }

  // Compute ops in each device's action order: the program order of its compute stream. They are
  // dealt round-robin over the devices (every device's k-th action, then the (k+1)-th), so that
  // ops running at about the same time sit near each other in memory: the engine then walks its
  // per-op records nearly sequentially instead of in p far-apart streams.
  void compute() {
    for (int d = 0; d < plan_.devices; ++d) prog_.compute.push_back(g_.add_resource(fmt::format("d{} compute", d)));
    for (const auto& c : costs_.stages) has_comm_ = has_comm_ || c.forward_comm > 0 || c.backward_comm > 0;
    if (has_comm_)
      for (int d = 0; d < plan_.devices; ++d) prog_.comm.push_back(g_.add_resource(fmt::format("d{} collectives", d)));
    last_comm_.assign(static_cast<std::size_t>(plan_.devices), kNoOp);
    last_on_stream_.assign(static_cast<std::size_t>(plan_.devices), kNoOp);
    if (costs_.blocking_sends) {
      open_group_.assign(static_cast<std::size_t>(plan_.devices), {});
      closed_group_.assign(static_cast<std::size_t>(plan_.devices), kNoOp);
    }
    std::size_t longest = 0;
    for (const auto& list : plan_.actions) longest = std::max(longest, list.size());
    for (std::size_t k = 0; k <= longest; ++k) {
      for (int d = 0; d < plan_.devices; ++d) {
        const auto& list = plan_.actions[d];
        if (k == list.size()) {
          const OpId u =
              add(prog_.compute[d], costs_.update[d], {PipeOp::Update, static_cast<std::int16_t>(d), -1, -1, -1});
          if (last_comm_[d] != kNoOp) pending_.emplace_back(last_comm_[d], u);
        }
        if (k < list.size()) action(d, list[k], paired(d, k));
      }
    }
  }

  void flows() {
    prog_.first_send = static_cast<OpId>(g_.op_count());
    for (const auto& [before, after] : pending_) dep(before, after);
    prog_.activations.assign(fwd_.size(), {kNoOp, kNoOp});
    for (int i = 0; i < m_; ++i) {
      for (int s = 0; s < plan_.stages; ++s) {
        const OpId f = fwd_[idx(s, i)], b = bwd_[idx(s, i)], w = wgt_.empty() ? kNoOp : wgt_[idx(s, i)];
        const int dev = plan_.device_of(s, i);
        if (s > 0) message(fwd_[idx(s - 1, i)], f, plan_.device_of(s - 1, i), dev, true, s - 1, i);
        if (s + 1 < plan_.stages) message(bwd_[idx(s + 1, i)], b, plan_.device_of(s + 1, i), dev, false, s + 1, i);
        dep(done(f), b);
        // A split backward keeps the activations until W; a full one until B.
        if (w != kNoOp) dep(b, w);
        prog_.activations[idx(s, i)] = {f, w != kNoOp ? w : b};
      }
    }
  }

 private:
  std::size_t idx(int s, int i) const { return static_cast<std::size_t>(s) * m_ + i; }

  OpId add(ResourceId r, Time dur, PipeOpInfo info) {
    const OpId id = g_.add_op(r, dur);
    prog_.info.push_back(info);
    return id;
  }

  // Whether device d's k-th action runs with the next one without an exchange between them.
  bool paired(int d, std::size_t k) const {
    if (plan_.paired_with_next.empty()) return false;
    const auto& list = plan_.paired_with_next[static_cast<std::size_t>(d)];
    return k + 1 < plan_.actions[d].size() && k < list.size() && list[k];
  }

  void action(int d, const Action& a, bool paired_with_next) {
    const PipeOpInfo info{pipe_kind(a.kind),
                          static_cast<std::int16_t>(d),
                          static_cast<std::int16_t>(a.kind == ActionKind::OverlapFB ? a.stage2 : -1),
                          static_cast<std::int16_t>(a.stage),
                          a.micro,
                          a.micro2};
    const OpId op = add(prog_.compute[d], action_duration(a, costs_), info);
    if (has_comm_) comm(d, a, op, last_on_stream_[d]);
    last_on_stream_[d] = op;
    if (costs_.blocking_sends) exchange_group(d, op, paired_with_next);
    switch (a.kind) {
      case ActionKind::Forward: fwd_[idx(a.stage, a.micro)] = op; break;
      case ActionKind::Backward:
      case ActionKind::BackwardInput: bwd_[idx(a.stage, a.micro)] = op; break;
      case ActionKind::BackwardWeight:
        if (wgt_.empty()) wgt_.assign(fwd_.size(), kNoOp);  // a plan not marked split
        wgt_[idx(a.stage, a.micro)] = op;
        break;
      case ActionKind::OverlapFB:
        fwd_[idx(a.stage, a.micro)] = op;
        bwd_[idx(a.stage2, a.micro2)] = op;
        break;
    }
  }

  // The action's in-pass collectives on the device's collectives resource after its compute op;
  // the device's next op waits for them, and so do the action's successors (done()). An
  // overlapped pair's run beside its compute (PipelineCosts::pair_contention): they wait for
  // what the compute waits for (dep() adds each of its dependencies to them too, and the op
  // before it on the stream), and a zero-length join after them and the compute ends the pair.
  void comm(int d, const Action& a, OpId op, OpId before_on_stream) {
    if (last_comm_[d] != kNoOp) pending_.emplace_back(last_comm_[d], op);
    const Time t = action_comm(a, costs_);
    if (t <= 0) return;
    const PipeOpInfo info{PipeOp::Comm, static_cast<std::int16_t>(d), -1, static_cast<std::int16_t>(a.stage), a.micro};
    const OpId cop = add(prog_.comm[d], t, info);
    OpId end = cop;
    if (a.kind == ActionKind::OverlapFB && costs_.overlap_pairs) {
      if (before_on_stream != kNoOp) pending_.emplace_back(before_on_stream, cop);
      end = add(prog_.comm[d], 0, info);
      pending_.emplace_back(op, end);
      if (beside_.size() <= op) beside_.resize(op + 1, kNoOp);
      beside_[op] = cop;
    } else {
      pending_.emplace_back(op, cop);
    }
    last_comm_[d] = end;
    if (prog_.pass_end.size() <= op) prog_.pass_end.resize(op + 1, kNoOp);
    prog_.pass_end[op] = end;
  }

  // Blocking sends: the compute ops between two exchanges of device d form a group; each op
  // learns its group's last op and the last op of the group before (kNoOp at the start).
  void exchange_group(int d, OpId op, bool paired_with_next) {
    if (group_last_.size() <= op) {
      group_last_.resize(op + 1, kNoOp);
      group_before_.resize(op + 1, kNoOp);
    }
    auto& open = open_group_[static_cast<std::size_t>(d)];
    open.push_back(op);
    if (paired_with_next) return;
    for (const OpId x : open) {
      group_last_[x] = op;
      group_before_[x] = closed_group_[static_cast<std::size_t>(d)];
    }
    closed_group_[static_cast<std::size_t>(d)] = op;
    open.clear();
  }

  // The op whose end completes an action: its collectives (or its pair's join) if it has any,
  // else itself.
  OpId done(OpId op) const { return prog_.end_of_pass(op); }

  // Links by (src, dst): a dense table while p^2 is small (every message looks one up), else a
  // map. A link carries its hop's latency (set once, when the link is made).
  struct Link {
    ResourceId resource = kNoOp;
  };
  // A link already made is one read of the table (where p^2 <= 2^20); making one is out of line.
  const Link& link(int src, int dst) {
    if (!link_table_.empty()) {
      const Link& l = link_table_[static_cast<std::size_t>(src) * plan_.devices + dst];
      if (l.resource != kNoOp) [[likely]]
        return l;
    }
    return make_link(src, dst);
  }
  [[gnu::noinline]] const Link& make_link(int src, int dst) {
    const int p = plan_.devices;
    if (link_table_.empty() && static_cast<std::int64_t>(p) * p <= (1 << 20))
      link_table_.resize(static_cast<std::size_t>(p) * p);
    Link& l = link_table_.empty() ? link_map_[{src, dst}] : link_table_[static_cast<std::size_t>(src) * p + dst];
    if (l.resource == kNoOp) {
      l.resource =
          g_.add_resource(fmt::format("link d{}->d{}", src, dst), Discipline::Fifo, costs_.latency_between(src, dst));
      prog_.link_ends[l.resource] = {src, dst};
    }
    return l;
  }

  // Inlined at every edge of the lowering (a 1F1B step adds 1.25 per op): the error is out of line.
  void dep(OpId before, OpId after) {
    if (before == after) [[unlikely]]
      throw_waits_on_itself(before);
    g_.add_dep(before, after);
    // An overlapped pair's collectives start with its compute: they wait for the same things.
    if (after < beside_.size() && beside_[after] != kNoOp) g_.add_dep(before, beside_[after]);
  }
  [[noreturn, gnu::cold, gnu::noinline]] void throw_waits_on_itself(OpId op) const {
    throw GraphError(fmt::format("{} would wait on itself", name_of(prog_.info[op])));
  }

  // A message from the action `producer` runs (on device src) to `to` (on device dst); same
  // device: a plain dependency. The send's first dependency is its consumer
  // (PipelineProgram::consumer_of).
  //
  // Blocking sends meet at exchanges (PipelineCosts::blocking_sends): the message leaves at the
  // sender's first exchange after its producer (after the producer's group) and is taken at the
  // receiver's last exchange before its consumer (before the consumer's group); it moves once
  // both devices have reached those exchanges, and neither device goes on past its exchange
  // until the message is done.
  void message(OpId producer, OpId to, int src, int dst, bool forward, int stage, int micro) {
    if (src == dst) {
      dep(done(producer), to);
      return;
    }
    const PipeOpInfo info{forward ? PipeOp::SendForward : PipeOp::SendBackward, static_cast<std::int16_t>(src),
                          static_cast<std::int16_t>(dst), static_cast<std::int16_t>(stage), micro};
    const Link& l = link(src, dst);
    const OpId send = add(l.resource, msg_time_, info);
    if (!costs_.blocking_sends) {
      dep(done(producer), send);
      dep(send, to);
    } else {
      const OpId sent_after = group_last_[producer], taken_after = group_before_[to];
      dep(done(sent_after), send);
      dep(send, to);
      if (taken_after != kNoOp) dep(done(taken_after), send);
      const OpId sender_next = g_.next_on_resource(sent_after);
      if (sender_next != kNoOp) dep(send, sender_next);
      const OpId receiver_next =
          taken_after != kNoOp ? g_.next_on_resource(taken_after) : g_.first_on(prog_.compute[dst]);
      if (receiver_next != to) dep(send, receiver_next);
    }
    (forward ? prog_.forward_messages : prog_.backward_messages)++;
  }

  const PipelinePlan& plan_;
  const PipelineCosts& costs_;
  PipelineProgram& prog_;
  OpGraph& g_;
  const int m_;
  std::vector<OpId> fwd_, bwd_, wgt_;  // per (stage, micro-batch): the op that runs it (W: split plans only)
  std::vector<Link> link_table_;
  std::map<std::pair<int, int>, Link> link_map_;
  const Time msg_time_;
  bool has_comm_ = false;
  std::vector<OpId> last_comm_;                 // per device: its last in-pass collectives op
  std::vector<OpId> beside_;                    // per overlapped pair's compute op: its collectives
  std::vector<OpId> last_on_stream_;            // per device: the last op on its compute stream
  std::vector<std::pair<OpId, OpId>> pending_;  // dependencies added once the ops exist
  // Blocking sends' exchanges: per compute op, the last op of its group and of the group before;
  // per device, the ops of its group being built and the last op of its last closed group.
  std::vector<OpId> group_last_, group_before_;
  std::vector<std::vector<OpId>> open_group_;
  std::vector<OpId> closed_group_;
};

}  // namespace

std::unique_ptr<PipelineProgram> lower(PipelinePlan& plan, const PipelineCosts& costs) {
  if (static_cast<int>(costs.stages.size()) != plan.stages)
    throw std::invalid_argument(fmt::format("costs for {} stages, plan has {}", costs.stages.size(), plan.stages));
  if (plan.devices > kMaxPipelineStages || plan.stages > kMaxPipelineStages)
    throw std::invalid_argument(fmt::format("{} devices and {} stages: a pipeline has at most {} of each", plan.devices,
                                            plan.stages, kMaxPipelineStages));
  if (static_cast<int>(costs.update.size()) != plan.devices)
    throw std::invalid_argument(
        fmt::format("update times for {} devices, plan has {}", costs.update.size(), plan.devices));
  auto holder = std::make_unique<PipelineProgram>();
  holder->devices = plan.devices;
  holder->microbatches = plan.microbatches;
  holder->message_bytes = costs.message;
  for (const auto& c : costs.stages) holder->activation_bytes.push_back(c.activation);
  PipeEmitter emitter(plan, costs, *holder);
  emitter.reserve();
  emitter.compute();
  plan.release_actions();
  emitter.flows();
  holder->graph.set_namer([&info = holder->info](OpId op) { return name_of(info[op]); });
  return holder;
}

}  // namespace stepsim
