// critical_path (sim/critical_path.hpp) against its stated rules, on a few hundred random graphs full of
// ties (zero durations, zero and nonzero latencies, program-order and FIFO resources).
//
// What is checked against what:
//  * the engine's timeline against a replay of the engine's rules written here (engine.hpp), which also
//    records the order each resource served its ops: "the op that ran before it on its resource" is that
//    recorded order, not something guessed from the timeline (zero-length FIFO ops can share a start);
//  * the chain's last op against the done times: done at the makespan, the lowest id on ties;
//  * each op's predecessor and reason against the candidates computed here from the graph, the timeline
//    and the recorded order: dependencies done exactly at its start (lowest id), else the op that held
//    its resource (served before it; on a FIFO link the last served one that started earlier) if that
//    one ended exactly then, else none (Why::Start);
//  * the links' arithmetic: dependency end + latency == start, or same resource and end == start; the
//    first op starts at 0 (see check_first); durations plus latencies sum to the makespan;
//  * determinism: the same chain twice, and from a second run of a copy of the graph.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sim/critical_path.hpp"
#include "sim/engine.hpp"

using namespace stepsim;
using Why = CriticalStep::Why;

namespace {

// A timeline plus, per op, the op its resource served just before it (kNoOp for its first).
struct Replay {
  Timeline timeline;
  std::vector<OpId> served_before;
};

// The engine's rules, one event at a time: at each time, all end/done events are applied, then the free
// resources are offered work in resource-id order; zero-length ops end at the same time and their events
// are applied before the next offer round. FIFO queues are keyed by (ready time, op id).
class Replayer {
 public:
  explicit Replayer(const OpGraph& g)
      : g_(g), pending_(g.in_degrees()), cursor_(g.resource_count()), last_(g.resource_count(), kNoOp),
        busy_(g.resource_count(), false), fifo_(g.resource_count()) {
    out_.timeline.start.assign(g.op_count(), -1);
    out_.served_before.assign(g.op_count(), kNoOp);
    for (ResourceId r = 0; r < g.resource_count(); ++r) cursor_[r] = g.first_on(r);
  }

  Replay run() {
    for (OpId op = 0; op < g_.op_count(); ++op)
      if (pending_[op] == 0) ready(op, 0);
    offer(0);
    while (!events_.empty()) {
      const Time now = events_.top().time;
      while (!events_.empty() && events_.top().time == now) apply(now);
      offer(now);
    }
    return std::move(out_);
  }

 private:
  struct Event {
    Time time;
    int kind;  // 0 = end (frees the resource), 1 = done (reaches the successors)
    OpId op;
    bool operator>(const Event& o) const { return std::tie(time, kind, op) > std::tie(o.time, o.kind, o.op); }
  };
  using Key = std::pair<Time, OpId>;  // FIFO order: ready time, then op id
  template <class T>
  using MinHeap = std::priority_queue<T, std::vector<T>, std::greater<>>;

  void ready(OpId op, Time now) {
    const ResourceId r = g_.op_resource(op);
    if (g_.resource(r).discipline == Discipline::Fifo) fifo_[r].push({now, op});
  }
  OpId next_for(ResourceId r) {
    if (g_.resource(r).discipline == Discipline::ProgramOrder)
      return cursor_[r] != kNoOp && pending_[cursor_[r]] == 0 ? cursor_[r] : kNoOp;
    if (fifo_[r].empty()) return kNoOp;
    const OpId op = fifo_[r].top().second;
    fifo_[r].pop();
    return op;
  }
  void offer(Time now) {
    for (ResourceId r = 0; r < g_.resource_count(); ++r) {
      const OpId op = busy_[r] ? kNoOp : next_for(r);
      if (op == kNoOp) continue;
      busy_[r] = true;
      out_.timeline.start[op] = now;
      out_.served_before[op] = last_[r];
      last_[r] = op;
      events_.push({now + g_.op_duration(op), 0, op});
    }
  }
  void done(OpId op, Time now) {
    out_.timeline.makespan = std::max(out_.timeline.makespan, now);
    g_.for_each_successor(op, [&](OpId s) {
      if (--pending_[s] == 0) ready(s, now);
    });
  }
  void apply(Time now) {
    const Event e = events_.top();
    events_.pop();
    if (e.kind == 1) return done(e.op, now);
    const ResourceId r = g_.op_resource(e.op);
    busy_[r] = false;
    if (g_.resource(r).discipline == Discipline::ProgramOrder) cursor_[r] = g_.next_on_resource(e.op);
    if (g_.op_latency(e.op) == 0) return done(e.op, now);
    events_.push({now + g_.op_latency(e.op), 1, e.op});
  }

  const OpGraph& g_;
  std::vector<std::uint32_t> pending_;
  std::vector<OpId> cursor_, last_;
  std::vector<bool> busy_;
  std::vector<MinHeap<Key>> fifo_;
  MinHeap<Event> events_;
  Replay out_;
};

// Dependencies only on lower ids and program order in id order, so every graph finishes. Small durations
// and latencies (half of them 0) make ties common: several dependencies done at once, zero-length ops
// sharing a start on a FIFO resource.
OpGraph random_graph(std::mt19937_64& rng) {
  OpGraph g;
  std::uniform_int_distribution<int> pct(0, 99), dur(0, 3), lat(1, 2);
  const int resources = 1 + static_cast<int>(rng() % 8), ops = 1 + static_cast<int>(rng() % 120);
  for (int r = 0; r < resources; ++r) {
    const Discipline d = pct(rng) < 50 ? Discipline::Fifo : Discipline::ProgramOrder;
    g.add_resource(fmt::format("r{}", r), d, pct(rng) < 50 ? 0 : lat(rng));
  }
  std::uniform_int_distribution<ResourceId> res(0, static_cast<ResourceId>(resources - 1));
  for (int i = 0; i < ops; ++i) {
    const OpId op = g.add_op(res(rng), pct(rng) < 30 ? 0 : dur(rng));
    if (op == 0) continue;
    std::uniform_int_distribution<OpId> before(op > 12 ? op - 12 : 0, op - 1);
    for (int d = pct(rng) % 4; d > 0; --d) g.add_dep(before(rng), op);
  }
  return g;
}

// Per op, its dependencies (the graph stores successors only).
std::vector<std::vector<OpId>> dependencies(const OpGraph& g) {
  std::vector<std::vector<OpId>> deps(g.op_count());
  for (OpId u = 0; u < g.op_count(); ++u) g.for_each_successor(u, [&](OpId v) { deps[v].push_back(u); });
  return deps;
}

// The header's rule for one op, from the candidates: the lowest-id dependency done exactly at its start,
// else the op that held its resource if that one ended exactly then, else none. The holder is the op
// served just before it; on a FIFO link, zero-length ops served at its start time are passed over (they
// took no time: the holder is the one served before them, which started earlier).
CriticalStep expected_step(const OpGraph& g, const Replay& rp, const std::vector<OpId>& deps, OpId v,
                           OpId& pred) {
  const Timeline& t = rp.timeline;
  pred = kNoOp;
  for (OpId u : deps)
    if (t.done(g, u) == t.start[v] && u < pred) pred = u;
  if (pred != kNoOp) return {v, Why::Dependency};
  OpId b = rp.served_before[v];
  if (g.resource(g.op_resource(v)).discipline == Discipline::Fifo)
    while (b != kNoOp && t.start[b] == t.start[v]) b = rp.served_before[b];
  if (b != kNoOp && t.end(g, b) == t.start[v]) {
    pred = b;
    return {v, Why::Resource};
  }
  return {v, Why::Start};
}

// What the chains exercised, so that the generator is known to reach the cases the rules single out.
struct Coverage {
  int dependency_ties = 0;  // ops with several dependencies done exactly at their start
  int fifo_links = 0;       // resource links on FIFO resources
  int shared_starts = 0;    // resource links whose two ops started at the same time (zero-length first)
  int passed_over = 0;      // FIFO ops served after zero-length ops at their own start time
};

// Counts what one step exercised.
void count(const OpGraph& g, const Timeline& t, const std::vector<OpId>& deps, OpId v, OpId pred, OpId rp_before,
           Why why, Coverage& cov) {
  int at_start = 0;
  for (OpId u : deps) at_start += t.done(g, u) == t.start[v];
  cov.dependency_ties += at_start > 1;
  const bool fifo = g.resource(g.op_resource(v)).discipline == Discipline::Fifo;
  cov.passed_over += fifo && rp_before != kNoOp && t.start[rp_before] == t.start[v];
  if (why != Why::Resource) return;
  cov.fifo_links += g.resource(g.op_resource(v)).discipline == Discipline::Fifo;
  cov.shared_starts += t.start[pred] == t.start[v];
}

// The last op: done at the makespan, and no lower id is.
void check_last(const OpGraph& g, const Timeline& t, OpId last) {
  REQUIRE(t.done(g, last) == t.makespan);
  for (OpId op = 0; op < last; ++op) REQUIRE(t.done(g, op) < t.makespan);
}

// Walks the chain from its end: each step's reason and predecessor are the expected ones, and the link's
// arithmetic holds. Returns the sum of durations and latencies along the chain.
Time check_links(const OpGraph& g, const Replay& rp, const std::vector<CriticalStep>& chain, Coverage& cov) {
  const Timeline& t = rp.timeline;
  const auto deps = dependencies(g);
  Time sum = g.op_latency(chain.back().op);  // the last op's result reaches the makespan after it ends
  for (std::size_t i = chain.size(); i-- > 0;) {
    const OpId v = chain[i].op;
    INFO("step " << i << " of " << chain.size() << ": op " << v << " starts at " << t.start[v]);
    OpId pred = kNoOp;
    const CriticalStep want = expected_step(g, rp, deps[v], v, pred);
    REQUIRE(chain[i].why == want.why);
    sum += g.op_duration(v);
    count(g, t, deps[v], v, pred, rp.served_before[v], want.why, cov);
    if (i == 0) break;
    REQUIRE(chain[i - 1].op == pred);
    if (want.why == Why::Dependency) {
      REQUIRE(t.done(g, pred) == t.start[v]);
      sum += g.op_latency(pred);
    } else {
      REQUIRE(g.op_resource(pred) == g.op_resource(v));
      REQUIRE(t.end(g, pred) == t.start[v]);
    }
  }
  return sum;
}

// The first op waited for nothing. Why it then starts at 0: a program-order op starts at the latest of
// its ready time and its predecessor's end, a FIFO op at its ready time or when the resource, busy without
// a gap since then, frees (its predecessor's end); with neither equal to its start, the start is the
// ready time of an op without dependencies, 0.
void check_first(const Timeline& t, const CriticalStep& first) {
  REQUIRE(first.why == Why::Start);
  REQUIRE(t.start[first.op] == 0);
}

void check_graph(OpGraph& g, Coverage& cov) {
  g.finalize();
  const Replay rp = Replayer(g).run();
  OpGraph copy = g;
  const Timeline t = run(g);
  // The replay stands for the engine only if it gives the same timeline.
  REQUIRE(t.start == rp.timeline.start);
  REQUIRE(t.makespan == rp.timeline.makespan);
  const auto chain = critical_path(g, t);
  REQUIRE(!chain.empty());
  REQUIRE(chain.size() <= g.op_count());
  check_last(g, t, chain.back().op);
  check_first(t, chain.front());
  REQUIRE(check_links(g, rp, chain, cov) == t.makespan);
  // Determinism: the same chain from the same inputs, and from a fresh run of the same graph.
  const auto again = critical_path(g, t);
  const auto other = critical_path(copy, run(copy));
  for (const auto* c : {&again, &other}) {
    REQUIRE(c->size() == chain.size());
    for (std::size_t i = 0; i < chain.size(); ++i) {
      REQUIRE((*c)[i].op == chain[i].op);
      REQUIRE((*c)[i].why == chain[i].why);
    }
  }
}

}  // namespace

TEST_CASE("the critical path follows its stated rules on random graphs with ties", "[critical_path][properties]") {
  std::mt19937_64 rng(0x5eed'c0de'2026ULL);
  Coverage cov;
  for (int trial = 0; trial < 400; ++trial) {
    OpGraph g = random_graph(rng);
    INFO("trial " << trial << ": " << g.op_count() << " ops on " << g.resource_count() << " resources");
    check_graph(g, cov);
  }
  CHECK(cov.dependency_ties > 0);
  CHECK(cov.fifo_links > 0);
  CHECK(cov.shared_starts > 0);
  CHECK(cov.passed_over > 0);
}

TEST_CASE("critical path: zero-length FIFO ops sharing a start follow the order the link served them",
          "[critical_path][properties]") {
  // r (FIFO, latency 0): x (2) is served first (lowest id of the ops ready at 0), a (0, ready at 0) waits
  // behind it and runs at 2, then b (0), which needs a, runs at 2 too; y (1) on c needs a. Served order:
  // x, a, b. Sorted by start then id, b would come before a, and as b depends on a, a chain walked by that
  // order would loop: y <- a <- b <- a ... (b waited for a; a "waited" for b on the link). a's holder is x.
  OpGraph g;
  const auto r = g.add_resource("r", Discipline::Fifo), c = g.add_resource("c");
  const OpId x = g.add_op(r, 2), b = g.add_op(r, 0), a = g.add_op(r, 0), y = g.add_op(c, 1);
  g.add_dep(a, b);
  g.add_dep(a, y);
  Coverage cov;
  check_graph(g, cov);
  // By hand from the rules: y waited for a (done at 2), a for the link (x ended at 2), x for nothing.
  const auto chain = critical_path(g, run(g));
  REQUIRE(chain.size() == 3);
  CHECK((chain[0].op == x && chain[0].why == Why::Start));
  CHECK((chain[1].op == a && chain[1].why == Why::Resource));
  CHECK((chain[2].op == y && chain[2].why == Why::Dependency));
}
