// The engine against a direct transcription of its rules (engine.hpp): a binary heap of
// (time, kind, op id) events processed one by one, resources offered work in resource-id order
// after each time. The engine itself takes shortcuts (a radix heap handing out a whole time at
// once, unordered offers, packed records); on random graphs full of ties, zero durations and
// latencies both must give the same timeline, op for op.
#include <catch2/catch.hpp>

#include <queue>
#include <random>
#include <string>

#include <fmt/format.h>

#include "sim/engine.hpp"

using namespace stepsim;

namespace {

Timeline reference_run(OpGraph& g) {
  g.finalize();
  struct Event {
    Time time;
    OpId op;
    int kind;  // 0 = End, 1 = Done
    bool operator>(const Event& o) const {
      if (time != o.time) return time > o.time;
      if (kind != o.kind) return kind > o.kind;
      return op > o.op;
    }
  };
  struct Ready {
    Time ready;
    OpId op;
    bool operator>(const Ready& o) const { return ready != o.ready ? ready > o.ready : op > o.op; }
  };
  const auto n = static_cast<OpId>(g.op_count());
  const auto nr = g.resource_count();
  Timeline tl;
  tl.start.assign(n, -1);
  std::vector<std::uint32_t> pending = g.in_degrees();
  std::vector<OpId> cursor(nr);
  for (ResourceId r = 0; r < nr; ++r) cursor[r] = g.first_on(r);
  std::vector<bool> busy(nr, false);
  std::vector<std::priority_queue<Ready, std::vector<Ready>, std::greater<>>> fifo(nr);
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  const auto ready = [&](OpId op, Time now) {
    if (g.resource(g.op_resource(op)).discipline == Discipline::Fifo) fifo[g.op_resource(op)].push({now, op});
  };
  const auto offer = [&](Time now) {
    for (ResourceId r = 0; r < nr; ++r) {
      if (busy[r]) continue;
      OpId op = kNoOp;
      if (g.resource(r).discipline == Discipline::Fifo) {
        if (!fifo[r].empty()) {
          op = fifo[r].top().op;
          fifo[r].pop();
        }
      } else if (cursor[r] != kNoOp && pending[cursor[r]] == 0) {
        op = cursor[r];
      }
      if (op == kNoOp) continue;
      busy[r] = true;
      tl.start[op] = now;
      events.push({now + g.op_duration(op), op, 0});
    }
  };
  const auto done = [&](OpId op, Time now) {
    tl.makespan = std::max(tl.makespan, now);
    g.for_each_successor(op, [&](OpId s) {
      if (--pending[s] == 0) ready(s, now);
    });
  };
  for (OpId op = 0; op < n; ++op)
    if (pending[op] == 0) ready(op, 0);
  offer(0);
  while (!events.empty()) {
    const Time now = events.top().time;
    while (!events.empty() && events.top().time == now) {
      const Event e = events.top();
      events.pop();
      if (e.kind == 1) {
        done(e.op, now);
        continue;
      }
      const ResourceId r = g.op_resource(e.op);
      busy[r] = false;
      if (g.resource(r).discipline == Discipline::ProgramOrder) cursor[r] = g.next_on_resource(e.op);
      if (g.op_latency(e.op) == 0)
        done(e.op, now);
      else
        events.push({now + g.op_latency(e.op), e.op, 1});
    }
    offer(now);
  }
  return tl;
}

// Ops depend only on lower ids and run in id order on their resource, so every graph finishes.
OpGraph random_graph(std::mt19937& rng, int ops, int resources) {
  OpGraph g;
  std::uniform_int_distribution<int> coin(0, 99);
  std::uniform_int_distribution<int> res(0, resources - 1), dur(0, 3), lat(0, 2);
  for (int r = 0; r < resources; ++r) {
    const Discipline d = coin(rng) < 40 ? Discipline::Fifo : Discipline::ProgramOrder;
    // not "r" + to_string: GCC 12 warns falsely (-Wrestrict)
    g.add_resource(fmt::format("r{}", r), d, coin(rng) < 50 ? 0 : lat(rng));
  }
  for (int i = 0; i < ops; ++i) {
    const OpId op = g.add_op(static_cast<ResourceId>(res(rng)), dur(rng));
    if (op == 0) continue;
    std::uniform_int_distribution<OpId> before(op > 20 ? op - 20 : 0, op - 1);
    const int deps = coin(rng) % 4;
    for (int d = 0; d < deps; ++d) g.add_dep(before(rng), op);
  }
  return g;
}

}  // namespace

TEST_CASE("the engine gives the timeline its stated rules give, on random graphs with ties", "[engine]") {
  std::mt19937 rng(20240607);
  for (int trial = 0; trial < 300; ++trial) {
    const int ops = 1 + static_cast<int>(rng() % 400);
    const int resources = 1 + static_cast<int>(rng() % 12);
    OpGraph a = random_graph(rng, ops, resources);
    OpGraph b = a;
    const Timeline want = reference_run(a);
    const Timeline got = run(b);
    INFO("trial " << trial << ": " << ops << " ops on " << resources << " resources");
    REQUIRE(got.start == want.start);
    REQUIRE(got.makespan == want.makespan);
  }
}
