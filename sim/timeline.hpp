#pragma once
// Timeline: what the engine decided. The start of every op; its end (start + duration) and done
// time (end + its resource's latency) are read with the graph, so a large step keeps 8 bytes per
// op here. Everything a report needs is derived from it and the graph: exporters never re-run
// the engine.
#include <vector>

#include "sim/op_graph.hpp"

namespace stepsim {

struct Timeline {
  std::vector<Time> start;  // per op (every op has run: a run that cannot finish throws)
  Time makespan = 0;        // latest done time (end + latency) over all ops

  // When the op frees its resource.
  Time end(const OpGraph& g, OpId op) const { return start[op] + g.op_duration(op); }
  // When its successors may start.
  Time done(const OpGraph& g, OpId op) const { return end(g, op) + g.op_latency(op); }
};

// Time each resource spent serving ops (sum of durations; a resource never overlaps itself).
std::vector<Time> resource_busy(const OpGraph& g, const Timeline& t);

// One busy interval of a resource, in start order.
struct Interval {
  Time start, end;
  OpId op;
};
std::vector<Interval> resource_intervals(const OpGraph& g, const Timeline& t, ResourceId r);
// Every resource's intervals, [resource][k], in one sequential pass over the ops (what
// resource_intervals gives for each resource, walking its chain).
std::vector<std::vector<Interval>> all_resource_intervals(const OpGraph& g, const Timeline& t);
// The time at least one of two resources is busy, from their intervals in start order (a compute
// stream and the collectives that may run beside it).
Time busy_union(const std::vector<Interval>& a, const std::vector<Interval>& b);

}  // namespace stepsim
