#include "sim/engine.hpp"

#include <algorithm>
#include <queue>

#include <fmt/format.h>

namespace stepsim {
namespace {

// A heap entry: op `op` reaches point `kind` at `time`. End frees the resource, Done makes
// the result visible to successors (End + latency). Packed for a cheap comparison.
struct Event {
  Time time;
  std::uint32_t op;
  std::uint8_t kind;  // 0 = End, 1 = Done
  bool operator>(const Event& o) const {
    if (time != o.time) return time > o.time;
    if (kind != o.kind) return kind > o.kind;
    return op > o.op;
  }
};

struct ReadyOp {
  Time ready;
  OpId op;
  bool operator>(const ReadyOp& o) const { return ready != o.ready ? ready > o.ready : op > o.op; }
};

class Run {
 public:
  explicit Run(const OpGraph& g)
      : g_(g),
        n_(static_cast<OpId>(g.op_count())),
        pending_(n_),
        busy_(g.resource_count(), 0),
        cursor_(g.resource_count()),
        fifo_(g.resource_count()),
        dirty_flag_(g.resource_count(), 0) {
    tl_.start.assign(n_, -1);
    tl_.end.assign(n_, -1);
    for (OpId op = 0; op < n_; ++op) pending_[op] = g.in_degree(op);
    for (ResourceId r = 0; r < g.resource_count(); ++r) cursor_[r] = g.first_on(r);
  }

  Timeline go() {
    for (OpId op = 0; op < n_; ++op)
      if (pending_[op] == 0) became_ready(op, 0);
    offer_dirty(0);
    while (!events_.empty()) {
      const Time now = events_.top().time;
      while (!events_.empty() && events_.top().time == now) {
        const Event e = events_.top();
        events_.pop();
        if (e.kind == 0) on_end(e.op, now); else on_done(e.op, now);
      }
      offer_dirty(now);
    }
    if (done_count_ != n_) throw deadlock();
    return std::move(tl_);
  }

 private:
  void mark_dirty(ResourceId r) {
    if (!dirty_flag_[r]) { dirty_flag_[r] = 1; dirty_.push_back(r); }
  }

  void became_ready(OpId op, Time now) {
    const ResourceId r = g_.op_resource(op);
    if (g_.resource(r).discipline == Discipline::Fifo) fifo_[r].push({now, op});
    mark_dirty(r);
  }

  // Offers work to every resource touched at `now`, in resource-id order. Starting a
  // zero-duration op schedules its End at `now`, which the main loop handles next.
  void offer_dirty(Time now) {
    if (dirty_.size() > 1) std::sort(dirty_.begin(), dirty_.end());
    for (ResourceId r : dirty_) {
      dirty_flag_[r] = 0;
      if (busy_[r]) continue;
      OpId op = kNoOp;
      if (g_.resource(r).discipline == Discipline::Fifo) {
        if (!fifo_[r].empty()) { op = fifo_[r].top().op; fifo_[r].pop(); }
      } else {
        const OpId next = cursor_[r];
        if (next != kNoOp && pending_[next] == 0) op = next;
      }
      if (op == kNoOp) continue;
      busy_[r] = 1;
      tl_.start[op] = now;
      tl_.end[op] = now + g_.op_duration(op);
      events_.push({tl_.end[op], op, 0});
    }
    dirty_.clear();
  }

  void on_end(OpId op, Time now) {
    const ResourceId r = g_.op_resource(op);
    busy_[r] = 0;
    if (g_.resource(r).discipline == Discipline::ProgramOrder) cursor_[r] = g_.next_on_resource(op);
    mark_dirty(r);
    const Time lat = g_.op_latency(op);
    if (lat == 0) on_done(op, now); else events_.push({now + lat, op, 1});
  }

  void on_done(OpId op, Time now) {
    ++done_count_;
    tl_.makespan = std::max(tl_.makespan, now);
    g_.for_each_successor(op, [&](OpId s) {
      if (--pending_[s] == 0) became_ready(s, now);
    });
  }

  DeadlockError deadlock() const {
    // Which dependencies of each stuck op never finished: one scan of the edges, error path only.
    std::vector<DeadlockError::Stuck> stuck;
    std::vector<std::uint32_t> stuck_index(n_, ~0u);
    for (ResourceId r = 0; r < g_.resource_count(); ++r) {
      const OpId op = cursor_[r];
      if (g_.resource(r).discipline != Discipline::ProgramOrder || op == kNoOp) continue;
      stuck_index[op] = static_cast<std::uint32_t>(stuck.size());
      stuck.push_back({r, op, {}});
    }
    for (OpId u = 0; u < n_; ++u) {
      if (tl_.end[u] >= 0) continue;  // ran (a started op always ends: no stuck op has started)
      g_.for_each_successor(u, [&](OpId v) {
        if (stuck_index[v] != ~0u) stuck[stuck_index[v]].waits.push_back(u);
      });
    }
    std::string text = fmt::format("deadlock: {} of {} ops ran;", done_count_, n_);
    for (const auto& s : stuck) {
      std::string waits;
      for (OpId w : s.waits) waits += (waits.empty() ? "" : ", ") + g_.op_name(w);
      text += fmt::format(" [{} stuck at {} waiting on {}]", g_.resource(s.resource).name,
                          g_.op_name(s.op), waits.empty() ? "nothing (never offered)" : waits);
    }
    return DeadlockError(text, std::move(stuck));
  }

  const OpGraph& g_;
  OpId n_;
  Timeline tl_;
  std::vector<std::uint32_t> pending_;
  std::vector<std::uint8_t> busy_;
  std::vector<OpId> cursor_;
  std::vector<std::priority_queue<ReadyOp, std::vector<ReadyOp>, std::greater<>>> fifo_;
  std::vector<std::uint8_t> dirty_flag_;
  std::vector<ResourceId> dirty_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  OpId done_count_ = 0;
};

}  // namespace

Timeline run(OpGraph& graph) {
  graph.finalize();
  return Run(graph).go();
}

}  // namespace stepsim
