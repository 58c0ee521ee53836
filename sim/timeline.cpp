#include "sim/timeline.hpp"

#include <algorithm>

namespace stepsim {

std::vector<Time> resource_busy(const OpGraph& g, const Timeline& /*t*/) {
  std::vector<Time> busy(g.resource_count(), 0);
  for (OpId op = 0; op < g.op_count(); ++op) busy[g.op_resource(op)] += g.op_duration(op);
  return busy;
}

namespace {
void sort_by_start(std::vector<Interval>& v) {  // ties: the lower op id first
  std::sort(v.begin(), v.end(),
            [](const Interval& a, const Interval& b) { return a.start != b.start ? a.start < b.start : a.op < b.op; });
}
}  // namespace

std::vector<Interval> resource_intervals(const OpGraph& g, const Timeline& t, ResourceId r) {
  std::vector<Interval> out;
  for (OpId op = 0; op < g.op_count(); ++op)
    if (g.op_resource(op) == r) out.push_back({t.start[op], t.end(g, op), op});
  sort_by_start(out);
  return out;
}

std::vector<std::vector<Interval>> all_resource_intervals(const OpGraph& g, const Timeline& t) {
  std::vector<std::vector<Interval>> out(g.resource_count());
  for (OpId op = 0; op < g.op_count(); ++op) out[g.op_resource(op)].push_back({t.start[op], t.end(g, op), op});
  for (auto& v : out) sort_by_start(v);
  return out;
}

}  // namespace stepsim
