#include "sim/timeline.hpp"

#include <algorithm>

namespace stepsim {

std::vector<Time> resource_busy(const OpGraph& g, const Timeline& /*t*/) {
  std::vector<Time> busy(g.resource_count(), 0);
  for (OpId op = 0; op < g.op_count(); ++op) busy[g.op_resource(op)] += g.op_duration(op);
  return busy;
}

std::vector<Interval> resource_intervals(const OpGraph& g, const Timeline& t, ResourceId r) {
  std::vector<Interval> out;
  for (OpId op = 0; op < g.op_count(); ++op)
    if (g.op_resource(op) == r) out.push_back({t.start[op], t.end[op], op});
  std::sort(out.begin(), out.end(),
            [](const Interval& a, const Interval& b) { return a.start != b.start ? a.start < b.start : a.op < b.op; });
  return out;
}

}  // namespace stepsim
