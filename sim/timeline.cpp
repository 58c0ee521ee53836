#include "sim/timeline.hpp"

#include <algorithm>

namespace stepsim {

std::vector<Time> resource_busy(const OpGraph& g, const Timeline& /*t*/) {
  std::vector<Time> busy(g.resource_count(), 0);
  for (ResourceId r = 0; r < g.resource_count(); ++r) busy[r] = g.busy(r);
  return busy;
}

namespace {
void sort_by_start(std::vector<Interval>& v) {  // ties: the lower op id first
  const auto before = [](const Interval& a, const Interval& b) {
    return a.start != b.start ? a.start < b.start : a.op < b.op;
  };
  if (!std::is_sorted(v.begin(), v.end(), before)) std::sort(v.begin(), v.end(), before);
}
}  // namespace

std::vector<Interval> resource_intervals(const OpGraph& g, const Timeline& t, ResourceId r) {
  // The resource's own chain, not every op of the graph; it is in the order the ops were added,
  // which a program-order resource runs them in: usually sorted already.
  std::vector<Interval> out;
  for (OpId op = g.first_on(r); op != kNoOp; op = g.next_on_resource(op))
    out.push_back({t.start[op], t.end(g, op), op});
  sort_by_start(out);
  return out;
}

std::vector<std::vector<Interval>> all_resource_intervals(const OpGraph& g, const Timeline& t) {
  std::vector<std::vector<Interval>> out(g.resource_count());
  for (OpId op = 0; op < g.op_count(); ++op) out[g.op_resource(op)].push_back({t.start[op], t.end(g, op), op});
  for (auto& v : out) sort_by_start(v);
  return out;
}

Time busy_union(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  // Merge the two start-ordered lists, extending the current run while the next interval
  // starts inside it.
  Time total = 0, run_start = 0, run_end = 0;
  bool open = false;
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    const Interval& next = j == b.size() || (i < a.size() && a[i].start <= b[j].start) ? a[i++] : b[j++];
    if (open && next.start <= run_end) {
      run_end = std::max(run_end, next.end);
      continue;
    }
    if (open) total += run_end - run_start;
    run_start = next.start;
    run_end = next.end;
    open = true;
  }
  return open ? total + (run_end - run_start) : total;
}

}  // namespace stepsim
