#pragma once
// Timeline: what the engine decided. Start and end of every op; everything a report needs is
// derived from it and the graph, so exporters never re-run the engine.
#include <vector>

#include "sim/op_graph.hpp"

namespace stepsim {

struct Timeline {
  std::vector<Time> start;  // per op
  std::vector<Time> end;    // per op: start + duration (the resource is free again)
  Time makespan = 0;        // latest done time (end + latency) over all ops

  Time done(const OpGraph& g, OpId op) const { return end[op] + g.op_latency(op); }
};

// Time each resource spent serving ops (sum of durations; a resource never overlaps itself).
std::vector<Time> resource_busy(const OpGraph& g, const Timeline& t);

// One busy interval of a resource, in start order.
struct Interval {
  Time start, end;
  OpId op;
};
std::vector<Interval> resource_intervals(const OpGraph& g, const Timeline& t, ResourceId r);
// Every resource's intervals, [resource][k], in one pass over the ops (resource_intervals for each
// resource would read every op once per resource).
std::vector<std::vector<Interval>> all_resource_intervals(const OpGraph& g, const Timeline& t);

}  // namespace stepsim
