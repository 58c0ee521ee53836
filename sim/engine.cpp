#include "sim/engine.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <memory>
#include <queue>

#include <fmt/format.h>

namespace stepsim {
namespace {

// An event: op `op` reaches point `kind` at `time`. End frees the resource, Done makes the
// result visible to successors (End + latency).
struct Event {
  Time time;
  std::uint32_t op;
  std::uint8_t kind;  // 0 = End, 1 = Done
};

// The pending events, handed out one time at a time. Simulated time never goes back (every
// event is pushed at or after the time being processed), so a radix heap does: an event sits in
// the bucket of the highest bit where its time differs from the last time handed out, and only
// the first non-empty bucket is ever re-sorted. Push is O(1); each event moves down at most
// 64 buckets in its life, in practice one or two. (Ahuja, Mehlhorn, Orlin & Tarjan 1990.)
//
// Within one time the events come in no particular order. That is safe because everything
// processing them does commutes: pending counts are decremented, busy flags cleared, FIFO
// entries keyed by (ready time, op id) and resources marked dirty; nothing is started until the
// whole time has been processed. So the timeline is the one any fixed order within a time
// (say (kind, op id)) gives, without paying for sorting.
class EventQueue {
 public:
  bool empty() const { return size_ == 0; }

  void push(const Event& e) {
    const int b = bucket(e.time);
    buckets_[b].push_back(e);
    mask_ |= bit(b);
    ++size_;
  }

  // Moves every event of the earliest pending time into `out` (which must be empty) and
  // returns that time.
  Time pop_earliest(std::vector<Event>& out) {
    if (buckets_[0].empty()) {
      const int first = std::countr_zero(mask_) + 1;
      std::vector<Event>& from = buckets_[first];
      Time earliest = from.front().time;
      for (const Event& e : from) earliest = std::min(earliest, e.time);
      last_ = earliest;
      mask_ &= ~bit(first);
      for (const Event& e : from) {  // each lands in a lower bucket
        const int b = bucket(e.time);
        buckets_[b].push_back(e);
        mask_ |= bit(b);
      }
      from.clear();
    }
    out.swap(buckets_[0]);
    size_ -= out.size();
    return last_;
  }

 private:
  int bucket(Time t) const {
    return std::bit_width(static_cast<std::uint64_t>(t) ^ static_cast<std::uint64_t>(last_));  // 0 when t == last_
  }
  static std::uint64_t bit(int b) { return (std::uint64_t{1} << b) >> 1; }  // mask bit of bucket b; none for 0

  std::array<std::vector<Event>, 65> buckets_;
  std::uint64_t mask_ = 0;  // bit b-1 set: bucket b (1..64) is not empty
  Time last_ = 0;
  std::size_t size_ = 0;
};

// A FIFO resource's queue entry: earliest ready time first, ties broken by lower op id.
struct ReadyOp {
  Time ready;
  OpId op;
  bool operator>(const ReadyOp& o) const { return ready != o.ready ? ready > o.ready : op > o.op; }
};

using OpRecord = OpGraph::OpRecord;

// The engine reads the graph's records and successor lists in place (sim/op_graph.hpp lays them
// out for this loop); its own per-op state is the timeline, whose slots count pending
// dependencies until their ops start.
class Run {
 public:
  explicit Run(const OpGraph& g)
      : g_(g),
        n_(static_cast<OpId>(g.op_count())),
        rec_(g.records().data()),
        succ_(g.targets().data()),
        busy_(g.resource_count(), 0),
        cursor_(g.resource_count()),
        fifo_(g.resource_count()),
        dirty_flag_(g.resource_count(), 0),
        fifo_flag_(g.resource_count(), 0),
        latency_(g.resource_count(), 0) {
    // Until an op starts, its start slot counts its dependencies not yet done, as -1 minus the
    // count: it reaches -1 (kReady) when the last one is done, and a start time is >= 0. One
    // array serves as both, so the engine's own state is 8 bytes per op, and each count changes
    // on the cache line its start is written to soon after. The counts are made here, from the
    // successor lists (the graph's records do not carry them).
    tl_.start.assign(n_, kReady);
    pending_ = tl_.start.data();
    constexpr std::size_t kAhead = 16;  // the counts are scattered: ask for them ahead
    for (std::size_t i = 0, e = g.targets().size(); i < e; ++i) {
      if (i + kAhead < e) __builtin_prefetch(pending_ + succ_[i + kAhead]);
      --pending_[succ_[i]];
    }
    for (ResourceId r = 0; r < g.resource_count(); ++r) {
      cursor_[r] = g.first_on(r);
      fifo_flag_[r] = g.resource(r).discipline == Discipline::Fifo;
      latency_[r] = g.resource(r).latency;
    }
  }

  Timeline go() {
    for (OpId op = 0; op < n_; ++op)
      if (pending_[op] == kReady) became_ready(op, 0);
    offer_dirty(0);
    std::vector<Event> batch;
    while (!events_.empty()) {
      const Time now = events_.pop_earliest(batch);
      // The events of one time touch ops all over the graph: ask for their records and
      // successor lists up front, so that the misses overlap instead of queueing. (Pointer
      // arithmetic on the arrays' data: an op without successors may point one past the end.)
      for (const Event& e : batch) __builtin_prefetch(rec_ + e.op);
      for (const Event& e : batch) __builtin_prefetch(succ_ + rec_[e.op].first_succ);
      for (const Event& e : batch)
        for (std::uint32_t i = rec_[e.op].first_succ, last = rec_[e.op + 1].first_succ; i < last; ++i)
          __builtin_prefetch(pending_ + succ_[i]);
      // Every op done at this time (an arrival, or an end on a resource without latency) counts
      // its successors down first (the counts commute): those that reach zero are made ready
      // after the batch, their records (their resources) fetched meanwhile.
      for (const Event& e : batch)
        if (e.kind == 1 || latency_[rec_[e.op].resource] == 0) count_down(e.op);
      for (const Event& e : batch) {
        if (e.kind == 0)
          on_end(e.op, now);
        else
          on_done(now);
      }
      for (const OpId op : ready_) became_ready(op, now);
      ready_.clear();
      batch.clear();
      offer_dirty(now);
    }
    if (done_count_ != n_) {
      g_.check_acyclic();  // a cycle is named as such (GraphError), not as a deadlock
      throw deadlock();
    }
    return std::move(tl_);
  }

 private:
  void mark_dirty(ResourceId r) {
    if (!dirty_flag_[r]) {
      dirty_flag_[r] = 1;
      dirty_.push_back(r);
    }
  }

  void became_ready(OpId op, Time now) {
    const ResourceId r = rec_[op].resource;
    if (fifo_flag_[r]) {
      fifo_[r].push({now, op});
      mark_dirty(r);
    } else if (op == cursor_[r]) {
      // A program-order resource only ever starts its cursor op. (If the cursor moves onto
      // this op later in the same time, on_end marks the resource then.)
      mark_dirty(r);
    }
  }

  // Offers work to every resource touched at `now`. Each resource's choice depends only on its
  // own state, so the order of the offers does not matter (engine.hpp states it as resource-id
  // order; any order gives that timeline). Starting a zero-duration op schedules its End at
  // `now`, which the main loop handles next.
  void offer_dirty(Time now) {
    for (ResourceId r : dirty_) {
      dirty_flag_[r] = 0;
      if (busy_[r]) continue;
      OpId op = kNoOp;
      if (fifo_flag_[r]) {
        if (!fifo_[r].empty()) {
          op = fifo_[r].top().op;
          fifo_[r].pop();
        }
      } else {
        const OpId next = cursor_[r];
        if (next != kNoOp && pending_[next] == kReady) op = next;
      }
      if (op == kNoOp) continue;
      busy_[r] = 1;
      Time end;
      if (!add_time(now, rec_[op].duration, &end)) throw overflow(op, now, rec_[op].duration, "end");
      tl_.start[op] = now;
      events_.push({end, op, 0});
      // Its successor list is read when it is done, and the op after it on this resource starts
      // at the earliest when it ends: both are fetched now, a whole op's duration before they
      // are read (the list's first line; most lists are one or two ops).
      __builtin_prefetch(succ_ + rec_[op].first_succ);
      if (const OpId after = rec_[op].next; after != kNoOp) {
        __builtin_prefetch(rec_ + after);
        __builtin_prefetch(pending_ + after);
      }
    }
    dirty_.clear();
  }

  void on_end(OpId op, Time now) {
    const OpRecord& x = rec_[op];
    const ResourceId r = x.resource;
    busy_[r] = 0;
    if (!fifo_flag_[r]) cursor_[r] = x.next;
    mark_dirty(r);
    const Time latency = latency_[r];
    if (latency == 0) {
      on_done(now);
      return;
    }
    Time done;
    if (!add_time(now, latency, &done)) throw overflow(op, now, latency, "arrive");
    events_.push({done, op, 1});
  }

  // An op is done (its successors were counted down by count_down).
  void on_done(Time now) {
    ++done_count_;
    tl_.makespan = std::max(tl_.makespan, now);
  }

  void count_down(OpId op) {
    const std::uint32_t first = rec_[op].first_succ, last = rec_[op + 1].first_succ;
    for (std::uint32_t i = first; i < last; ++i) {
      const OpId s = succ_[i];
      if (++pending_[s] == kReady) {
        ready_.push_back(s);
        __builtin_prefetch(rec_ + s);
      }
    }
  }

  TimeOverflowError overflow(OpId op, Time now, Time add, const char* what) const {
    return TimeOverflowError(fmt::format(
        "too large: {} at {} ns plus {} ns would {} after the simulated time limit: the step would exceed {} years",
        g_.op_name(op), now, add, what, kTimeLimitYears));
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
      if (tl_.start[u] >= 0) continue;  // ran (a started op always ends: no stuck op has started)
      g_.for_each_successor(u, [&](OpId v) {
        if (stuck_index[v] != ~0u) stuck[stuck_index[v]].waits.push_back(u);
      });
    }
    std::string text = fmt::format("deadlock: {} of {} ops ran;", done_count_, n_);
    for (const auto& s : stuck) {
      std::string waits;
      for (OpId w : s.waits) waits += (waits.empty() ? "" : ", ") + g_.op_name(w);
      text += fmt::format(" [{} stuck at {} waiting on {}]", g_.resource(s.resource).name, g_.op_name(s.op),
                          waits.empty() ? "nothing (never offered)" : waits);
    }
    return DeadlockError(text, std::move(stuck));
  }

  const OpGraph& g_;
  OpId n_;
  Timeline tl_;
  const OpRecord* rec_;                       // the graph's: per op, plus a sentinel closing the last successor list
  const OpId* succ_;                          // the graph's successor lists, in op order
  // tl_.start's data: per op, its start, or before it starts -1 - its dependencies not yet done.
  Time* pending_ = nullptr;
  static constexpr Time kReady = -1;  // every dependency done, not started
  std::vector<std::uint8_t> busy_;
  std::vector<OpId> cursor_;
  std::vector<std::priority_queue<ReadyOp, std::vector<ReadyOp>, std::greater<>>> fifo_;
  std::vector<std::uint8_t> dirty_flag_;
  std::vector<std::uint8_t> fifo_flag_;  // per resource: Discipline::Fifo
  std::vector<Time> latency_;            // per resource: its ops' latency
  std::vector<ResourceId> dirty_;
  std::vector<OpId> ready_;  // made ready at the time being processed
  EventQueue events_;
  OpId done_count_ = 0;
};

}  // namespace

Timeline run(OpGraph& graph) {
  graph.finalize();
  return Run(graph).go();
}

}  // namespace stepsim
